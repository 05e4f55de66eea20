import { describe, expect, it, vi } from 'vitest';
import { ApiFailure } from '../src/backend/backend';
import { chatHistory, messageText, type ChatMessage } from '../src/chat/messages';
import { TopicSession } from '../src/chat/session';
import type { StoredMessage, UiMessage } from '../src/protocol.gen';
import { FakeBackend } from './fake-backend';
import { chunk, snapshot, terminal } from './stream-messages';

const NOW = '2025-01-01T00:00:00Z';

function stored(id: string, message: Omit<UiMessage, 'id'>, status: StoredMessage['status'], statusReason?: string): StoredMessage {
  const row: StoredMessage = { id, topicId: 'topic-1', status, message: { ...message, id }, createdAt: NOW, updatedAt: NOW };
  if (statusReason) row.statusReason = statusReason;
  return row;
}

const userRow = stored('user-1', { role: 'user', parts: [{ type: 'text', text: 'Tell me' }] }, 'success');
const partialReply = stored('msg-1', { role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text: 'one ', state: 'streaming' }] }, 'streaming');
const finishedReply = stored(
  'msg-1',
  { role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text: 'one two three', state: 'done' }] },
  'success',
);

/** Records every state of the chat's messages, to catch a reply shown twice even briefly. */
function watch(session: TopicSession) {
  const seen: ChatMessage[][] = [];
  session.chat['~registerMessagesCallback'](() => seen.push(session.chat.messages));
  return seen;
}

describe('TopicSession', () => {
  it('after a reload mid-stream, rebuilds the reply from snapshot + tail exactly once', async () => {
    const backend = new FakeBackend();
    const history = chatHistory([userRow, partialReply]);
    expect(history.liveReplyDropped).toBe(true);
    backend.streams.push({
      reply: { live: true, turnId: 'turn-1' },
      messages: [
        snapshot(3, { ...partialReply.message, parts: [{ type: 'step-start' }, { type: 'text', text: 'one two ', state: 'streaming' }] }),
        chunk(3, { type: 'text-delta', id: 't1', delta: 'two ' }),
        chunk(4, { type: 'text-delta', id: 't1', delta: 'three' }),
        chunk(5, { type: 'text-end', id: 't1' }),
        chunk(6, { type: 'finish', messageMetadata: { status: 'success' } }),
        terminal(),
      ],
    });
    backend.stored = [userRow, finishedReply];
    const session = new TopicSession(backend, 'topic-1', history.messages);
    const seen = watch(session);
    session.open();
    await vi.waitFor(() => expect(backend.names()).toContain('messages_list'));
    await vi.waitFor(() => expect(session.chat.messages[1]?.metadata?.status).toBe('success'));

    for (const messages of seen) {
      expect(messages.length).toBeLessThanOrEqual(2);
      const reply = messages[1];
      if (reply) expect('one two three'.startsWith(messageText(reply))).toBe(true);
    }
    expect(session.chat.messages.map(messageText)).toEqual(['Tell me', 'one two three']);
    expect(backend.names().filter((n) => n === 'stream_attach')).toHaveLength(1);
  });

  it('shows a stored live row as it is when there is nothing to attach to (no reattach loop)', async () => {
    const backend = new FakeBackend();
    backend.streams.push({ reply: { live: false }, messages: [] });
    backend.stored = [userRow, partialReply];
    const session = new TopicSession(backend, 'topic-1', chatHistory(backend.stored).messages);
    session.open();
    await vi.waitFor(() => expect(session.chat.messages).toHaveLength(2));
    expect(backend.names()).toEqual(['stream_attach', 'messages_list']);
  });

  it('sends with the user message id and the model, then takes stored state as the truth', async () => {
    const backend = new FakeBackend();
    backend.streams.push({ reply: { live: false }, messages: [] }); // the attach on open
    backend.streams.push({
      reply: { live: true, turnId: 'turn-1' },
      messages: [chunk(1, { type: 'start', messageId: 'msg-1' }), chunk(2, { type: 'finish' }), terminal()],
    });
    const session = new TopicSession(backend, 'topic-1', []);
    session.open();
    await vi.waitFor(() => expect(backend.names()).toContain('messages_list'));
    backend.stored = [userRow, finishedReply];
    const result = await session.send('Tell me', { providerId: 'p1', model: 'scripted' });
    expect(result).toEqual({});
    const open = backend.calls.find((c) => c.name === 'stream_open');
    expect(open?.request).toMatchObject({ topicId: 'topic-1', text: 'Tell me', model: { providerId: 'p1', model: 'scripted' } });
    expect((open?.request as { messageId?: string }).messageId).toEqual(expect.any(String));
    expect(session.chat.messages.map((m) => m.metadata?.status)).toEqual(['success', 'success']);
  });

  it('gives the text back when the message never reached the backend', async () => {
    const backend = new FakeBackend();
    const session = new TopicSession(backend, 'topic-1', []);
    backend.failNext = new ApiFailure({ kind: 'conflict', message: 'topic is busy', retryable: true });
    expect(await session.send('Try me')).toEqual({ unsent: 'Try me' });
    expect(session.chat.error?.message).toBe('topic is busy');
  });

  it('Stop asks the backend to abort, then shows the stored paused reply', async () => {
    const backend = new FakeBackend();
    backend.streams.push({ reply: { live: true }, messages: [snapshot(1, partialReply.message)] }); // never ends by itself
    const session = new TopicSession(backend, 'topic-1', [chatHistory([userRow]).messages[0] as ChatMessage]);
    session.open();
    await vi.waitFor(() => expect(session.chat.messages).toHaveLength(2));
    backend.stored = [userRow, { ...partialReply, status: 'paused', statusReason: 'user_stop' }];
    await session.stop();
    const names = backend.names();
    expect(names.slice(0, 3)).toEqual(['stream_attach', 'stream_abort', 'messages_list']);
    expect(new Set(names.slice(3))).toEqual(new Set(names.length > 3 ? ['messages_list'] : []));
    expect(session.chat.messages[1]?.metadata).toMatchObject({ status: 'paused', statusReason: 'user_stop' });
  });

  it('leaving the topic detaches without stopping the reply', async () => {
    const backend = new FakeBackend();
    backend.streams.push({ reply: { live: true }, messages: [snapshot(1, partialReply.message)] });
    const session = new TopicSession(backend, 'topic-1', []);
    session.open();
    await vi.waitFor(() => expect(session.chat.messages).toHaveLength(1));
    session.close();
    await vi.waitFor(() => expect(backend.closed).toBe(1));
    expect(backend.names()).toEqual(['stream_attach']);
  });
});
