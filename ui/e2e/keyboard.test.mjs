// Keyboard shortcuts: the sheet (Ctrl/Cmd+/) lists them all with this platform's keys, and
// each does what the sheet says: new topic, previous/next topic, settings, search, the
// message box taking the focus (also when a topic opens), Esc stopping a reply (after
// whatever menu is open has taken its Esc), ↑ editing the last message.

import assert from 'node:assert/strict';
import {
  addTestkitProvider,
  assistantText,
  byTestId,
  currentTopicId,
  e2eTest,
  lastAssistant,
  newTopicAndSend,
  normalize,
  openNewTopic,
  typeAndEnter,
  useStack,
  waitUntil,
  words,
} from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

/** The test id of the focused element (`composer-input` for the message box). */
const focused = (page) =>
  page.locator('html').evaluate((root) => {
    const active = root.ownerDocument.activeElement;
    return active?.getAttribute('data-testid') ?? active?.tagName;
  });

const composerFocused = (page) => waitUntil('the message box has the focus', async () => (await focused(page)) === 'composer-input');

/** Sends a message and waits for its scripted reply to end. */
async function sendAndWait(page, text, reply) {
  await stack.testkit.script({ chunks: reply, tokenDelayMs: 1 });
  await typeAndEnter(page, text);
  await waitUntil('the reply is stored', async () => {
    const last = lastAssistant(page);
    return (await last.count()) > 0 && (await last.getAttribute('data-status')) === 'success' && normalize(await assistantText(page)) === normalize(reply.join(''));
  });
}

/** Every shortcut, in the sheet's order. */
const ALL_SHORTCUTS = [
  'shortcuts',
  'search',
  'settings',
  'toggle-sidebar',
  'new-topic',
  'previous-topic',
  'next-topic',
  'close-sidebar',
  'find',
  'focus-composer',
  'stop-reply',
  'edit-last',
  'send',
  'newline',
  'edit-send',
  'edit-cancel',
];

/** The keycaps of one shortcut's row in the sheet, each binding as a list of keys. */
function sheetKeys(page, id) {
  return page
    .locator(`[data-testid="shortcut-row"][data-shortcut="${id}"] [data-testid="shortcut-keys"]`)
    .evaluateAll((bindings) => bindings.map((binding) => [...binding.querySelectorAll('kbd')].map((kbd) => kbd.textContent)));
}

e2eTest(stack, 'Ctrl+/ opens the shortcuts sheet: every shortcut, grouped, with Ctrl; Esc closes it and the focus goes back', async () => {
  const page = await stack.openApp();
  await openNewTopic(page);
  await composerFocused(page);
  await byTestId(page, 'composer-input').fill('half a thought');

  await page.keyboard.press('Control+/');
  const sheet = byTestId(page, 'shortcuts-sheet');
  await sheet.waitFor();
  assert.equal(await byTestId(page, 'composer-input').inputValue(), 'half a thought', 'the key typed nothing');
  assert.deepEqual(
    await byTestId(page, 'shortcut-row').evaluateAll((rows) => rows.map((row) => row.dataset.shortcut)),
    ALL_SHORTCUTS,
  );
  assert.deepEqual(
    await byTestId(page, 'shortcuts-group').evaluateAll((groups) => groups.map((group) => group.querySelector('h3').textContent)),
    ['General', 'Topics', 'Conversation', 'Message box', 'Editing a sent message'],
  );
  assert.deepEqual(await sheetKeys(page, 'new-topic'), [['Ctrl', 'Shift', 'O']]);
  assert.deepEqual(await sheetKeys(page, 'search'), [['Ctrl', 'K'], ['Ctrl', 'Shift', 'F']]);
  assert.deepEqual(await sheetKeys(page, 'previous-topic'), [['Alt', '↑']]);
  assert.deepEqual(await sheetKeys(page, 'newline'), [['Shift', 'Enter']]);
  assert.match(await page.locator('[data-testid="shortcut-row"][data-shortcut="edit-last"]').innerText(), /Edit your last message/);

  await page.keyboard.press('Escape');
  await sheet.waitFor({ state: 'detached' });
  await composerFocused(page);
  assert.equal(await byTestId(page, 'composer-input').inputValue(), 'half a thought');

  // The sidebar's button opens it too, and a click outside closes it.
  await byTestId(page, 'shortcuts-button').click();
  await sheet.waitFor();
  await page.mouse.click(5, 5);
  await sheet.waitFor({ state: 'detached' });
});

e2eTest(stack, 'on macOS the sheet and the tooltips show ⌘ ⇧ ⌥', async () => {
  const context = await stack.browser.newContext({ viewport: { width: 1200, height: 800 } });
  await context.addInitScript(() => Object.defineProperty(Navigator.prototype, 'platform', { get: () => 'MacIntel' }));
  const page = stack.track(await context.newPage());
  await page.goto(stack.server.appUrl);
  await byTestId(page, 'new-topic-button').waitFor();
  assert.equal(await byTestId(page, 'new-topic-button').getAttribute('title'), 'New topic (⇧⌘O)');
  // Cmd is the Meta key.
  await page.keyboard.press('Meta+/');
  await byTestId(page, 'shortcuts-sheet').waitFor();
  assert.deepEqual(await sheetKeys(page, 'new-topic'), [['⇧', '⌘', 'O']]);
  assert.deepEqual(await sheetKeys(page, 'next-topic'), [['⌥', '↓']]);
  assert.deepEqual(await sheetKeys(page, 'settings'), [['⌘', ',']]);
});

e2eTest(stack, 'a topic opens with the message box focused; Shift+Esc and / bring the focus back; / types in the box', async () => {
  const page = await stack.openApp();
  await openNewTopic(page);
  await composerFocused(page);

  // Somewhere else: a button in the sidebar.
  await byTestId(page, 'search-button').focus();
  await page.keyboard.press('/');
  await composerFocused(page);
  assert.equal(await byTestId(page, 'composer-input').inputValue(), '', 'the / that moved the focus was not typed');

  await byTestId(page, 'search-button').focus();
  await page.keyboard.press('Shift+Escape');
  await composerFocused(page);

  // In the box, a bare / is text.
  await page.keyboard.type('a/b');
  assert.equal(await byTestId(page, 'composer-input').inputValue(), 'a/b');
});

e2eTest(stack, 'Ctrl+Shift+O opens a new topic, ready to type; Ctrl+, opens settings; Ctrl+K searches', async () => {
  const page = await stack.openApp();
  await newTopicAndSend(page, 'An old question');
  const before = await currentTopicId(page);

  await page.keyboard.press('Control+Shift+O');
  await waitUntil('a new topic is open', async () => (await currentTopicId(page)) !== before);
  await page.locator('.chat .empty-chat').waitFor();
  await composerFocused(page);

  await page.keyboard.press('Control+,');
  await byTestId(page, 'settings').waitFor();
  await byTestId(page, 'settings-close').click();

  await page.keyboard.press('Control+k');
  await byTestId(page, 'search-input').waitFor();
  // The topic's message box shows again after the search box opened: it leaves the focus there.
  await byTestId(page, 'composer-input').waitFor();
  assert.equal(await focused(page), 'search-input');
  // Shortcuts other than search and the sheet wait while a dialog is open.
  await page.keyboard.press('Control+,');
  await page.keyboard.press('Escape');
  await byTestId(page, 'search-palette').waitFor({ state: 'detached' });
  assert.equal(await byTestId(page, 'settings').count(), 0, 'Ctrl+, did nothing under the search box');
});

e2eTest(stack, 'Alt+↓ and Alt+↑ go to the next and previous topic of the sidebar, from the message box too', async () => {
  for (const title of ['Alt first', 'Alt second', 'Alt third']) await stack.server.api('topic_create', { title });
  const page = await stack.openApp();
  await byTestId(page, 'topic-item').first().waitFor();
  const order = await byTestId(page, 'topic-item').evaluateAll((items) => items.map((item) => item.dataset.topicId));
  assert.ok(order.length >= 3);
  await page.locator(`[data-testid="topic-item"][data-topic-id="${order[0]}"] .topic-title`).click();
  await waitUntil('the first topic is open', async () => (await currentTopicId(page)) === order[0]);
  const shown = (id) => waitUntil(`topic ${id} is open and marked`, async () => {
    const current = await page.locator('.topic-title[aria-current="page"]').evaluate((title) => title.closest('[data-topic-id]').dataset.topicId);
    return (await currentTopicId(page)) === id && current === id;
  });

  await page.keyboard.press('Alt+ArrowDown');
  await shown(order[1]);
  // The topic opened with the box focused: the next press comes from there.
  await composerFocused(page);
  await page.keyboard.press('Alt+ArrowDown');
  await shown(order[2]);
  await page.keyboard.press('Alt+ArrowUp');
  await shown(order[1]);
  await page.keyboard.press('Alt+ArrowUp');
  await shown(order[0]);
  // At the top it stays.
  await page.keyboard.press('Alt+ArrowUp');
  await shown(order[0]);
});

e2eTest(stack, 'Esc stops the reply being written, after an open menu has taken its own Esc', async () => {
  const page = await stack.openApp();
  await openNewTopic(page);
  await stack.testkit.script({ chunks: words(400, 'slow'), tokenDelayMs: 30 });
  await typeAndEnter(page, 'Count slowly');
  await waitUntil('the reply is streaming', async () => (await assistantText(page)).includes('slow5'));

  // A menu is open: Esc closes it, and the reply goes on.
  await byTestId(page, 'topic-settings-button').click();
  await byTestId(page, 'topic-settings').waitFor();
  await page.keyboard.press('Escape');
  await byTestId(page, 'topic-settings').waitFor({ state: 'detached' });
  const after = normalize(await assistantText(page)).length;
  await waitUntil('the reply still grows', async () => normalize(await assistantText(page)).length > after);
  assert.equal(await byTestId(page, 'stop-button').isVisible(), true);

  // From the message box, Esc stops it.
  await page.keyboard.press('Shift+Escape');
  await composerFocused(page);
  await page.keyboard.press('Escape');
  await lastAssistant(page).locator('[data-testid="message-stopped"]').waitFor();
  await byTestId(page, 'send-button').waitFor();
  assert.equal(await lastAssistant(page).getAttribute('data-status'), 'paused');
  const stopped = normalize(await assistantText(page));
  assert.ok(stopped.length < normalize(words(400, 'slow').join('')).length, 'the reply did not run to its end');
});

e2eTest(stack, '↑ in the empty message box edits the last message; Esc cancels back to the box; Ctrl+Enter sends the new version', async () => {
  const page = await stack.openApp();
  await openNewTopic(page);
  await sendAndWait(page, 'First question', ['First ', 'answer.']);
  await sendAndWait(page, 'Second question', ['Second ', 'answer.']);
  await composerFocused(page);

  // With text in the box, ↑ is the box's own.
  await page.keyboard.type('draft');
  await page.keyboard.press('ArrowUp');
  assert.equal(await byTestId(page, 'message-editor').count(), 0);
  await byTestId(page, 'composer-input').fill('');

  await page.keyboard.press('ArrowUp');
  const editor = byTestId(page, 'message-editor');
  await editor.waitFor();
  assert.equal(await byTestId(page, 'message-edit-input').inputValue(), 'Second question', 'the last message is the one edited');
  assert.equal(await focused(page), 'message-edit-input');
  // Esc is the editor's: it cancels, and the focus goes back to the box.
  await page.keyboard.press('Escape');
  await editor.waitFor({ state: 'detached' });
  await composerFocused(page);

  await page.keyboard.press('ArrowUp');
  await editor.waitFor();
  await byTestId(page, 'message-edit-input').fill('Second question, better');
  await stack.testkit.script({ chunks: ['Better ', 'answer.'], tokenDelayMs: 1 });
  await page.keyboard.press('Control+Enter');
  await editor.waitFor({ state: 'detached' });
  const users = page.locator('[data-testid="message"][data-role="user"]');
  await waitUntil('the new version is shown', async () => normalize(await users.last().innerText()).includes('Second question, better'));
  await waitUntil('its reply came', async () => normalize(await assistantText(page)) === 'Better answer.');
  assert.equal(await users.count(), 2);
  await composerFocused(page);
});
