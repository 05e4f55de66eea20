import { describe, expect, it, vi } from 'vitest';
import { ApiFailure } from '../src/backend/backend';
import { readNewestPageEarly } from '../src/chat/earlyPage';
import { TopicSession } from '../src/chat/session';
import type { StoredMessage } from '../src/protocol.gen';
import { FakeBackend } from './fake-backend';

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
  it('reads as many turns as asked, and does not read a cursor again after its read failed until the error is dismissed', async () => {
    const backend = new FakeBackend();
    backend.stored = turnRows(400);
    const session = new TopicSession(backend, 'topic-1', { throttleMs: 0 });
    session.open();
    await vi.waitFor(() => expect(session.getState().loaded).toBe(true));
    backend.failCall.set('messages_page', new ApiFailure({ kind: 'internal', message: 'database busy', retryable: true }));
    await session.loadOlder(200);
    expect(session.getState().error?.message).toBe('database busy');
    await session.loadOlder(200);
    expect(backend.requestsOf('messages_page')).toHaveLength(2);
    session.dismissError();
    await session.loadOlder(200);
    expect(backend.requestsOf('messages_page')[2]).toEqual({ topicId: 'topic-1', before: 'u350', turns: 200 });
    expect(firstUser(session)).toBe('u150');
  });
  it('takes the page read early for the topic in the address, once, unless it shows a reply being written', async () => {
    const backend = new FakeBackend();
    backend.stored = turnRows(10);
    readNewestPageEarly(backend, 'topic-1');
    expect(backend.requestsOf('messages_page')).toHaveLength(1);
    const session = new TopicSession(backend, 'topic-1', { throttleMs: 0 });
    session.open();
    await vi.waitFor(() => expect(session.getState().turns).toHaveLength(10));
    expect(backend.requestsOf('messages_page')).toHaveLength(1);
    session.reload();
    await vi.waitFor(() => expect(backend.requestsOf('messages_page')).toHaveLength(2));

    const live = turnRows(3);
    live[5] = { ...live[5]!, status: 'streaming' };
    backend.stored = live;
    readNewestPageEarly(backend, 'topic-2');
    const other = new TopicSession(backend, 'topic-2', { throttleMs: 0 });
    other.open();
    await vi.waitFor(() => expect(other.getState().loaded).toBe(true));
    expect(backend.requestsOf('messages_page')).toHaveLength(4);
  });
});
