import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { StreamMessageReader } from '../src/chat/reader';
import { SeqGuard } from '../src/chat/seq';
import type { ExecutionTerminal, StreamMessage, UiMessage } from '../src/protocol.gen';
import { fold } from './helpers';
import { chunk, snapshot, terminal } from './stream-messages';

function read(messages: StreamMessage[]) {
  const chunks: UIMessageChunk[] = [];
  const terminals: ExecutionTerminal[] = [];
  const reader = new StreamMessageReader({ chunk: (c) => chunks.push(c), terminal: (t) => terminals.push(t) });
  messages.forEach((m) => reader.read(m));
  return { chunks, terminals };
}

describe('SeqGuard', () => {
  it('accepts each seq once, per execution, after what a snapshot covered', () => {
    const guard = new SeqGuard();
    guard.covered('a', 3);
    expect([2, 3, 4, 4, 5].map((seq) => guard.accept('a', seq))).toEqual([false, false, true, false, true]);
    expect(guard.accept('b', 1)).toBe(true);
    expect(guard.accept('b', 1)).toBe(false);
  });
});

describe('StreamMessageReader', () => {
  const partial: UiMessage = {
    id: 'msg-1',
    role: 'assistant',
    metadata: { status: 'streaming' },
    parts: [{ type: 'step-start' }, { type: 'text', text: 'one two ', state: 'streaming' }],
  };

  it('rebuilds snapshot + tail with every chunk exactly once, even when chunks repeat', async () => {
    const { chunks, terminals } = read([
      snapshot(4, partial),
      chunk(3, { type: 'text-delta', id: 't1', delta: 'two ' }),
      chunk(4, { type: 'text-delta', id: 't1', delta: 'two ' }),
      chunk(5, { type: 'text-delta', id: 't1', delta: 'three' }),
      chunk(5, { type: 'text-delta', id: 't1', delta: 'three' }),
      chunk(6, { type: 'text-end', id: 't1' }),
      chunk(7, { type: 'finish', messageMetadata: { status: 'success' } }),
      terminal(),
    ]);
    expect(terminals).toHaveLength(1);
    const message = (await fold(chunks)) as UiMessage;
    expect(message.parts).toEqual([{ type: 'step-start' }, { type: 'text', text: 'one two three', state: 'done' }]);
    expect(message.metadata).toEqual({ status: 'success' });
  });

  it('drops `error` chunks (the data-error part carries the error) but keeps data-error', async () => {
    const { chunks } = read([
      snapshot(0, { id: 'msg-1', role: 'assistant', parts: [] }),
      chunk(1, { type: 'data-error', data: { kind: 'provider', message: 'authentication failed', retryable: false } }),
      chunk(2, { type: 'error', errorText: 'authentication failed' }),
      terminal('error'),
    ]);
    expect(chunks.map((c) => c.type)).toEqual(['start', 'data-error']);
  });

  it('maps a tail chunk with an unexpected id onto the only open part', async () => {
    const { chunks } = read([snapshot(4, partial), chunk(5, { type: 'text-delta', id: 'other', delta: 'three' }), chunk(6, { type: 'text-end', id: 'other' })]);
    const message = (await fold(chunks)) as UiMessage;
    expect(message.parts[1]).toEqual({ type: 'text', text: 'one two three', state: 'done' });
  });

  it('passes a fresh execution (no snapshot) straight through', async () => {
    const { chunks } = read([
      chunk(1, { type: 'start', messageId: 'msg-1' }),
      chunk(2, { type: 'start-step' }),
      chunk(3, { type: 'text-start', id: 't1' }),
      chunk(4, { type: 'text-delta', id: 't1', delta: 'hi' }),
      chunk(5, { type: 'text-end', id: 't1' }),
      terminal(),
    ]);
    expect(chunks).toHaveLength(5);
  });
});
