import { describe, expect, it, vi } from 'vitest';
import { ApiFailure } from '../src/backend/backend';
import { InboxStore, stepPosition } from '../src/chat/inbox';
import type { InboxItem } from '../src/protocol.gen';
import { FakeBackend } from './fake-backend';

const NOW = '2025-01-01T00:00:00Z';
const item = (id: string, extra: Partial<InboxItem> = {}): InboxItem => ({
  id,
  topicId: 'topic-1',
  text: `text ${id}`,
  mode: 'queue',
  state: 'queued',
  createdAt: NOW,
  ...extra,
});

/** A promise the test resolves when it wants. */
function later<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('stepPosition', () => {
  const items = [item('a'), item('b'), item('c')];
  it('moves one step, and not past either end', () => {
    expect(stepPosition(items, 'b', 'up')).toBe(0);
    expect(stepPosition(items, 'b', 'down')).toBe(2);
    expect(stepPosition(items, 'a', 'up')).toBeUndefined();
    expect(stepPosition(items, 'c', 'down')).toBeUndefined();
    expect(stepPosition(items, 'missing', 'up')).toBeUndefined();
  });
});

describe('InboxStore', () => {
  it('moves an item with a 0-based position and shows the order the backend answers', async () => {
    const backend = new FakeBackend();
    backend.answers.set('inbox_list', () => [item('a'), item('b'), item('c')]);
    backend.answers.set('inbox_move', () => [item('a'), item('c'), item('b')]);
    const store = new InboxStore(backend, 'topic-1');
    await store.refresh();
    await store.move('c', 'up');
    expect(backend.requestsOf('inbox_move')).toEqual([{ id: 'c', position: 1 }]);
    expect(store.getState().items?.map((i) => i.id)).toEqual(['a', 'c', 'b']);
    await store.move('a', 'up');
    expect(backend.requestsOf('inbox_move')).toHaveLength(1);
  });

  it('adds, edits, cancels and releases through the backend, reading the list after each', async () => {
    const backend = new FakeBackend();
    let list = [item('h', { state: 'held', note: 'Not sent: the reply before it failed.' })];
    backend.answers.set('inbox_list', () => list);
    const store = new InboxStore(backend, 'topic-1');
    expect(await store.add('next please', 'steer')).toBe(true);
    expect(backend.requestsOf('inbox_add')).toEqual([{ topicId: 'topic-1', text: 'next please', mode: 'steer' }]);
    expect(await store.edit('h', 'changed')).toBe(true);
    expect(backend.requestsOf('inbox_update')).toEqual([{ id: 'h', text: 'changed' }]);
    expect(await store.release('h')).toBe(true);
    list = [];
    expect(await store.cancel('h')).toBe(true);
    expect(backend.names()).toEqual(['inbox_add', 'inbox_list', 'inbox_update', 'inbox_list', 'inbox_release', 'inbox_list', 'inbox_cancel', 'inbox_list']);
    expect(store.getState().items).toEqual([]);
  });

  it('keeps the text when queueing fails and says why', async () => {
    const backend = new FakeBackend();
    backend.failCall.set('inbox_add', new ApiFailure({ kind: 'bad_request', message: 'the message is empty', retryable: false, field: 'text' }));
    const store = new InboxStore(backend, 'topic-1');
    expect(await store.add(' ', 'queue')).toBe(false);
    expect(store.getState().error?.message).toBe('the message is empty');
    store.dismissError();
    expect(store.getState().error).toBeUndefined();
  });

  it('shows the newest answer when a slow refresh returns after a later change', async () => {
    const backend = new FakeBackend();
    const slow = later<InboxItem[]>();
    let calls = 0;
    backend.answers.set('inbox_list', () => (++calls === 1 ? slow.promise : [item('b')]));
    backend.answers.set('inbox_move', () => [item('a'), item('b')]);
    const store = new InboxStore(backend, 'topic-1');
    const first = store.refresh();
    await store.refresh();
    expect(store.getState().items?.map((i) => i.id)).toEqual(['b']);
    slow.resolve([item('stale')]);
    await first;
    expect(store.getState().items?.map((i) => i.id)).toEqual(['b']);
  });

  it('reads a finished topic\'s queue again until the backend has held or sent it', async () => {
    vi.useFakeTimers();
    try {
      const backend = new FakeBackend();
      // The window reads before the backend settles the queue behind the stopped reply.
      let list = [item('a'), item('b')];
      backend.answers.set('inbox_list', () => list);
      const store = new InboxStore(backend, 'topic-1');
      const following = store.followStatus('aborted');
      await vi.advanceTimersByTimeAsync(0);
      expect(store.getState().items?.map((i) => i.state)).toEqual(['queued', 'queued']);
      list = [item('a', { state: 'held', note: 'Not sent' }), item('b', { state: 'held', note: 'Not sent' })];
      await vi.advanceTimersByTimeAsync(1_000);
      await following;
      expect(store.getState().items?.map((i) => i.state)).toEqual(['held', 'held']);
      const reads = backend.requestsOf('inbox_list').length;
      await vi.advanceTimersByTimeAsync(5_000);
      expect(backend.requestsOf('inbox_list')).toHaveLength(reads);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reads a live topic\'s queue once: queued items there are waiting for the turn', async () => {
    vi.useFakeTimers();
    try {
      const backend = new FakeBackend();
      backend.answers.set('inbox_list', () => [item('a')]);
      const store = new InboxStore(backend, 'topic-1');
      await store.followStatus('streaming');
      await vi.advanceTimersByTimeAsync(5_000);
      expect(backend.requestsOf('inbox_list')).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
