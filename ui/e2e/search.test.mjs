// Search from anywhere (Ctrl+K) opens the message on its topic, scrolled to and highlighted;
// a reply version that is not shown is switched to first; Ctrl+F finds in the open topic.

import assert from 'node:assert/strict';
import {
  addTestkitProvider,
  byTestId,
  currentTopicId,
  e2eTest,
  lastAssistant,
  newTopicAndSend,
  typeAndEnter,
  useStack,
  waitUntil,
  words,
} from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

/** Sends a message in the open topic and waits for its scripted reply to be stored. */
async function turn(page, text, reply, first = false) {
  await stack.testkit.script({ chunks: reply, tokenDelayMs: 1 });
  if (first) await newTopicAndSend(page, text);
  else await typeAndEnter(page, text);
  await waitUntil('the reply is stored', async () => {
    const last = lastAssistant(page);
    return (await last.getAttribute('data-status')) === 'success' && (await last.innerText()).includes(reply.at(-1).trim());
  });
}

/** Whether any part of the element is inside the message list's visible area. */
function inView(locator) {
  return locator.evaluate((element) => {
    const list = element.closest('.message-list') ?? element.ownerDocument.documentElement;
    const box = element.getBoundingClientRect();
    const view = list.getBoundingClientRect();
    return box.bottom > view.top && box.top < view.bottom;
  });
}

e2eTest(stack, 'Ctrl+K search, click a result: its topic opens scrolled to the message, highlighted', async () => {
  const page = await stack.openApp();
  // The topic to find: the word is in its first reply, long turns follow it.
  await turn(page, 'Tell me about lighthouses', ['The keeper ate ', 'marmalade ', 'on toast. ', ...words(40, 'light')], true);
  const wanted = await currentTopicId(page);
  const wantedReply = await lastAssistant(page).getAttribute('data-message-id');
  for (let i = 0; i < 4; i += 1) await turn(page, `More please ${i}`, words(150, `more${i}x`));
  // Somewhere else when searching.
  await turn(page, 'An unrelated topic', words(20, 'other'), true);
  assert.notEqual(await currentTopicId(page), wanted);

  await page.keyboard.press('Control+k');
  await byTestId(page, 'search-input').waitFor();
  await page.keyboard.type('marmal');
  const result = byTestId(page, 'search-result').first();
  await result.waitFor();
  assert.equal(await byTestId(page, 'search-result').count(), 1);
  assert.equal(await result.getAttribute('data-message-id'), wantedReply);
  assert.equal(await result.locator('mark').first().innerText(), 'marmal', 'the match is marked in the snippet');

  await result.click();
  await byTestId(page, 'search-palette').waitFor({ state: 'detached' });
  await waitUntil('the topic is open', async () => (await currentTopicId(page)) === wanted);
  const message = page.locator(`[data-testid="message"][data-message-id="${wantedReply}"]`);
  await waitUntil('the message is highlighted', async () => (await message.getAttribute('data-search-hit')) === 'true');
  await waitUntil('the message is scrolled into view', () => inView(message));
});

e2eTest(stack, 'a result on a version not shown switches to it; arrows and Enter open it', async () => {
  const page = await stack.openApp();
  await turn(page, 'Name a fruit', ['The first answer is ', 'quinceberry.'], true);
  const first = await lastAssistant(page).getAttribute('data-message-id');
  await stack.testkit.script({ chunks: ['The second answer is ', 'elderflower.'], tokenDelayMs: 1 });
  await page.locator('.turn').last().locator('[data-testid="reply-retry"]').click();
  await waitUntil('the new version is shown', async () => (await lastAssistant(page).innerText()).includes('elderflower'));

  await page.keyboard.press('Control+Shift+F');
  await byTestId(page, 'search-input').fill('answer is');
  await waitUntil('both versions are found', async () => (await byTestId(page, 'search-result').count()) === 2);
  // Move to the version that is not shown, and open it with Enter.
  const ids = await byTestId(page, 'search-result').evaluateAll((items) => items.map((item) => item.getAttribute('data-message-id')));
  const steps = ids.indexOf(first);
  assert.ok(steps >= 0, 'the older version is among the results');
  for (let i = 0; i < steps; i += 1) await page.keyboard.press('ArrowDown');
  assert.equal(await page.locator('[data-testid="search-result"][aria-selected="true"]').getAttribute('data-message-id'), first);
  await page.keyboard.press('Enter');

  const message = page.locator(`[data-testid="message"][data-message-id="${first}"]`);
  await waitUntil('the older version is shown and highlighted', async () => (await message.getAttribute('data-search-hit')) === 'true');
  assert.match(await lastAssistant(page).innerText(), /quinceberry/);
});

e2eTest(stack, 'Ctrl+F finds in the open conversation, with next and previous', async () => {
  const page = await stack.openApp();
  await turn(page, 'Say banana twice', ['One banana, ', 'two Banana. ', 'Done.'], true);
  await page.keyboard.press('Control+f');
  await byTestId(page, 'find-input').waitFor();
  await page.keyboard.type('banana');
  // The user's message and the reply's two.
  await waitUntil('every match is counted', async () => (await byTestId(page, 'find-count').innerText()) === '1 of 3');
  await page.keyboard.press('Enter');
  assert.equal(await byTestId(page, 'find-count').innerText(), '2 of 3');
  await byTestId(page, 'find-previous').click();
  await byTestId(page, 'find-previous').click();
  assert.equal(await byTestId(page, 'find-count').innerText(), '3 of 3', 'previous wraps around');
  await page.keyboard.press('Escape');
  await byTestId(page, 'find-in-topic').waitFor({ state: 'detached' });
});
