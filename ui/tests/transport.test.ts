import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { ApiFailure } from '../src/backend/backend';
import type { ChatMessage } from '../src/chat/messages';
import { ColloquyChatTransport } from '../src/chat/transport';
import { FakeBackend } from './fake-backend';
import { drain, fold } from './helpers';
import { chunk, snapshot, terminal } from './stream-messages';

const user: ChatMessage = { id: 'user-1', role: 'user', parts: [{ type: 'text', text: 'Hello there' }] };

function scriptedReply(backend: FakeBackend) {
  backend.streams.push({
    reply: { live: true, turnId: 'turn-1' },
    messages: [
      chunk(1, { type: 'start', messageId: 'msg-1' }),
      chunk(2, { type: 'start-step' }),
      chunk(3, { type: 'text-start', id: 't1' }),
      chunk(4, { type: 'text-delta', id: 't1', delta: 'Hi!' }),
      chunk(5, { type: 'text-end', id: 't1' }),
      chunk(6, { type: 'finish' }),
      terminal(),
      // Anything after the terminal is not read.
      chunk(7, { type: 'text-start', id: 'late' }),
    ],
  });
}

describe('ColloquyChatTransport', () => {
  it('opens a turn with the topic, the text and the client message id, and ends at the terminal', async () => {
    const backend = new FakeBackend();
    scriptedReply(backend);
    const transport = new ColloquyChatTransport(backend);
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'topic-1',
      messageId: undefined,
      messages: [user],
      abortSignal: undefined,
      body: { model: { providerId: 'p1', model: 'scripted' } },
    });
    const chunks = await drain(stream);
    expect(backend.calls[0]).toEqual({
      name: 'stream_open',
      request: { topicId: 'topic-1', text: 'Hello there', messageId: 'user-1', model: { providerId: 'p1', model: 'scripted' } },
    });
    expect(chunks.map((c) => c.type)).toEqual(['start', 'start-step', 'text-start', 'text-delta', 'text-end', 'finish']);
    expect(backend.closed).toBe(1);
  });

  it('reconnects to nothing when the topic has no live reply', async () => {
    const backend = new FakeBackend();
    backend.streams.push({ reply: { live: false }, messages: [] });
    const transport = new ColloquyChatTransport(backend);
    expect(await transport.reconnectToStream({ chatId: 'topic-1' })).toBeNull();
    expect(backend.calls).toEqual([{ name: 'stream_attach', request: { topicId: 'topic-1' } }]);
  });

  it('reconnects with snapshot + tail', async () => {
    const backend = new FakeBackend();
    backend.streams.push({
      reply: { live: true, turnId: 'turn-1' },
      messages: [
        snapshot(3, { id: 'msg-1', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text: 'Hi', state: 'streaming' }] }),
        chunk(4, { type: 'text-delta', id: 't1', delta: ' there' }),
        chunk(5, { type: 'text-end', id: 't1' }),
        terminal(),
      ],
    });
    const stream = await new ColloquyChatTransport(backend).reconnectToStream({ chatId: 'topic-1' });
    const message = (await fold(await drain(stream as ReadableStream<UIMessageChunk>))) as ChatMessage;
    expect(message.parts[1]).toEqual({ type: 'text', text: 'Hi there', state: 'done' });
  });

  it('only detaches when the AI SDK aborts: it never asks the backend to stop the reply', async () => {
    const backend = new FakeBackend();
    backend.streams.push({ reply: { live: true }, messages: [] });
    const abort = new AbortController();
    const stream = await new ColloquyChatTransport(backend).reconnectToStream({ chatId: 'topic-1', abortSignal: abort.signal });
    abort.abort();
    expect(await drain(stream as ReadableStream<UIMessageChunk>)).toEqual([]);
    expect(backend.closed).toBe(1);
    expect(backend.names()).not.toContain('stream_abort');
  });

  it('fails the stream with a clear error when the connection ends before the terminal', async () => {
    const backend = new FakeBackend();
    backend.streams.push({ reply: { live: true }, messages: [chunk(1, { type: 'start' })] });
    backend.endEarly = new ApiFailure({ kind: 'internal', message: 'connection lost', retryable: true });
    const stream = await new ColloquyChatTransport(backend).reconnectToStream({ chatId: 'topic-1' });
    await expect(drain(stream as ReadableStream<UIMessageChunk>)).rejects.toThrow('connection lost');
  });
});
