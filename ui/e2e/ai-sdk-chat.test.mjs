// `colloquy serve` as the backend of a stock AI SDK chat client: the `ai` package's own
// DefaultChatTransport and readUIMessageStream (no reimplementation) against the real
// server and the testkit. Send and stream, a reload that resumes mid-reply, stop,
// regenerate, tool approvals answered as `addToolApprovalResponse` answers them, and bad
// requests answered in words.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DefaultChatTransport, readUIMessageStream } from 'ai';
import { TOKEN, addTestkitProvider, e2eTest, normalize, tempWorkspace, testkitRequests, useStack, waitUntil, words } from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

const transport = () =>
  new DefaultChatTransport({ api: `${stack.server.origin}/api/chat`, headers: { Authorization: `Bearer ${TOKEN}` } });

const userMessage = (id, text) => ({ id, role: 'user', parts: [{ type: 'text', text }] });

/** Folds a UI message stream with the stock reader (onto `message`, as a client continuing it does); the last message it yields. */
async function fold(stream, message) {
  let last;
  for await (const folded of readUIMessageStream({ stream, message })) last = folded;
  return last;
}

const textOf = (message) =>
  message.parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('');

const send = (chatId, text) =>
  transport().sendMessages({ chatId, messages: [userMessage(`${chatId}-u1`, text)], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });

async function storedReplies(chatId) {
  const rows = await stack.server.api('messages_list', { topicId: chatId });
  return rows.filter((row) => row.message.role === 'assistant');
}

e2eTest(stack, 'a stock DefaultChatTransport sends, streams and folds a reply; the chat id becomes a topic', async () => {
  const chunks = ['Hello ', 'from ', 'Colloquy.'];
  await stack.testkit.script({ chunks, tokenDelayMs: 5 });
  const message = await fold(await send('sdk-basic', 'Say hello'));
  assert.equal(message.role, 'assistant');
  assert.equal(textOf(message), chunks.join(''));

  const { topics } = await stack.server.api('topics_list');
  assert.ok(topics.some((topic) => topic.id === 'sdk-basic'), 'the chat is a topic the app lists');
  await waitUntil('the reply is stored', async () => (await storedReplies('sdk-basic'))[0]?.status === 'success');
  assert.equal(message.id, (await storedReplies('sdk-basic'))[0].message.id, 'the streamed message is the stored one');

  // Nothing live: reconnecting answers 204, which the transport reads as "no stream".
  assert.equal(await transport().reconnectToStream({ chatId: 'sdk-basic' }), null);
});

e2eTest(stack, 'a reload mid-reply resumes with reconnectToStream and folds the whole reply exactly once', async () => {
  const chunks = words(80, 'r');
  await stack.testkit.script({ chunks, tokenDelayMs: 25 });
  const first = await send('sdk-resume', 'Something long');
  // Read a little, then go away as a reloading page does (the reply keeps streaming).
  const reader = first.getReader();
  let seen = 0;
  while (seen < 10) {
    const { done, value } = await reader.read();
    assert.ok(!done, 'the reply is still streaming');
    if (value.type === 'text-delta') seen += 1;
  }
  await reader.cancel();

  const resumed = await transport().reconnectToStream({ chatId: 'sdk-resume' });
  assert.ok(resumed, 'a live reply to resume');
  const message = await fold(resumed);
  assert.equal(normalize(textOf(message)), normalize(chunks.join('')), 'every word once, in order');
  await waitUntil('stored as success', async () => (await storedReplies('sdk-resume'))[0]?.status === 'success');
});

e2eTest(stack, 'the stop endpoint stops the reply; regenerate writes a new version of it', async () => {
  await stack.testkit.script({ chunks: words(200, 's'), tokenDelayMs: 25 });
  const stream = await send('sdk-stop', 'Go on and on');
  const folding = fold(stream);
  await waitUntil('the reply streams', async () => (await storedReplies('sdk-stop')).length === 1);
  const stopped = await fetch(`${stack.server.origin}/api/chat/sdk-stop/stop`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.equal(stopped.status, 200);
  const partial = await folding;
  assert.ok(textOf(partial).split(' ').length < 200, 'the stream ended before the script did');
  await waitUntil('stored as paused', async () => (await storedReplies('sdk-stop'))[0]?.status === 'paused');

  await stack.testkit.script({ chunks: ['Second ', 'version.'] });
  const regenerated = await fold(
    await transport().sendMessages({
      chatId: 'sdk-stop',
      messages: [userMessage('sdk-stop-u1', 'Go on and on'), partial],
      trigger: 'regenerate-message',
      messageId: partial.id,
      abortSignal: undefined,
    }),
  );
  assert.equal(textOf(regenerated), 'Second version.');
  await waitUntil('the new version is shown', async () => (await storedReplies('sdk-stop'))[0]?.message.id === regenerated.id);
  assert.equal((await storedReplies('sdk-stop'))[0].versions?.length, 2, 'the stopped reply is kept as the first version');
});

/** What `addToolApprovalResponse` does to the client's copy of the reply: the asked call is answered. */
function answered(message, approved, reason) {
  const copy = structuredClone(message);
  const part = copy.parts.find((p) => p.state === 'approval-requested');
  assert.ok(part, `a call asks for approval: ${JSON.stringify(message.parts)}`);
  part.state = 'approval-responded';
  part.approval = { id: part.approval.id, approved, ...(reason ? { reason } : {}) };
  return copy;
}

/** A chat whose topic has a workspace, and a reply that asks to write `file` there, folded. */
async function askToWrite(chatId, file) {
  await stack.testkit.reset();
  await stack.testkit.script({ chunks: ['Ready.'] });
  await fold(await send(chatId, 'Hello'));
  const folder = await tempWorkspace();
  await stack.server.api('topic_update', { id: chatId, workspace: folder });
  await stack.testkit.script([
    { chunks: [], toolCalls: [{ name: 'write_file', arguments: JSON.stringify({ path: file, content: 'hi' }) }] },
    { chunks: ['Wrote ', 'the note.'] },
  ]);
  const user = userMessage(`${chatId}-u2`, `Write ${file}`);
  const asked = await fold(await transport().sendMessages({ chatId, messages: [user], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }));
  return { folder, user, asked };
}

const answer = (chatId, user, reply) =>
  transport().sendMessages({ chatId, messages: [user, reply], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });

e2eTest(stack, 'a tool approval answered through the client continues the same message with only what it lacks', async () => {
  const { folder, user, asked } = await askToWrite('sdk-approve', 'note.md');
  const tool = asked.parts.find((part) => part.type === 'dynamic-tool');
  assert.equal(tool?.state, 'approval-requested', JSON.stringify(asked.parts));
  assert.equal(await readFile(path.join(folder, 'note.md'), 'utf8').catch(() => undefined), undefined, 'nothing written before the answer');

  const reply = answered(asked, true);
  const final = await fold(await answer('sdk-approve', user, reply), reply);
  assert.equal(final.id, asked.id, 'the same message goes on');
  const tools = final.parts.filter((part) => part.type === 'dynamic-tool');
  assert.equal(tools.length, 1, `the call is not repeated: ${JSON.stringify(final.parts)}`);
  assert.equal(tools[0].state, 'output-available');
  assert.equal(textOf(final), 'Wrote the note.');
  assert.equal(await readFile(path.join(folder, 'note.md'), 'utf8'), 'hi');
  await waitUntil('stored as success', async () => (await storedReplies('sdk-approve')).at(-1)?.status === 'success');

  // Answering the same question again is refused: it was answered. (The reader folded
  // onto `reply` itself, so the answer is made afresh.)
  const again = await fetch(`${stack.server.origin}/api/chat`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ id: 'sdk-approve', messages: [user, answered(asked, true)], trigger: 'submit-message' }),
  });
  const againBody = await again.text();
  assert.equal(again.status, 409, againBody);
  assert.match(JSON.parse(againBody).message, /answered already/);
});

e2eTest(stack, 'a denial answered through the client reaches the model with its reason, and nothing is written', async () => {
  const { folder, user, asked } = await askToWrite('sdk-deny', 'denied.md');
  const reply = answered(asked, false, 'not in this folder');
  const final = await fold(await answer('sdk-deny', user, reply), reply);
  const [tool] = final.parts.filter((part) => part.type === 'dynamic-tool');
  assert.equal(tool.state, 'output-denied', JSON.stringify(final.parts));
  assert.equal(await readFile(path.join(folder, 'denied.md'), 'utf8').catch(() => undefined), undefined);
  const requests = (await testkitRequests(stack.testkit)).filter((request) => request.path.endsWith('/chat/completions'));
  const toolResults = requests.at(-1).body.messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
  assert.ok(toolResults.some((text) => text.includes('not in this folder')), JSON.stringify(toolResults));
});

e2eTest(stack, 'bad chat requests are refused in words, and the token is required', async () => {
  const post = (body, headers = { Authorization: `Bearer ${TOKEN}` }) =>
    fetch(`${stack.server.origin}/api/chat`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const cases = [
    [{ id: 'bad id!', messages: [userMessage('u', 'x')] }, 'id'],
    [{ id: 'ok', messages: [] }, 'messages'],
    [{ id: 'ok', messages: [{ id: 'a', role: 'assistant', parts: [] }] }, 'messages'],
    [{ id: 'ok', messages: [{ id: 'a', role: 'assistant', parts: [{ type: 'dynamic-tool', state: 'approval-responded', approval: { id: 'x' } }] }] }, 'messages'],
    [{ id: 'ok', messages: [{ id: 'a', role: 'assistant', parts: [{ type: 'dynamic-tool', state: 'approval-responded', approval: { id: 'nope', approved: true } }] }] }, 'id'],
    [{ id: 'ok', messages: [userMessage('u', 'x')], trigger: 'resume' }, 'trigger'],
    [{ id: 'ok', messages: [{ id: 'u', role: 'user', parts: [{ type: 'file', mediaType: 'image/png', url: 'https://example.com/a.png' }] }] }, 'messages'],
  ];
  for (const [body, field] of cases) {
    const response = await post(body);
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.equal((await response.json()).field, field, JSON.stringify(body));
  }
  const unauthorized = await post({ id: 'ok', messages: [userMessage('u', 'x')] }, {});
  assert.equal(unauthorized.status, 401);
});
