import { Chat } from '@ai-sdk/react';
import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { messageText } from '../src/chat/messages';
import { LiveReplies } from '../src/chat/replies';
import { ExecutionTransport, sdkToChat, type ExecutionSource, type SdkMessage } from '../src/chat/transport';
import type { StreamMessage, UiMessage } from '../src/protocol.gen';
import { chunk, snapshot, terminal, textReply, type Execution } from './stream-messages';

const A: Execution = { executionId: 'exec-a', messageId: 'msg-a', model: { providerId: 'p1', model: 'alpha' } };
const B: Execution = { executionId: 'exec-b', messageId: 'msg-b', model: { providerId: 'p2', model: 'beta' } };

function interleave(a: StreamMessage[], b: StreamMessage[]): StreamMessage[] {
  const out: StreamMessage[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i]) out.push(a[i] as StreamMessage);
    if (b[i]) out.push(b[i] as StreamMessage);
  }
  return out;
}

function sourceOf(reader: LiveReplies, overrides: Partial<ExecutionSource> = {}): ExecutionSource {
  return {
    follow: (executionId, follower) => reader.follow(executionId, follower),
    continueReply: () => Promise.resolve(undefined),
    nextExecution: () => Promise.reject(new Error('not in this test')),
    ...overrides,
  };
}

async function readAll(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    chunks.push(value);
  }
}

function chatOf(source: ExecutionSource, execution: Execution): Chat<SdkMessage> {
  return new Chat<SdkMessage>({
    id: execution.executionId,
    transport: new ExecutionTransport(source, execution.executionId, execution.messageId),
  });
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('ExecutionTransport', () => {
  it("yields only its own execution's chunks of an interleaved stream, and each Chat folds its own reply", async () => {
    const reader = new LiveReplies();
    const a = textReply(['a1 ', 'a2 ', 'a3'], A);
    const b = textReply(['b1 ', 'b2'], B);
    const stream = [...interleave(a, b), terminal('success', A, false), terminal('success', B, true)];
    // Both executions are known before the transports reconnect; the rest streams after.
    for (const message of stream.slice(0, 4)) reader.read(message);
    const source = sourceOf(reader);
    const streamA = await new ExecutionTransport(source, A.executionId, A.messageId).reconnectToStream({ chatId: A.executionId });
    const streamB = await new ExecutionTransport(source, B.executionId, B.messageId).reconnectToStream({ chatId: B.executionId });
    const chatA = chatOf(source, A);
    const chatB = chatOf(source, B);
    const resumed = Promise.all([chatA.resumeStream(), chatB.resumeStream()]);
    await tick();
    for (const message of stream.slice(4)) reader.read(message);
    await resumed;

    const chunksOf = (messages: StreamMessage[]) =>
      messages.flatMap((message) => (message.kind === 'chunk' ? [message.chunk as UIMessageChunk] : []));
    // Each stream: the empty reply it starts from (its row's `start`), then exactly its chunks; closed after its terminal.
    expect(await readAll(streamA as ReadableStream<UIMessageChunk>)).toEqual([{ type: 'start', messageId: 'msg-a' }, ...chunksOf(a)]);
    expect(await readAll(streamB as ReadableStream<UIMessageChunk>)).toEqual([{ type: 'start', messageId: 'msg-b' }, ...chunksOf(b)]);

    expect(chatA.messages).toHaveLength(1);
    expect(chatB.messages).toHaveLength(1);
    const [messageA] = chatA.messages.map(sdkToChat);
    const [messageB] = chatB.messages.map(sdkToChat);
    expect(messageA?.id).toBe('msg-a');
    expect(messageB?.id).toBe('msg-b');
    expect(messageText(messageA as UiMessage)).toBe('a1 a2 a3');
    expect(messageText(messageB as UiMessage)).toBe('b1 b2');
    expect(messageA?.metadata).toMatchObject({ model: 'alpha', status: 'success' });
    expect(messageB?.metadata).toMatchObject({ model: 'beta', status: 'success' });
    // The same message LiveReplies folded: one truth, two readers.
    const folded = new Map(reader.replies().map((reply) => [reply.messageId, reply.message]));
    expect(messageA?.parts).toEqual(folded.get('msg-a')?.parts);
    expect(messageB?.parts).toEqual(folded.get('msg-b')?.parts);
  });

  it('starts from a snapshot (open parts t<index>) and continues with the live chunks', async () => {
    const reader = new LiveReplies();
    const partial: UiMessage = {
      id: 'msg-a',
      role: 'assistant',
      metadata: { status: 'streaming' },
      parts: [{ type: 'step-start' }, { type: 'text', text: 'a1 a2 ', state: 'streaming' }],
    };
    reader.read(snapshot(5, partial, A));
    const chat = chatOf(sourceOf(reader), A);
    const resumed = chat.resumeStream();
    await tick();
    reader.read(chunk(6, { type: 'text-delta', id: 't1', delta: 'a3' }, A));
    reader.read(chunk(7, { type: 'text-end', id: 't1' }, A));
    reader.read(chunk(8, { type: 'message-metadata', messageMetadata: { status: 'success' } }, A));
    reader.read(terminal('success', A));
    await resumed;
    const [message] = chat.messages.map(sdkToChat);
    expect(messageText(message as UiMessage)).toBe('a1 a2 a3');
    expect(message?.parts).toEqual(reader.replies()[0]?.message.parts);
    expect(chat.status).toBe('ready');
  });

  it('has nothing to reconnect to for an execution the reader does not know', async () => {
    const transport = new ExecutionTransport(sourceOf(new LiveReplies()), 'exec-x', 'msg-x');
    expect(await transport.reconnectToStream({ chatId: 'exec-x' })).toBeNull();
  });

  it('sends by continuing the reply over the backend, then streams the execution that continues it', async () => {
    const reader = new LiveReplies();
    const continued: string[] = [];
    const source = sourceOf(reader, {
      continueReply: (messageId) => {
        continued.push(messageId);
        for (const message of textReply(['more'], { ...A, executionId: 'exec-a2' }).slice(0, 3)) reader.read(message);
        return Promise.resolve(undefined);
      },
      nextExecution: () => Promise.resolve('exec-a2'),
    });
    const transport = new ExecutionTransport(source, A.executionId, A.messageId);
    const stream = await transport.sendMessages({ chatId: 'exec-a', messages: [], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });
    reader.read(terminal('success', { ...A, executionId: 'exec-a2' }));
    expect(continued).toEqual(['msg-a']);
    expect((await readAll(stream)).map((c) => c.type)).toEqual(['start', 'start', 'start-step', 'text-start']);
  });
});
