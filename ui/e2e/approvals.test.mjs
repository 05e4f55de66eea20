// Tool calls that wait for the user: the approval card in the conversation, answered
// once (double clicks, reloads and server restarts included), denied with a reason the
// model hears, allowed with edited arguments, and reachable from the sidebar's inbox.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  TOKEN,
  addTestkitProvider,
  byTestId,
  currentTopicId,
  e2eTest,
  lastAssistant,
  normalize,
  openNewTopic,
  setTopicWorkspace,
  tempWorkspace,
  testkitRequests,
  topicItem,
  typeAndEnter,
  useStack,
  waitUntil,
} from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

/** A reply that only calls `write_file`, then the reply the model gives after the result. */
function writeThenSay(file, content, after) {
  return [
    { chunks: [], toolCalls: [{ name: 'write_file', arguments: JSON.stringify({ path: file, content }) }] },
    { chunks: after.split(/(?<= )/) },
  ];
}

async function fileIn(folder, name) {
  return readFile(path.join(folder, name), 'utf8').catch(() => undefined);
}

/** The chat requests that carry `marker` (the user's message of one test), oldest first. */
async function chatRequestsWith(marker) {
  const requests = await testkitRequests(stack.testkit);
  return requests.filter((request) => request.path.endsWith('/chat/completions') && JSON.stringify(request.body).includes(marker));
}

function toolMessages(body) {
  return body.messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
}

/** A topic with its own workspace, and a message whose reply asks to write a file. */
async function askForWrite(page, { file = 'notes.md', content = 'hello', after = 'Wrote the note.', message }) {
  const folder = await tempWorkspace();
  await stack.testkit.reset();
  await stack.testkit.script(writeThenSay(file, content, after));
  const topicId = await openNewTopic(page);
  await setTopicWorkspace(page, folder);
  await typeAndEnter(page, message);
  const card = page.locator('[data-testid="approval-card"]');
  await card.waitFor();
  return { folder, topicId, card };
}

async function replySettles(page, text) {
  await waitUntil('the reply goes on after the answer and is stored', async () => {
    const reply = lastAssistant(page);
    return (await reply.getAttribute('data-status')) === 'success' && normalize(await reply.innerText()).includes(text);
  });
}

e2eTest(stack, 'a write waits on its card with a diff; Allow once writes the file once and the reply goes on', async () => {
  const page = await stack.openApp();
  const { folder, topicId, card } = await askForWrite(page, { message: 'Write a note (allow once)' });

  // The card shows the arguments and what would change, and nothing is written yet.
  assert.match(await card.locator('[data-testid="approval-arguments"]').innerText(), /"path": "notes.md"/);
  await card.locator('[data-testid="approval-diff"] .diff-line.add', { hasText: 'hello' }).waitFor();
  assert.equal(await fileIn(folder, 'notes.md'), undefined);
  await topicItem(page, topicId).locator('[data-testid="topic-approval"]').waitFor();
  assert.equal(await lastAssistant(page).getAttribute('data-status'), 'paused');
  assert.equal(await byTestId(page, 'reply-continue').count(), 0, 'no Continue while a call waits for an answer');
  await byTestId(page, 'composer-approval-note').waitFor();

  await card.locator('[data-testid="approval-allow-once"]').click();
  await replySettles(page, 'Wrote the note.');
  assert.equal(await fileIn(folder, 'notes.md'), 'hello');
  const tool = lastAssistant(page).locator('[data-testid="tool-card"]');
  assert.equal(await tool.getAttribute('data-phase'), 'done');
  assert.match(await tool.locator('[data-testid="tool-output"]').innerText(), /created notes\.md/);
  await topicItem(page, topicId).locator('[data-testid="topic-approval"]').waitFor({ state: 'detached' });
  assert.equal(await byTestId(page, 'approval-card').count(), 0);

  const chats = await chatRequestsWith('Write a note (allow once)');
  assert.equal(chats.length, 2, 'one model call for the question, one after the answer');
  assert.deepEqual(toolMessages(chats[1].body), ['created notes.md (5 bytes)']);
  assert.deepEqual(
    page.consoleLines.filter((line) => line.startsWith('[pageerror]') || line.startsWith('[error]')),
    [],
    'no errors in the page',
  );
});

e2eTest(stack, 'a double click on Allow once sends one answer and runs the call once', async () => {
  const page = await stack.openApp();
  const answers = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/api/tool_approval_respond')) answers.push(request.postDataJSON());
  });
  const { folder, topicId, card } = await askForWrite(page, { file: 'twice.md', content: 'once', message: 'Write twice.md (double click)' });
  await card.locator('[data-testid="approval-allow-once"]').dblclick();
  await replySettles(page, 'Wrote the note.');
  assert.equal(await fileIn(folder, 'twice.md'), 'once');
  assert.equal(answers.length, 1, 'the page sent one answer');
  assert.equal(answers[0].decision, 'approve');

  const approvals = await stack.server.api('approvals_list', { topicId, all: true });
  assert.deepEqual(
    approvals.map((approval) => approval.state),
    ['approved'],
  );
  const audit = await stack.server.api('tool_audit_list', { topicId });
  assert.deepEqual(
    audit.map((entry) => [entry.actor, entry.decision]),
    [
      ['user', 'allow'],
      ['default', 'ask'],
    ],
    'one answer recorded',
  );
  const chats = await chatRequestsWith('Write twice.md (double click)');
  assert.equal(chats.length, 2);
  assert.equal(toolMessages(chats[1].body).length, 1, 'the model got one result');

  // The audit log in Settings shows the same, newest first.
  await byTestId(page, 'settings-button').click();
  await page.locator('[data-testid="settings-tab"][data-section="audit"]').click();
  const rows = page.locator(`[data-testid="audit-row"][data-tool-call-id="${audit[0].toolCallId}"]`);
  await rows.first().waitFor();
  assert.deepEqual(await rows.evaluateAll((list) => list.map((row) => [row.dataset.actor, row.dataset.decision])), [
    ['user', 'allow'],
    ['default', 'ask'],
  ]);
});

e2eTest(stack, 'after a reload the card is still there and answering it works', async () => {
  const page = await stack.openApp();
  const { folder } = await askForWrite(page, { file: 'reloaded.md', content: 'after reload', message: 'Write after a reload' });
  await page.reload();
  const card = page.locator('[data-testid="approval-card"]');
  await card.locator('[data-testid="approval-diff"]').waitFor();
  await card.locator('[data-testid="approval-allow-once"]').click();
  await replySettles(page, 'Wrote the note.');
  assert.equal(await fileIn(folder, 'reloaded.md'), 'after reload');
});

e2eTest(stack, 'after a server restart the card is still there and answering it continues the reply', async () => {
  const page = await stack.openApp();
  const { folder, topicId } = await askForWrite(page, {
    file: 'restart.md',
    content: 'survived',
    after: 'Written after the restart.',
    message: 'Write across a restart',
  });
  await page.context().close();

  const server = await stack.restartServer();
  const fresh = await stack.openApp(`${server.origin}/#token=${TOKEN}&topic=${topicId}`);
  const card = fresh.locator('[data-testid="approval-card"]');
  await card.locator('[data-testid="approval-diff"]').waitFor();
  await topicItem(fresh, topicId).locator('[data-testid="topic-approval"]').waitFor();
  await card.locator('[data-testid="approval-allow-once"]').click();
  await replySettles(fresh, 'Written after the restart.');
  assert.equal(await fileIn(folder, 'restart.md'), 'survived');
});

e2eTest(stack, 'Deny with a reason: nothing is written and the model is told why', async () => {
  const page = await stack.openApp();
  const { folder, card } = await askForWrite(page, {
    file: 'secret.md',
    content: 'nope',
    after: 'Understood, I will not.',
    message: 'Write secret.md (deny)',
  });
  await card.locator('[data-testid="approval-deny"]').click();
  await card.locator('[data-testid="approval-deny-reason"]').fill('not that file');
  await card.locator('[data-testid="approval-deny-confirm"]').click();
  await replySettles(page, 'Understood, I will not.');
  assert.equal(await fileIn(folder, 'secret.md'), undefined);
  assert.equal(await lastAssistant(page).locator('[data-testid="tool-card"]').getAttribute('data-phase'), 'denied');

  const chats = await chatRequestsWith('Write secret.md (deny)');
  assert.equal(chats.length, 2);
  assert.deepEqual(toolMessages(chats[1].body), ['The user denied this tool call. Their reason: not that file']);
});

e2eTest(stack, 'Edit arguments: invalid JSON and arguments that do not fit are refused inline, then the edited call runs instead', async () => {
  const page = await stack.openApp();
  const { folder, topicId, card } = await askForWrite(page, {
    file: 'original.md',
    content: "model's text",
    message: 'Write original.md (edit)',
  });
  await card.locator('[data-testid="approval-edit"]').click();
  const editor = card.locator('[data-testid="approval-edit-input"]');
  await editor.fill('{"path": "edited.md", ');
  await card.locator('[data-testid="approval-edit-confirm"]').click();
  await card.locator('[data-testid="approval-edit-error"]').waitFor();
  const pending = await stack.server.api('approvals_list', { topicId });
  assert.equal(pending.length, 1, 'nothing was sent for the invalid JSON');

  // Valid JSON the tool cannot take: the backend says what does not fit, the card stays.
  await editor.fill(JSON.stringify({ path: 'edited.md' }));
  await card.locator('[data-testid="approval-edit-confirm"]').click();
  const problem = card.locator('[data-testid="approval-edit-error"]');
  await waitUntil('the schema problem is shown at the editor', async () => /do not fit write_file.*content/.test(normalize(await problem.innerText().catch(() => ''))));
  assert.equal((await stack.server.api('approvals_list', { topicId })).length, 1, 'the call still waits');
  assert.equal(await fileIn(folder, 'edited.md'), undefined);

  await editor.fill(JSON.stringify({ path: 'edited.md', content: 'my text' }, null, 2));
  assert.equal(await problem.count(), 0, 'the problem goes once the arguments change');
  await card.locator('[data-testid="approval-edit-confirm"]').click();
  await replySettles(page, 'Wrote the note.');
  assert.equal(await fileIn(folder, 'edited.md'), 'my text');
  assert.equal(await fileIn(folder, 'original.md'), undefined);
  const args = await lastAssistant(page).locator('[data-testid="tool-arguments"] pre').textContent();
  assert.match(args ?? '', /edited\.md/, 'the stored call shows what ran');
});

e2eTest(stack, 'several calls waiting: Allow all answers them and the reply goes on once', async () => {
  const page = await stack.openApp();
  const folder = await tempWorkspace();
  await stack.testkit.reset();
  await stack.testkit.script([
    {
      chunks: [],
      toolCalls: [
        { name: 'write_file', arguments: JSON.stringify({ path: 'a.md', content: 'A' }) },
        { name: 'write_file', arguments: JSON.stringify({ path: 'b.md', content: 'B' }) },
      ],
    },
    { chunks: ['Both ', 'written.'] },
  ]);
  await openNewTopic(page);
  await setTopicWorkspace(page, folder);
  await typeAndEnter(page, 'Write a and b');
  await waitUntil('both cards are shown', async () => (await byTestId(page, 'approval-card').count()) === 2);
  await byTestId(page, 'approvals-allow-all').click();
  await replySettles(page, 'Both written.');
  assert.equal(await fileIn(folder, 'a.md'), 'A');
  assert.equal(await fileIn(folder, 'b.md'), 'B');
  const chats = await chatRequestsWith('Write a and b');
  assert.equal(chats.length, 2, 'the question and exactly one continuation after both answers');
  assert.deepEqual(toolMessages(chats[1].body), ['created a.md (1 bytes)', 'created b.md (1 bytes)']);
});

e2eTest(stack, 'the sidebar inbox counts waiting calls across topics and opens the topic of one', async () => {
  const page = await stack.openApp();
  const { topicId } = await askForWrite(page, { file: 'inbox.md', content: 'from the inbox', message: 'Write from the inbox' });
  const otherId = await openNewTopic(page);
  assert.notEqual(otherId, topicId);
  assert.equal(await byTestId(page, 'approval-card').count(), 0, 'the other topic has no card');

  const count = byTestId(page, 'approval-inbox-count');
  await waitUntil('the inbox counts the waiting call', async () => (await count.count()) === 1 && (await count.innerText()) === '1');
  await byTestId(page, 'approval-inbox-button').click();
  const item = page.locator(`[data-testid="approval-inbox-item"][data-topic-id="${topicId}"]`);
  await item.waitFor();
  const text = normalize(await item.innerText());
  assert.match(text, /Write from the inbox/, 'shows the topic title');
  assert.match(text, /write_file/);
  assert.match(text, /inbox\.md/, 'shows the arguments');

  await item.click();
  await waitUntil('the topic of the call is open', async () => (await currentTopicId(page)) === topicId);
  await page.locator('[data-testid="approval-card"] [data-testid="approval-allow-once"]').click();
  await replySettles(page, 'Wrote the note.');
  await count.waitFor({ state: 'detached' });
});

e2eTest(stack, 'fetching an address on this computer asks first, and the card says why', async () => {
  const page = await stack.openApp();
  await stack.testkit.reset();
  const url = `${stack.testkit.url}/models`;
  await stack.testkit.script([
    { chunks: [], toolCalls: [{ name: 'fetch_url', arguments: JSON.stringify({ url }) }] },
    { chunks: ['Fetched it.'] },
  ]);
  await openNewTopic(page);
  await typeAndEnter(page, 'Fetch the local page');
  const card = page.locator('[data-testid="approval-card"]');
  await card.waitFor();
  assert.match(normalize(await card.locator('[data-testid="approval-note"]').innerText()), /127\.0\.0\.1, an address on this computer or the local network/);
  assert.equal(await card.locator('[data-testid="approval-diff"]').count(), 0, 'a note, not a diff');
  await card.locator('[data-testid="approval-allow-once"]').click();
  await replySettles(page, 'Fetched it.');
  const chats = await chatRequestsWith('Fetch the local page');
  assert.equal(chats.length, 2);
  assert.match(toolMessages(chats[1].body)[0], /^HTTP 200/);
});
