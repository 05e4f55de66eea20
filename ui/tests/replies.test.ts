import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { messageText } from '../src/chat/messages';
import { LiveReplies } from '../src/chat/replies';
import { waitingApprovalIds } from '../src/chat/tools';
import type { StreamMessage, UiChunk, UiMessage } from '../src/protocol.gen';
import { fold } from './helpers';
import { chunk, lagged, snapshot, terminal, textReply, type Execution } from './stream-messages';

const A: Execution = { executionId: 'exec-a', messageId: 'msg-a', model: { providerId: 'p1', model: 'alpha' } };
const B: Execution = { executionId: 'exec-b', messageId: 'msg-b', model: { providerId: 'p2', model: 'beta' } };

/** Alternates the two lists, one message each, as a two-model stream interleaves them. */
function interleave(a: StreamMessage[], b: StreamMessage[]): StreamMessage[] {
  const out: StreamMessage[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i]) out.push(a[i] as StreamMessage);
    if (b[i]) out.push(b[i] as StreamMessage);
  }
  return out;
}

function texts(reader: LiveReplies): Record<string, string> {
  return Object.fromEntries(reader.replies().map((reply) => [reply.messageId, messageText(reply.message)]));
}

function partial(id: string, text: string): UiMessage {
  return { id, role: 'assistant', metadata: { status: 'streaming' }, parts: [{ type: 'step-start' }, { type: 'text', text, state: 'streaming' }] };
}

describe('LiveReplies', () => {
  it('keeps two interleaved executions apart, each with its own seq', () => {
    const reader = new LiveReplies();
    const stream = interleave(textReply(['a1 ', 'a2 ', 'a3'], A), textReply(['b1 ', 'b2'], B));
    for (const message of stream) expect(reader.read(message).reattach).toBe(false);
    expect(texts(reader)).toEqual({ 'msg-a': 'a1 a2 a3', 'msg-b': 'b1 b2' });
    expect(reader.cursors()).toEqual([
      { executionId: 'exec-a', seq: 9 },
      { executionId: 'exec-b', seq: 8 },
    ]);
    expect(reader.replies().map((reply) => reply.model.model)).toEqual(['alpha', 'beta']);
  });

  it('drops chunks it has already folded, per execution', () => {
    const reader = new LiveReplies();
    const a = textReply(['one ', 'two'], A);
    const b = textReply(['uno ', 'dos'], B);
    for (const message of [...a.slice(0, 5), ...b.slice(0, 5), ...a.slice(2), ...b.slice(3), ...b]) reader.read(message);
    expect(texts(reader)).toEqual({ 'msg-a': 'one two', 'msg-b': 'uno dos' });
    expect(reader.read(a[4] as StreamMessage)).toMatchObject({ changed: false, reattach: false });
  });

  it('replaces one execution on a snapshot mid-way, leaving the other alone, then continues after it', () => {
    const reader = new LiveReplies();
    const a = textReply(['a1 ', 'a2 ', 'a3 ', 'a4'], A);
    const b = textReply(['b1 ', 'b2 ', 'b3'], B);
    for (const message of interleave(a.slice(0, 4), b.slice(0, 4))) reader.read(message);
    // A rebase: the backend sends A's state as of seq 6 (it covers chunks we had and some we had not).
    reader.read(snapshot(6, partial('msg-a', 'a1 a2 a3 '), A));
    expect(texts(reader)).toEqual({ 'msg-a': 'a1 a2 a3 ', 'msg-b': 'b1 ' });
    for (const message of interleave(a.slice(4), b.slice(4))) reader.read(message);
    expect(texts(reader)).toEqual({ 'msg-a': 'a1 a2 a3 a4', 'msg-b': 'b1 b2 b3' });
    const a1 = reader.replies().find((reply) => reply.messageId === 'msg-a');
    expect(a1?.message.parts).toEqual([{ type: 'step-start' }, { type: 'text', text: 'a1 a2 a3 a4', state: 'done' }]);
  });

  it('asks to reattach on a lagged notice, with the last seq of every execution as cursors', () => {
    const reader = new LiveReplies();
    const a = textReply(['a1 ', 'a2 ', 'a3'], A);
    const b = textReply(['b1 ', 'b2 ', 'b3'], B);
    for (const message of interleave(a.slice(0, 5), b.slice(0, 3))) reader.read(message);
    expect(reader.read(lagged())).toMatchObject({ reattach: true, changed: false });
    expect(reader.cursors()).toEqual([
      { executionId: 'exec-a', seq: 5 },
      { executionId: 'exec-b', seq: 3 },
    ]);
    // The backend replays after the cursors, overlapping by a chunk: nothing doubles.
    for (const message of interleave(a.slice(4), b.slice(2))) reader.read(message);
    expect(texts(reader)).toEqual({ 'msg-a': 'a1 a2 a3', 'msg-b': 'b1 b2 b3' });
  });

  it('asks to reattach when a chunk is missing instead of folding past the gap', () => {
    const reader = new LiveReplies();
    const a = textReply(['a1 ', 'a2 ', 'a3'], A);
    for (const message of a.slice(0, 4)) reader.read(message);
    expect(reader.read(a[5] as StreamMessage)).toMatchObject({ reattach: true });
    expect(reader.cursors()).toEqual([{ executionId: 'exec-a', seq: 4 }]);
    // An execution first heard of in the middle (no snapshot) is a gap too.
    expect(reader.read(textReply(['b1'], B)[2] as StreamMessage)).toMatchObject({ reattach: true });
    expect(texts(reader)).toEqual({ 'msg-a': 'a1 ' });
  });

  it('reports the end of the topic and stops counting finished replies as running', () => {
    const reader = new LiveReplies();
    for (const message of interleave(textReply(['a'], A), textReply(['b'], B))) reader.read(message);
    expect(reader.read(terminal('success', A, false))).toMatchObject({ topicDone: false });
    expect(reader.running()).toBe(true);
    expect(reader.read(terminal('error', B, true))).toMatchObject({ topicDone: true });
    expect(reader.running()).toBe(false);
    expect(reader.replies().map((reply) => reply.terminal)).toEqual(['success', 'error']);
    expect(reader.settled()).toEqual(['exec-a', 'exec-b']);
  });

  it('lets a retried execution of the same row supersede the earlier one', () => {
    const reader = new LiveReplies();
    for (const message of [...textReply(['first'], A), terminal('error', A)]) reader.read(message);
    const retry: Execution = { ...A, executionId: 'exec-a2' };
    for (const message of textReply(['second'], retry)) reader.read(message);
    expect(reader.replies()).toHaveLength(1);
    expect(reader.replies()[0]).toMatchObject({ executionId: 'exec-a2', messageId: 'msg-a' });
    expect(texts(reader)).toEqual({ 'msg-a': 'second' });
    expect(reader.cursors()).toEqual([{ executionId: 'exec-a2', seq: 7 }]);
  });

  it('freezes the previous turn when a new one starts, and offers it for pruning', () => {
    const reader = new LiveReplies();
    const first = textReply(['old'], A).slice(0, 4);
    for (const message of first) reader.read(message);
    const next: Execution = { executionId: 'exec-c', messageId: 'msg-c', turnId: 'turn-2' };
    expect(reader.read(chunk(1, { type: 'start', messageId: 'msg-c' }, next))).toMatchObject({ discovered: true });
    expect(reader.turnId).toBe('turn-2');
    expect(reader.settled()).toEqual(['exec-a']);
    expect(reader.cursors()).toEqual([{ executionId: 'exec-c', seq: 1 }]);
    expect(reader.prune(reader.settled())).toBe(true);
    expect(reader.replies().map((reply) => reply.messageId)).toEqual(['msg-c']);
  });

  it("folds each execution of an interleaved stream into the message a stock AI SDK client folds from its chunks", async () => {
    const reader = new LiveReplies();
    const a = textReply(['a1 ', 'a2 ', 'a3'], A);
    const b = textReply(['b1 ', 'b2'], B);
    for (const message of [...interleave(a, b), terminal('success', A, false), terminal('success', B, true)]) reader.read(message);
    const chunksOf = (messages: StreamMessage[]) =>
      messages.flatMap((message) => (message.kind === 'chunk' ? [message.chunk as UIMessageChunk] : []));
    const folded = new Map(reader.replies().map((reply) => [reply.messageId, reply.message]));
    expect(folded.get('msg-a')).toEqual(await fold(chunksOf(a)));
    expect(folded.get('msg-b')).toEqual(await fold(chunksOf(b)));
  });

  it('keeps the answers a snapshot holds while later chunks continue the reply', () => {
    const reader = new LiveReplies();
    const call = (toolCallId: string, state: 'approval-responded' | 'approval-requested', approval: { id: string; approved?: boolean; reason?: string }) =>
      ({ type: 'dynamic-tool', toolName: 'write_file', toolCallId, state, input: { path: 'x' }, approval }) as const;
    const answered: UiMessage = {
      id: 'msg-a',
      role: 'assistant',
      metadata: { status: 'streaming' },
      parts: [
        { type: 'step-start' },
        call('call-1', 'approval-responded', { id: 'a1', approved: false, reason: 'not that file' }),
        call('call-2', 'approval-requested', { id: 'a2' }),
      ],
    };
    reader.read(snapshot(6, answered, A));
    reader.read(chunk(7, { type: 'tool-output-denied', toolCallId: 'call-1' }, A));
    const [reply] = reader.replies();
    const first = reply?.message.parts[1];
    expect(first).toMatchObject({ state: 'output-denied', approval: { id: 'a1', approved: false, reason: 'not that file' } });
    expect(waitingApprovalIds(reply?.message as UiMessage)).toEqual(['a2']);
  });

  it('shows retrying and tool progress beside the message, from the same chunks, until content, output or the end', () => {
    const reader = new LiveReplies();
    const reply = () => reader.replies()[0];
    const retrying: UiChunk = { type: 'data-retrying', data: { attempt: 2, delayMs: 4000, reason: 'overloaded' }, transient: true };
    const progress = (done: number): UiChunk => ({ type: 'data-tool-progress', id: 'call-1', data: { toolCallId: 'call-1', progress: done, total: 4 }, transient: true });
    reader.read(chunk(1, { type: 'start', messageId: 'msg-a' }, A));
    const message = reply()?.message;
    // A transient chunk changes what is shown, but not the message.
    expect(reader.read(chunk(2, retrying, A))).toMatchObject({ changed: true });
    expect(reply()?.retrying).toMatchObject({ attempt: 2, delayMs: 4000, reason: 'overloaded' });
    expect(reply()?.message).toBe(message);
    reader.read(chunk(3, { type: 'start-step' }, A));
    expect(reply()?.retrying).toBeDefined();
    reader.read(chunk(4, { type: 'tool-input-start', toolCallId: 'call-1', toolName: 'slow', dynamic: true }, A));
    expect(reply()?.retrying).toBeUndefined();
    reader.read(chunk(5, { type: 'tool-input-available', toolCallId: 'call-1', toolName: 'slow', input: {}, dynamic: true }, A));
    reader.read(chunk(6, progress(1), A));
    reader.read(chunk(7, progress(3), A));
    expect(reply()?.progress.get('call-1')).toEqual({ progress: 3, total: 4 });
    expect(reply()?.message.parts.some((part) => part.type.startsWith('data-'))).toBe(false);
    reader.read(chunk(8, { type: 'tool-output-available', toolCallId: 'call-1', output: { content: [] }, dynamic: true }, A));
    expect(reply()?.progress.size).toBe(0);
    reader.read(chunk(9, progress(1), A));
    reader.read(chunk(10, retrying, A));
    reader.read(terminal('error', A));
    expect(reply()).toMatchObject({ retrying: undefined, terminal: 'error' });
    expect(reply()?.progress.size).toBe(0);
  });

  it('starts the notices over from a snapshot', () => {
    const reader = new LiveReplies();
    reader.read(chunk(1, { type: 'start', messageId: 'msg-a' }, A));
    reader.read(chunk(2, { type: 'data-retrying', data: { attempt: 1, delayMs: 1000, reason: 'x' }, transient: true }, A));
    reader.read(snapshot(5, partial('msg-a', 'so far'), A));
    expect(reader.replies()[0]).toMatchObject({ retrying: undefined, seq: 5 });
    expect(messageText(reader.replies()[0]?.message as UiMessage)).toBe('so far');
  });
});
