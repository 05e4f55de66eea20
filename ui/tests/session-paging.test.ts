import { describe, expect, it, vi } from 'vitest';
import { readNewestPageEarly } from '../src/chat/history';
import { TopicSession } from '../src/chat/session';
import type { StoredMessage } from '../src/protocol.gen';
import { FakeBackend, pageOf } from './fake-backend';

function turnRows(n: number): StoredMessage[] {
  const rows: StoredMessage[] = [];
  for (let i = 0; i < n; i += 1) {
    for (const role of ['user', 'assistant'] as const) {
      const id = `${role === 'user' ? 'u' : 'a'}${i}`;
      rows.push({ id, topicId: 'topic-1', turnId: `turn-${i}`, status: 'success', message: { id, role, parts: [{ type: 'text', text: id }] }, revision: 1, createdAt: '', updatedAt: '' });
    }
  }
  return rows;
}

const firstUser = (session: TopicSession) => session.getState().turns[0]?.user?.id;

describe('TopicSession paging', () => {
  it('opens with one page, reads older pages on demand, and keeps them when the newest page is read again', async () => {
    const backend = new FakeBackend();
    backend.stored = turnRows(120);
    const session = new TopicSession(backend, 'topic-1', { throttleMs: 0 });
    session.open();
    await vi.waitFor(() => expect(session.getState().loaded).toBe(true));
    // One page of 50 turns: the last ones.
    expect(session.getState().turns).toHaveLength(50);
    expect(firstUser(session)).toBe('u70');
    expect(session.getState().hasOlder).toBe(true);
    expect(backend.requestsOf('messages_page')).toEqual([{ topicId: 'topic-1', turns: 50 }]);

    await session.loadOlder();
    expect(backend.requestsOf('messages_page')[1]).toEqual({ topicId: 'topic-1', before: 'u70', turns: 50 });
    expect(firstUser(session)).toBe('u20');
    await session.loadOlder();
    expect(firstUser(session)).toBe('u0');
    expect(session.getState().turns).toHaveLength(120);
    expect(session.getState().hasOlder).toBe(false);
    await session.loadOlder();
    expect(backend.requestsOf('messages_page')).toHaveLength(3);

    // A new turn, then the newest page is read again (as when a reply ends): all stay.
    backend.stored = turnRows(121);
    session.reload();
    await vi.waitFor(() => expect(session.getState().turns).toHaveLength(121));
    expect(firstUser(session)).toBe('u0');
    const ids = session.getState().turns.map((turn) => turn.user?.id);
    expect(new Set(ids).size).toBe(121);
  });

  it('reads the path again only for a change newer than what it read', async () => {
    const backend = new FakeBackend();
    backend.stored = turnRows(3);
    backend.path = { epoch: 'e1', version: 4 };
    const session = new TopicSession(backend, 'topic-1', { throttleMs: 0 });
    session.open();
    await vi.waitFor(() => expect(session.getState().loaded).toBe(true));
    const reads = () => backend.requestsOf('messages_page').length;
    expect(reads()).toBe(1);

    // The feed's first snapshot: the topic last changed before the page was read.
    session.followPath({ epoch: 'e1', version: 2 });
    session.followPath({ epoch: 'e1', version: 4 });
    await Promise.resolve();
    expect(reads()).toBe(1);

    // Another window deleted the last turn: told with a newer version, read again.
    backend.stored = turnRows(2);
    backend.path = { epoch: 'e1', version: 5 };
    session.followPath({ epoch: 'e1', version: 5 });
    await vi.waitFor(() => expect(session.getState().turns).toHaveLength(2));
    expect(reads()).toBe(2);

    // The backend restarted (its count starts over): read again whatever the number.
    backend.path = { epoch: 'e2', version: 0 };
    session.followPath({ epoch: 'e2', version: 0 });
    await vi.waitFor(() => expect(reads()).toBe(3));
  });

  it('a change told while the first page was on its way, and not seen by it, reads again', async () => {
    const backend = new FakeBackend();
    backend.stored = turnRows(3);
    let answer: (() => void) | undefined;
    const held = new Promise<void>((resolve) => (answer = resolve));
    backend.answer('messages_page', async (request) => {
      const page = pageOf(backend.stored, request, backend.path);
      if (backend.requestsOf('messages_page').length === 1) await held;
      return page;
    });
    const session = new TopicSession(backend, 'topic-1', { throttleMs: 0 });
    session.open();
    await vi.waitFor(() => expect(backend.requestsOf('messages_page')).toHaveLength(1));
    // The first read saw version 0; meanwhile another window changed the path (version 1).
    backend.stored = turnRows(1);
    backend.path = { epoch: 'e1', version: 1 };
    session.followPath({ epoch: 'e1', version: 1 });
    answer?.();
    await vi.waitFor(() => expect(session.getState().turns).toHaveLength(1));
    expect(backend.requestsOf('messages_page')).toHaveLength(2);
  });

  it('a cursor that is gone (deleted elsewhere) reads the path again instead of failing', async () => {
    const backend = new FakeBackend();
    backend.stored = turnRows(60);
    const session = new TopicSession(backend, 'topic-1', { throttleMs: 0 });
    session.open();
    await vi.waitFor(() => expect(session.getState().loaded).toBe(true));
    expect(firstUser(session)).toBe('u10');
    // Another window deleted from u5 on: the path is five turns long now.
    backend.stored = turnRows(5);
    await session.loadOlder();
    await vi.waitFor(() => expect(session.getState().turns).toHaveLength(5));
    expect(session.getState().error).toBeUndefined();
    expect(session.getState().hasOlder).toBe(false);
  });

  it('takes the page asked for as the window loaded, once, and asks itself when it failed', async () => {
    const backend = new FakeBackend();
    backend.stored = turnRows(60);
    // As main.tsx does for the topic in the address: the page is on its way first.
    readNewestPageEarly((topicId) => backend.call('messages_page', { topicId, turns: 50 }), 'topic-1');
    const session = new TopicSession(backend, 'topic-1', { throttleMs: 0 });
    session.open();
    await vi.waitFor(() => expect(session.getState().loaded).toBe(true));
    expect(firstUser(session)).toBe('u10');
    // One request in all: the session did not ask again.
    expect(backend.requestsOf('messages_page')).toHaveLength(1);
    // A second session of the topic (the window went elsewhere and back) asks itself.
    const again = new TopicSession(backend, 'topic-1', { throttleMs: 0 });
    again.open();
    await vi.waitFor(() => expect(again.getState().loaded).toBe(true));
    expect(backend.requestsOf('messages_page')).toHaveLength(2);

    // An early read for another topic is not taken; one that failed is asked again.
    readNewestPageEarly(() => Promise.reject(new Error('offline')), 'topic-1');
    const retried = new TopicSession(backend, 'topic-1', { throttleMs: 0 });
    retried.open();
    await vi.waitFor(() => expect(retried.getState().loaded).toBe(true));
    expect(retried.getState().loadError).toBeUndefined();
    expect(backend.requestsOf('messages_page')).toHaveLength(3);
    readNewestPageEarly((topicId) => backend.call('messages_page', { topicId, turns: 50 }), 'topic-2');
    const other = new TopicSession(backend, 'topic-1', { throttleMs: 0 });
    other.open();
    await vi.waitFor(() => expect(other.getState().loaded).toBe(true));
    expect(backend.requestsOf('messages_page').slice(-2).map((request) => (request as { topicId: string }).topicId)).toEqual(['topic-2', 'topic-1']);
  });

  it('starts with the early page when it arrived before the conversation was mounted: the first frame shows it', async () => {
    const backend = new FakeBackend();
    backend.stored = turnRows(60);
    readNewestPageEarly((topicId) => backend.call('messages_page', { topicId, turns: 50 }), 'topic-1');
    // The page arrives while the workspace is still reading its lists.
    await new Promise((resolve) => setTimeout(resolve, 0));
    const session = new TopicSession(backend, 'topic-1', { throttleMs: 0 });
    expect(session.getState().loaded).toBe(true);
    expect(session.getState().turns).toHaveLength(50);
    expect(firstUser(session)).toBe('u10');
    const settled = vi.fn();
    session.open();
    // Opening reads nothing more: that page was the first read.
    await vi.waitFor(() => expect(session.getState().turns).toHaveLength(50));
    expect(backend.requestsOf('messages_page')).toHaveLength(1);
    // Later reads are asked as usual (a turn from another window, read when it is stored).
    backend.stored = turnRows(61);
    session.refresh();
    await vi.waitFor(() => expect(session.getState().turns.at(-1)?.user?.id).toBe('u60'));
    expect(backend.requestsOf('messages_page')).toHaveLength(2);
    // And a second session of the topic asks itself.
    const again = new TopicSession(backend, 'topic-1', { throttleMs: 0, onSettled: settled });
    expect(again.getState().loaded).toBe(false);
    again.open();
    await vi.waitFor(() => expect(again.getState().loaded).toBe(true));
    expect(settled).toHaveBeenCalled();
    expect(backend.requestsOf('messages_page')).toHaveLength(3);
  });
});
