import { readFileSync } from 'node:fs';
import type { UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { MessageFold } from '../src/chat/fold';
import type { UiChunk, UiMessage } from '../src/protocol.gen';
import { fold as aiSdkFold } from './helpers';

const fixture = JSON.parse(readFileSync(new URL('./fixtures/ui-stream.json', import.meta.url), 'utf8')) as {
  chunks: UiChunk[];
  message: UiMessage;
};

function foldAll(chunks: readonly UiChunk[], from = new MessageFold('msg-1')): UiMessage {
  for (const chunk of chunks) from.apply(chunk);
  return from.message;
}

/** JSON round trip: what a snapshot looks like after crossing the wire. */
const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

// Part ids follow the backend's convention: `t<index>` / `r<index>` of the part in `parts`.
const TRANSCRIPT: UiChunk[] = [
  { type: 'start', messageId: 'msg-2', messageMetadata: { model: 'm', status: 'streaming' } },
  { type: 'start-step' },
  { type: 'reasoning-start', id: 'r1' },
  { type: 'reasoning-delta', id: 'r1', delta: 'Let me ' },
  { type: 'reasoning-delta', id: 'r1', delta: 'think.' },
  { type: 'reasoning-end', id: 'r1' },
  { type: 'text-start', id: 't2' },
  { type: 'text-delta', id: 't2', delta: 'One, ' },
  { type: 'text-delta', id: 't2', delta: 'two, ' },
  { type: 'text-delta', id: 't2', delta: 'three.' },
  { type: 'text-end', id: 't2' },
  { type: 'data-progress', id: 'p', data: { done: 1 } },
  { type: 'tool-input-start', toolCallId: 'c1', toolName: 'search', dynamic: true },
  { type: 'tool-input-delta', toolCallId: 'c1', inputTextDelta: '{"q":' },
  { type: 'tool-input-delta', toolCallId: 'c1', inputTextDelta: '"x"}' },
  { type: 'tool-input-available', toolCallId: 'c1', toolName: 'search', input: { q: 'x' }, dynamic: true },
  { type: 'tool-output-available', toolCallId: 'c1', output: { hits: 2 }, dynamic: true },
  { type: 'data-progress', id: 'p', data: { done: 2 } },
  { type: 'finish-step' },
  { type: 'start-step' },
  { type: 'text-start', id: 't7' },
  { type: 'text-delta', id: 't7', delta: 'Second ' },
  { type: 'text-delta', id: 't7', delta: 'step.' },
  { type: 'text-end', id: 't7' },
  { type: 'source-url', sourceId: 's1', url: 'https://example.com', title: 'Example' },
  { type: 'message-metadata', messageMetadata: { usage: { inputTokens: 3, outputTokens: 9 } } },
  { type: 'finish', finishReason: 'stop', messageMetadata: { status: 'success' } },
];

describe('MessageFold', () => {
  it('folds the Rust transcript into the message Rust built, as the AI SDK does', async () => {
    const ours = foldAll(fixture.chunks);
    expect(wire(ours)).toEqual(fixture.message);
    expect(wire(ours)).toEqual(await aiSdkFold(fixture.chunks as UIMessageChunk[]));
  });

  it('agrees with the AI SDK on a transcript with reasoning, tools, data and two steps', async () => {
    expect(wire(foldAll(TRANSCRIPT))).toEqual(await aiSdkFold(TRANSCRIPT as UIMessageChunk[]));
  });

  it('continues from a snapshot taken after any chunk to the same message', () => {
    const whole = wire(foldAll(TRANSCRIPT));
    for (let cut = 0; cut <= TRANSCRIPT.length; cut++) {
      const snapshot = wire(foldAll(TRANSCRIPT.slice(0, cut)));
      const resumed = foldAll(TRANSCRIPT.slice(cut), MessageFold.fromSnapshot(snapshot));
      expect(wire(resumed), `snapshot after ${cut} chunks`).toEqual(whole);
    }
  });

  it('never changes a message it handed out, and shares the parts a chunk did not touch', () => {
    const fold = new MessageFold('msg-1');
    foldAll(TRANSCRIPT.slice(0, 8), fold);
    const before = fold.message;
    const frozen = wire(before);
    fold.apply({ type: 'text-delta', id: 't2', delta: 'more' });
    expect(before).toEqual(frozen);
    expect(fold.message).not.toBe(before);
    expect(fold.message.parts[1]).toBe(before.parts[1]);
    expect(fold.message.parts[2]).not.toBe(before.parts[2]);
  });

  it('puts a delta with an unexpected id into the only open part, and refuses it when that is ambiguous', () => {
    const fold = new MessageFold('msg-1');
    foldAll([{ type: 'start' }, { type: 'text-start', id: 'a' }], fold);
    expect(fold.apply({ type: 'text-delta', id: 'other', delta: 'kept' })).toBe(true);
    fold.apply({ type: 'text-start', id: 'b' });
    expect(fold.apply({ type: 'text-delta', id: 'other', delta: 'lost' })).toBe(false);
    expect(fold.message.parts).toEqual([
      { type: 'text', text: 'kept', state: 'streaming' },
      { type: 'text', text: '', state: 'streaming' },
    ]);
  });

  it('keeps transient data out of the message and replaces data parts by id', () => {
    const message = foldAll([
      { type: 'data-status', id: 's', data: 1 },
      { type: 'data-status', id: 's', data: 2 },
      { type: 'data-status', data: 3 },
      { type: 'data-ping', data: 0, transient: true },
    ]);
    expect(message.parts).toEqual([
      { type: 'data-status', id: 's', data: 2 },
      { type: 'data-status', data: 3 },
    ]);
  });
});
