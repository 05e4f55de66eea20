import { describe, expect, it } from 'vitest';
import { MessageFold } from '../src/chat/fold';
import { retryingAfter, secondsLeft, type Retrying } from '../src/chat/retrying';
import type { UiChunk } from '../src/protocol.gen';

const RETRYING: UiChunk = {
  type: 'data-retrying',
  id: 'retrying',
  data: { attempt: 2, delayMs: 4000, reason: 'rate limited (HTTP 429)' },
  transient: true,
};

describe('retrying notice', () => {
  it('starts at a data-retrying chunk and counts down from delayMs', () => {
    const state = retryingAfter(undefined, RETRYING, 1_000);
    expect(state).toEqual({ attempt: 2, delayMs: 4000, reason: 'rate limited (HTTP 429)', since: 1_000 });
    const shown = state as Retrying;
    expect(secondsLeft(shown, 1_000)).toBe(4);
    expect(secondsLeft(shown, 2_500)).toBe(3);
    expect(secondsLeft(shown, 9_000)).toBe(0);
  });

  it('survives framing chunks and ends at the next content chunk', () => {
    let state = retryingAfter(undefined, RETRYING, 0);
    state = retryingAfter(state, { type: 'start' }, 10);
    state = retryingAfter(state, { type: 'start-step' }, 20);
    expect(state).toBeDefined();
    expect(retryingAfter(state, { type: 'text-start', id: 't0' }, 30)).toBeUndefined();
    expect(retryingAfter(state, { type: 'error', errorText: 'x' }, 30)).toBeUndefined();
    expect(retryingAfter(state, { type: 'finish' }, 30)).toBeUndefined();
  });

  it('is never folded into the message', () => {
    const fold = new MessageFold('m1');
    const before = fold.message;
    fold.apply({ type: 'start' });
    fold.apply(RETRYING);
    fold.apply({ type: 'text-start', id: 't0' });
    fold.apply({ type: 'text-delta', id: 't0', delta: 'hi' });
    expect(before).not.toBe(fold.message);
    expect(fold.message.parts.some((part) => part.type === 'data-retrying')).toBe(false);
  });
});
