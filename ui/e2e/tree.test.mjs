// The conversation as a tree: edit a sent message (a new branch, the old one a click
// away), Retry keeps every version (switch with ‹ › while one streams), fork a topic at
// any message, delete a version, and two windows see the same switch.

import assert from 'node:assert/strict';
import {
  addNamedTestkitProvider,
  addTestkitProvider,
  assistantMessages,
  assistantText,
  byTestId,
  currentTopicId,
  e2eTest,
  lastAssistant,
  newTopicAndSend,
  normalize,
  openNewTopic,
  replyText,
  sleep,
  topicItem,
  typeAndEnter,
  useStack,
  waitUntil,
  words,
} from './harness.mjs';

const stack = useStack({
  setup: async ({ server, testkit }) => {
    await addTestkitProvider(server, testkit);
    // A second model, for turns that several models answer.
    await addNamedTestkitProvider(server, testkit, 'Beta', 'beta');
  },
});

const userMessages = (page) => page.locator('[data-testid="message"][data-role="user"]');
const turn = (page, index) => page.locator('.turn').nth(index);
/** The `n/m` label beside the nth user message, or beside the nth turn's reply. */
const userVersion = (page, index) => turn(page, index).locator('[data-testid="user-actions"] [data-testid="version-label"]');
const replyVersion = (page, index) => turn(page, index).locator('.reply-actions [data-testid="version-label"]');
const replyActions = (page, index) => turn(page, index).locator('.reply-actions');

/** The text of each user message (without its time, version switcher or actions). */
async function userTexts(page) {
  return (await userMessages(page).locator('[data-testid="message-text"]').allInnerTexts()).map(normalize);
}

/** Sends `text`, its reply scripted as `reply`, and waits until that reply is stored. */
async function ask(page, text, reply) {
  await stack.testkit.script({ chunks: [reply], tokenDelayMs: 5 });
  const before = await userMessages(page).count();
  await typeAndEnter(page, text);
  await waitUntil('the message is shown', async () => (await userMessages(page).count()) === before + 1);
  await waitUntil(`"${reply}" is stored`, async () => normalize(await assistantText(page)) === reply && (await lastAssistant(page).getAttribute('data-status')) === 'success');
}

async function storedReply(page, text) {
  await waitUntil(`the reply "${text}" is stored`, async () => normalize(await assistantText(page)) === text && (await lastAssistant(page).getAttribute('data-status')) === 'success');
}

/** Retries the nth turn's reply; the new version is scripted as `chunks`. */
async function retry(page, index, chunks, tokenDelayMs = 5) {
  await stack.testkit.script({ chunks, tokenDelayMs });
  await replyActions(page, index).locator('[data-testid="reply-retry"]').click();
}

e2eTest(stack, 'editing a sent message starts a new branch; Cancel sends nothing; the old branch stays one ‹ › away', async () => {
  const page = await stack.openApp();
  await stack.testkit.script({ chunks: ['First answer.'], tokenDelayMs: 5 });
  await newTopicAndSend(page, 'Original question');
  await storedReply(page, 'First answer.');
  await ask(page, 'Follow-up', 'Second answer.');
  const asked = (await stack.testkit.requests()).length;

  // Esc (and Cancel) leave everything as it was.
  await turn(page, 0).locator('[data-testid="message-edit"]').click();
  const editor = byTestId(page, 'message-editor');
  assert.equal(await byTestId(page, 'message-edit-input').inputValue(), 'Original question');
  await byTestId(page, 'message-edit-input').fill('Not sent');
  await byTestId(page, 'message-edit-input').press('Escape');
  await editor.waitFor({ state: 'detached' });
  await turn(page, 0).locator('[data-testid="message-edit"]').click();
  await byTestId(page, 'message-edit-cancel').click();
  await editor.waitFor({ state: 'detached' });
  assert.deepEqual(await userTexts(page), ['Original question', 'Follow-up']);

  // Ctrl+Enter sends the new version: the branch below the edited message is replaced.
  await stack.testkit.script({ chunks: ['Edited ', 'answer.'], tokenDelayMs: 20 });
  await turn(page, 0).locator('[data-testid="message-edit"]').click();
  assert.equal(await byTestId(page, 'message-edit-input').inputValue(), 'Original question', 'the editor starts from the message, not a cancelled edit');
  await byTestId(page, 'message-edit-input').fill('Edited question');
  await byTestId(page, 'message-edit-input').press('Control+Enter');
  await editor.waitFor({ state: 'detached' });
  await storedReply(page, 'Edited answer.');
  assert.deepEqual(await userTexts(page), ['Edited question']);
  assert.equal(await assistantMessages(page).count(), 1);
  await waitUntil('the edited message shows 2/2', async () => (await userVersion(page, 0).textContent()) === '2/2');

  // The model was asked about the new branch only.
  const requests = await stack.testkit.requests();
  assert.equal(requests.length, asked + 1, 'Cancel sent nothing; Send asked once');
  const prompt = JSON.stringify(requests.at(-1));
  assert.ok(prompt.includes('Edited question'));
  assert.ok(!prompt.includes('Original question') && !prompt.includes('Follow-up') && !prompt.includes('Second answer'), 'the old branch is not in the prompt');

  // ‹: the old branch, whole; ›: the new one again.
  await turn(page, 0).locator('[data-testid="user-actions"] [data-testid="version-previous"]').click();
  await waitUntil('the old branch is shown', async () => JSON.stringify(await userTexts(page)) === JSON.stringify(['Original question', 'Follow-up']));
  assert.equal(await userVersion(page, 0).textContent(), '1/2');
  await storedReply(page, 'Second answer.');
  assert.deepEqual((await assistantMessages(page).locator('[data-testid="message-text"]').allInnerTexts()).map(normalize), ['First answer.', 'Second answer.']);
  await turn(page, 0).locator('[data-testid="user-actions"] [data-testid="version-next"]').click();
  await waitUntil('the new branch is shown again', async () => JSON.stringify(await userTexts(page)) === JSON.stringify(['Edited question']));
  await storedReply(page, 'Edited answer.');

  // The choice is stored: a reload shows the same branch.
  await page.reload();
  await waitUntil('the branch survives a reload', async () => JSON.stringify(await userTexts(page)) === JSON.stringify(['Edited question']));
  assert.equal(await userVersion(page, 0).textContent(), '2/2');
});

e2eTest(stack, "an edit keeps the message's files unless removed, and takes new ones", async () => {
  const page = await stack.openApp();
  await openNewTopic(page);
  await byTestId(page, 'attach-input').setInputFiles([
    { name: 'keep.txt', mimeType: 'text/plain', buffer: Buffer.from('Kept file: apples.') },
    { name: 'drop.txt', mimeType: 'text/plain', buffer: Buffer.from('Dropped file: pears.') },
  ]);
  await waitUntil('both files are chips', async () => (await byTestId(page, 'attachment-chip').count()) === 2);
  await stack.testkit.script({ chunks: ['Two files.'], tokenDelayMs: 5 });
  await typeAndEnter(page, 'Read these');
  await storedReply(page, 'Two files.');

  await turn(page, 0).locator('[data-testid="message-edit"]').click();
  const editor = byTestId(page, 'message-editor');
  const chips = editor.locator('[data-testid="attachment-chip"]');
  assert.deepEqual(await chips.evaluateAll((items) => items.map((item) => item.dataset.filename)), ['keep.txt', 'drop.txt']);
  await editor.locator('[data-testid="attachment-chip"][data-filename="drop.txt"] [data-testid="attachment-remove"]').click();
  await editor.locator('[data-testid="attach-input"]').setInputFiles({ name: 'new.txt', mimeType: 'text/plain', buffer: Buffer.from('New file: plums.') });
  await waitUntil('kept and new files are chips', async () => JSON.stringify(await chips.evaluateAll((items) => items.map((item) => item.dataset.filename))) === JSON.stringify(['keep.txt', 'new.txt']));
  await stack.testkit.script({ chunks: ['Kept and new.'], tokenDelayMs: 5 });
  await byTestId(page, 'message-edit-input').fill('Read these instead');
  await byTestId(page, 'message-edit-send').click();
  await storedReply(page, 'Kept and new.');

  const files = userMessages(page).last().locator('[data-testid="message-file"]');
  await waitUntil('the new version shows its files', async () => JSON.stringify(await files.evaluateAll((items) => items.map((item) => item.dataset.filename))) === JSON.stringify(['keep.txt', 'new.txt']));
  const prompt = JSON.stringify((await stack.testkit.requests()).at(-1));
  assert.ok(prompt.includes('Kept file: apples.') && prompt.includes('New file: plums.'), 'the kept and the new file go to the model');
  assert.ok(!prompt.includes('Dropped file: pears.'), 'the removed file does not');
});

e2eTest(stack, 'Retry keeps every version: 3/3, and ‹ › switches while the newest streams without stopping it', async () => {
  const page = await stack.openApp();
  await stack.testkit.script({ chunks: ['Answer one.'], tokenDelayMs: 5 });
  await newTopicAndSend(page, 'Answer me three times');
  await storedReply(page, 'Answer one.');
  assert.equal(await replyVersion(page, 0).count(), 0, 'one version: no ‹ ›');

  await retry(page, 0, ['Answer two.']);
  await storedReply(page, 'Answer two.');
  await waitUntil('2/2', async () => (await replyVersion(page, 0).textContent()) === '2/2');

  const slow = words(200, 'three');
  await retry(page, 0, slow, 30);
  await waitUntil('the third version streams, shown as 3/3', async () => (await assistantText(page)).includes('three5') && (await replyVersion(page, 0).textContent()) === '3/3');
  assert.equal(await assistantMessages(page).count(), 1, 'one reply on screen: versions share the column');

  // ‹ while the third streams: the second, finished; the topic stays busy.
  await replyActions(page, 0).locator('[data-testid="version-previous"]').click();
  await storedReply(page, 'Answer two.');
  assert.equal(await replyVersion(page, 0).textContent(), '2/3');
  await byTestId(page, 'stop-button').waitFor();
  await replyActions(page, 0).locator('[data-testid="version-previous"]').click();
  await storedReply(page, 'Answer one.');
  assert.equal(await replyVersion(page, 0).textContent(), '1/3');
  await sleep(400);

  // › › : the third again, live, further along than when we left it.
  await replyActions(page, 0).locator('[data-testid="version-next"]').click();
  await waitUntil('2/3', async () => (await replyVersion(page, 0).textContent()) === '2/3');
  await replyActions(page, 0).locator('[data-testid="version-next"]').click();
  await waitUntil('the third version is live again', async () => (await replyVersion(page, 0).textContent()) === '3/3' && (await assistantText(page)).includes('three'));
  const seen = normalize(await assistantText(page));
  assert.ok(normalize(slow.join('')).startsWith(seen), 'its own text, from the start');
  await waitUntil('it goes on streaming', async () => normalize(await assistantText(page)).length > seen.length);
  await storedReply(page, normalize(slow.join('')));
  assert.equal(await replyVersion(page, 0).textContent(), '3/3');
});

e2eTest(stack, 'several models: each column has its own versions, and switching one keeps its tab', async () => {
  const page = await stack.openApp(undefined, { viewport: { width: 760, height: 900 } });
  await openNewTopic(page);
  const picker = byTestId(page, 'model-select');
  await picker.locator('button').first().click();
  await picker.locator('input[data-model="beta"]').check();
  await page.keyboard.press('Escape');
  await waitUntil('both models are chosen', async () => (await picker.innerText()).includes('scripted + beta'));
  await stack.testkit.script([
    { chunks: ['Same first.'], tokenDelayMs: 5 },
    { chunks: ['Same first.'], tokenDelayMs: 5 },
  ]);
  await typeAndEnter(page, 'Both of you');
  const column = (model) => page.locator(`[data-testid="model-column"][data-model="${model}"]`);
  const tab = (model) => page.locator(`[data-testid="model-tab"][data-model="${model}"]`);
  const done = async (model) => (await column(model).locator('[data-testid="message"]').getAttribute('data-status')) === 'success';
  await waitUntil('both replies are stored', async () => (await done('scripted')) && (await done('beta')));

  await tab('beta').click();
  await stack.testkit.script({ chunks: ['Beta again.'], tokenDelayMs: 5 });
  await column('beta').locator('[data-testid="reply-retry"]').click();
  await waitUntil('beta shows its second version', async () => (await replyText(column('beta'))) === 'Beta again.' && (await done('beta')));
  const label = (model) => column(model).locator('[data-testid="version-label"]');
  await waitUntil('2/2 on beta', async () => (await label('beta').count()) === 1 && (await label('beta').textContent()) === '2/2');
  assert.equal(await label('scripted').count(), 0, 'the other column has one version');
  assert.equal(await byTestId(page, 'model-column').count(), 2);

  await column('beta').locator('[data-testid="version-previous"]').click();
  await waitUntil('beta shows its first version', async () => (await replyText(column('beta'))) === 'Same first.' && (await label('beta').textContent()) === '1/2');
  assert.equal(await tab('beta').getAttribute('aria-selected'), 'true', 'the tab chosen stays chosen');
  assert.ok(await column('beta').isVisible());
  assert.equal(await replyText(column('scripted')), 'Same first.');
});

e2eTest(stack, 'Fork from here opens a new topic with the path up to that message, saying where it came from', async () => {
  const page = await stack.openApp();
  await stack.testkit.script({ chunks: ['Fork me.'], tokenDelayMs: 5 });
  await newTopicAndSend(page, 'Start here');
  await storedReply(page, 'Fork me.');
  await ask(page, 'Then this', 'Later.');
  const origin = await currentTopicId(page);

  await replyActions(page, 0).locator('[data-testid="message-fork"]').click();
  const fork = await waitUntil('the fork is open', async () => {
    const id = await currentTopicId(page);
    return id !== origin ? id : undefined;
  });
  await topicItem(page, fork).waitFor();
  await waitUntil('the fork shows the path up to the reply', async () => JSON.stringify(await userTexts(page)) === JSON.stringify(['Start here']));
  await storedReply(page, 'Fork me.');
  const from = byTestId(page, 'topic-forked-from');
  assert.match(normalize(await from.innerText()), /^Forked from Start here/);

  // The two diverge: the fork goes on without the origin's later turn.
  await ask(page, 'Only in the fork', 'Forked answer.');
  const prompt = JSON.stringify((await stack.testkit.requests()).at(-1));
  assert.ok(prompt.includes('Fork me.') && !prompt.includes('Then this'), "the fork's prompt is its own path");

  // Back to the origin through the link: untouched.
  await byTestId(page, 'topic-forked-from-link').click();
  await waitUntil('the origin is open', async () => (await currentTopicId(page)) === origin);
  await waitUntil('the origin is as it was', async () => JSON.stringify(await userTexts(page)) === JSON.stringify(['Start here', 'Then this']));

  // Once the origin is deleted, the fork says so.
  await stack.server.api('topic_delete', { topicId: origin });
  await page.reload();
  await topicItem(page, fork).locator('button').first().click();
  await waitUntil('the fork says its origin is gone', async () => normalize(await byTestId(page, 'topic-forked-from').innerText()) === 'Forked from a deleted topic');
  assert.equal(await byTestId(page, 'topic-forked-from-link').count(), 0);
});

e2eTest(stack, 'Delete asks first; deleting the version shown shows its neighbour; deleting a message takes its turn', async () => {
  const page = await stack.openApp();
  await stack.testkit.script({ chunks: ['Keep me.'], tokenDelayMs: 5 });
  await newTopicAndSend(page, 'Two versions, then one');
  await storedReply(page, 'Keep me.');
  await retry(page, 0, ['Delete me.']);
  await storedReply(page, 'Delete me.');
  await waitUntil('2/2', async () => (await replyVersion(page, 0).textContent()) === '2/2');

  // Cancel (and Esc) keep it.
  await replyActions(page, 0).locator('[data-testid="message-delete"]').click();
  const dialog = page.getByRole('alertdialog', { name: 'Confirm delete' });
  assert.match(await dialog.innerText(), /Delete this version of the reply\?/);
  await byTestId(page, 'message-delete-cancel').click();
  await dialog.waitFor({ state: 'detached' });
  await replyActions(page, 0).locator('[data-testid="message-delete"]').click();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  assert.equal(await replyVersion(page, 0).textContent(), '2/2');

  await replyActions(page, 0).locator('[data-testid="message-delete"]').click();
  await byTestId(page, 'message-delete-confirm').click();
  await storedReply(page, 'Keep me.');
  await waitUntil('one version left: no ‹ ›', async () => (await replyVersion(page, 0).count()) === 0);
  await page.reload();
  await storedReply(page, 'Keep me.');
  assert.equal(await replyVersion(page, 0).count(), 0, 'the deleted version is gone for good');

  // A second turn, then delete the first message: everything after it on the branch goes.
  await ask(page, 'Second turn', 'Second reply.');
  await turn(page, 0).locator('[data-testid="user-actions"] [data-testid="message-delete"]').click();
  assert.match(await dialog.innerText(), /everything after it/);
  await byTestId(page, 'message-delete-confirm').click();
  await waitUntil('the conversation is empty', async () => (await userMessages(page).count()) === 0 && (await assistantMessages(page).count()) === 0);
});

e2eTest(stack, 'Delete while a reply of the branch streams is refused, saying why, and changes nothing', async () => {
  const page = await stack.openApp();
  await stack.testkit.script({ chunks: ['Done.'], tokenDelayMs: 5 });
  await newTopicAndSend(page, 'First');
  await storedReply(page, 'Done.');
  await stack.testkit.script({ chunks: words(200, 'busy'), tokenDelayMs: 30 });
  await typeAndEnter(page, 'Second');
  await waitUntil('the second reply streams', async () => (await assistantText(page)).includes('busy3'));

  await turn(page, 0).locator('[data-testid="user-actions"] [data-testid="message-delete"]').click();
  await byTestId(page, 'message-delete-confirm').click();
  const notice = turn(page, 0).getByRole('alert');
  await notice.waitFor();
  assert.match(await notice.innerText(), /still being written/i);
  assert.deepEqual(await userTexts(page), ['First', 'Second']);
  await byTestId(page, 'stop-button').click();
});

e2eTest(stack, 'two windows on a topic see the same version switch', async () => {
  const topic = await stack.server.api('topic_create', { title: 'Shared versions' });
  const url = `${stack.server.appUrl}&topic=${topic.id}`;
  const left = await stack.openApp(url);
  const right = await stack.openApp(url);
  for (const page of [left, right]) await byTestId(page, 'composer-input').waitFor();

  await ask(left, 'Same question', 'Old answer.');
  await retry(left, 0, ['New answer.']);
  await storedReply(left, 'New answer.');
  for (const page of [left, right]) {
    await waitUntil('2/2 in both windows', async () => (await replyVersion(page, 0).textContent()) === '2/2');
    await storedReply(page, 'New answer.');
  }

  await replyActions(left, 0).locator('[data-testid="version-previous"]').click();
  for (const page of [left, right]) {
    await waitUntil('both windows show the first version', async () => (await replyVersion(page, 0).textContent()) === '1/2');
    await storedReply(page, 'Old answer.');
  }
  // And back, from the other window.
  await replyActions(right, 0).locator('[data-testid="version-next"]').click();
  for (const page of [left, right]) {
    await waitUntil('both windows show the second version', async () => (await replyVersion(page, 0).textContent()) === '2/2');
    await storedReply(page, 'New answer.');
  }
});
