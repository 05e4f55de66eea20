// "Always for this topic" and "Always" on an approval card: the rule each saves, where the
// next identical call then runs without a card, where it still asks, and the rules in
// Settings. (A file of its own: the rules it saves would change the other approval tests.)

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  addTestkitProvider,
  byTestId,
  e2eTest,
  lastAssistant,
  normalize,
  openNewTopic,
  setTopicWorkspace,
  tempWorkspace,
  typeAndEnter,
  useStack,
  waitUntil,
} from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

/** The model writes `file`, then says `after`. */
function writeThenSay(file, content, after) {
  return [
    { chunks: [], toolCalls: [{ name: 'write_file', arguments: JSON.stringify({ path: file, content }) }] },
    { chunks: [after] },
  ];
}

async function fileIn(folder, name) {
  return readFile(path.join(folder, name), 'utf8').catch(() => undefined);
}

async function replySettles(page, text) {
  await waitUntil(`the reply "${text}" is stored`, async () => {
    const reply = lastAssistant(page);
    return (await reply.getAttribute('data-status')) === 'success' && normalize(await reply.innerText()).includes(text);
  });
}

/** Sends `message` in a new topic with `folder` as its workspace; returns the topic's id. */
async function inNewTopic(page, folder, message) {
  const topicId = await openNewTopic(page);
  await setTopicWorkspace(page, folder);
  await typeAndEnter(page, message);
  return topicId;
}

async function askedIn(topicId) {
  return stack.server.api('approvals_list', { topicId, all: true });
}

e2eTest(stack, '"Always for this topic" stops the asking in that topic only; "Always" everywhere; both rules are listed', async () => {
  const page = await stack.openApp();
  const folder = await tempWorkspace();
  await stack.testkit.reset();
  await stack.testkit.script([
    ...writeThenSay('one.md', '1', 'Wrote one.'),
    ...writeThenSay('two.md', '2', 'Wrote two.'),
    ...writeThenSay('three.md', '3', 'Wrote three.'),
    ...writeThenSay('four.md', '4', 'Wrote four.'),
  ]);

  const first = await inNewTopic(page, folder, 'Write one (always here)');
  const card = page.locator('[data-testid="approval-card"]');
  await card.locator('[data-testid="approval-allow-topic"]').click();
  await replySettles(page, 'Wrote one.');
  assert.equal(await fileIn(folder, 'one.md'), '1');

  // The same call again in the same topic: no card, it just runs.
  await typeAndEnter(page, 'Write two (same topic)');
  await replySettles(page, 'Wrote two.');
  assert.equal(await fileIn(folder, 'two.md'), '2');
  assert.equal((await askedIn(first)).length, 1, 'only the first call asked in this topic');
  assert.equal(await byTestId(page, 'approval-card').count(), 0);

  // Another topic still asks; "Always (everywhere)" there.
  const second = await inNewTopic(page, folder, 'Write three (another topic)');
  await card.waitFor();
  assert.equal(await fileIn(folder, 'three.md'), undefined);
  await card.locator('[data-testid="approval-allow-global"]').click();
  await replySettles(page, 'Wrote three.');
  assert.equal((await askedIn(second)).length, 1);

  // And now any topic runs it without asking.
  const third = await inNewTopic(page, folder, 'Write four (anywhere)');
  await replySettles(page, 'Wrote four.');
  assert.equal(await fileIn(folder, 'four.md'), '4');
  assert.deepEqual(await askedIn(third), [], 'no card in a third topic');

  // Settings lists both rules, each with its reach.
  await byTestId(page, 'settings-button').click();
  await page.locator('[data-testid="settings-tab"][data-section="rules"]').click();
  const summaries = page.locator('[data-testid="rule-item"] [data-testid="rule-summary"]');
  await waitUntil('both rules are listed', async () => (await summaries.count()) === 2);
  const listed = (await summaries.allInnerTexts()).map(normalize).sort();
  assert.deepEqual(listed, ['write_file → allow, everywhere', 'write_file → allow, in “Write one (always here)”']);
  const audit = await stack.server.api('tool_audit_list', {});
  assert.deepEqual(
    audit.filter((entry) => entry.actor.startsWith('rule:')).map((entry) => entry.topicId),
    [third, first],
    'the later calls were allowed by the rules, newest first',
  );
});
