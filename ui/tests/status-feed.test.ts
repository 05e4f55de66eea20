import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiFailure } from '../src/backend/backend';
import { listChange, listIsNewer, pathIsNewer, StatusFeed, topicPath, turnStarts } from '../src/status/feed';
import { FakeBackend } from './fake-backend';

const NO_LIST_CHANGES = { topics: 0, agentSessions: 0 };

const lost = new ApiFailure({ kind: 'internal', message: 'connection reset', retryable: true });

function statusOf(feed: StatusFeed, topicId: string) {
  return feed.getSnapshot().byTopic.get(topicId);
}

describe('StatusFeed', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts from the snapshot and applies each change', async () => {
    const backend = new FakeBackend();
    const feed = new StatusFeed(backend);
    let renders = 0;
    feed.subscribe(() => renders++);
    feed.start();
    feed.start(); // one subscription per window, however often it is started
    await vi.waitFor(() => expect(backend.feeds).toHaveLength(1));
    backend.feeds[0]?.push({
      kind: 'snapshot',
      statuses: [
        { topicId: 't1', status: 'done', unseen: true },
        { topicId: 't2', status: 'streaming', unseen: false },
      ],
      pathEpoch: 'e1',
      pathVersions: [],
      listVersions: NO_LIST_CHANGES,
    });
    backend.feeds[0]?.push({ kind: 'changed', topicId: 't2', status: 'done', unseen: true });
    backend.feeds[0]?.push({ kind: 'changed', topicId: 't1', status: 'done', unseen: false });
    expect(statusOf(feed, 't1')).toEqual({ topicId: 't1', status: 'done', unseen: false });
    expect(statusOf(feed, 't2')).toEqual({ topicId: 't2', status: 'done', unseen: true });
    expect(feed.getSnapshot().connected).toBe(true);
    expect(renders).toBe(3);
    expect(backend.names()).toEqual(['status_subscribe']);
  });

  it('counts the turns each topic starts, so a turn that ran and ended at once is still seen', async () => {
    const backend = new FakeBackend();
    const feed = new StatusFeed(backend);
    feed.start();
    await vi.waitFor(() => expect(backend.feeds).toHaveLength(1));
    backend.feeds[0]?.push({ kind: 'snapshot', statuses: [{ topicId: 't1', status: 'done', unseen: false }], pathEpoch: 'e1', pathVersions: [], listVersions: NO_LIST_CHANGES });
    expect(turnStarts(feed.getSnapshot(), 't1')).toBe(0);
    backend.feeds[0]?.push({ kind: 'changed', topicId: 't1', status: 'streaming', unseen: false });
    backend.feeds[0]?.push({ kind: 'changed', topicId: 't1', status: 'awaiting_approval', unseen: false });
    backend.feeds[0]?.push({ kind: 'changed', topicId: 't1', status: 'done', unseen: true });
    expect(turnStarts(feed.getSnapshot(), 't1')).toBe(1);
    backend.feeds[0]?.push({ kind: 'changed', topicId: 't1', status: 'pending', unseen: false });
    backend.feeds[0]?.push({ kind: 'changed', topicId: 't1', status: 'done', unseen: true });
    expect(statusOf(feed, 't1')?.status).toBe('done');
    expect(turnStarts(feed.getSnapshot(), 't1')).toBe(2);
    expect(turnStarts(feed.getSnapshot(), 't2')).toBe(0);
  });

  it('keeps the last path change of each topic without touching the statuses; a snapshot replaces them', async () => {
    const backend = new FakeBackend();
    const feed = new StatusFeed(backend);
    feed.start();
    await vi.waitFor(() => expect(backend.feeds).toHaveLength(1));
    expect(topicPath(feed.getSnapshot(), 't1')).toBeUndefined();
    backend.feeds[0]?.push({
      kind: 'snapshot',
      statuses: [{ topicId: 't1', status: 'done', unseen: false }],
      pathEpoch: 'e1',
      pathVersions: [{ topicId: 't1', version: 3 }],
      listVersions: NO_LIST_CHANGES,
    });
    const statuses = feed.getSnapshot().byTopic;
    expect(topicPath(feed.getSnapshot(), 't1')).toEqual({ epoch: 'e1', version: 3 });
    expect(topicPath(feed.getSnapshot(), 't2')).toEqual({ epoch: 'e1', version: 0 });

    backend.feeds[0]?.push({ kind: 'path_changed', topicId: 't1', version: 5 });
    expect(topicPath(feed.getSnapshot(), 't1')).toEqual({ epoch: 'e1', version: 5 });
    expect(topicPath(feed.getSnapshot(), 't2')).toEqual({ epoch: 'e1', version: 0 });
    // Lists that follow the statuses are not read again for a switch of versions.
    expect(feed.getSnapshot().byTopic).toBe(statuses);
    expect(statusOf(feed, 't1')).toEqual({ topicId: 't1', status: 'done', unseen: false });

    // A fresh snapshot (after a reconnect) says what changed meanwhile, and a new epoch
    // that the backend restarted.
    backend.feeds[0]?.push({ kind: 'snapshot', statuses: [], pathEpoch: 'e2', pathVersions: [{ topicId: 't2', version: 1 }], listVersions: NO_LIST_CHANGES });
    expect(topicPath(feed.getSnapshot(), 't1')).toEqual({ epoch: 'e2', version: 0 });
    expect(topicPath(feed.getSnapshot(), 't2')).toEqual({ epoch: 'e2', version: 1 });
  });

  it('keeps the last change of each list without touching the statuses; a snapshot replaces them', async () => {
    const backend = new FakeBackend();
    const feed = new StatusFeed(backend);
    feed.start();
    await vi.waitFor(() => expect(backend.feeds).toHaveLength(1));
    expect(listChange(feed.getSnapshot(), 'topics')).toBeUndefined();
    backend.feeds[0]?.push({
      kind: 'snapshot',
      statuses: [{ topicId: 't1', status: 'done', unseen: false }],
      pathEpoch: 'e1',
      pathVersions: [],
      listVersions: { topics: 4, agentSessions: 2 },
    });
    const statuses = feed.getSnapshot().byTopic;
    expect(listChange(feed.getSnapshot(), 'topics')).toEqual({ epoch: 'e1', version: 4 });
    expect(listChange(feed.getSnapshot(), 'agent_sessions')).toEqual({ epoch: 'e1', version: 2 });

    backend.feeds[0]?.push({ kind: 'list_changed', list: 'agent_sessions', version: 7 });
    expect(listChange(feed.getSnapshot(), 'agent_sessions')).toEqual({ epoch: 'e1', version: 7 });
    expect(listChange(feed.getSnapshot(), 'topics')).toEqual({ epoch: 'e1', version: 4 });
    // Told out of order (never by the backend): the newest stays.
    backend.feeds[0]?.push({ kind: 'list_changed', list: 'agent_sessions', version: 6 });
    expect(listChange(feed.getSnapshot(), 'agent_sessions')?.version).toBe(7);
    expect(feed.getSnapshot().byTopic).toBe(statuses);

    backend.feeds[0]?.push({ kind: 'snapshot', statuses: [], pathEpoch: 'e2', pathVersions: [], listVersions: NO_LIST_CHANGES });
    expect(listChange(feed.getSnapshot(), 'topics')).toEqual({ epoch: 'e2', version: 0 });
    expect(listIsNewer({ epoch: 'e2', version: 0 }, { epoch: 'e1', version: 4 })).toBe(true);
    expect(listIsNewer({ epoch: 'e1', version: 4 }, { epoch: 'e1', version: 4 })).toBe(false);
  });

  it('a change is newer than a read when it came after it or the backend restarted', () => {
    expect(pathIsNewer({ epoch: 'e1', version: 4 }, { epoch: 'e1', version: 4 })).toBe(false);
    expect(pathIsNewer({ epoch: 'e1', version: 0 }, { epoch: 'e1', version: 4 })).toBe(false);
    expect(pathIsNewer({ epoch: 'e1', version: 5 }, { epoch: 'e1', version: 4 })).toBe(true);
    expect(pathIsNewer({ epoch: 'e2', version: 0 }, { epoch: 'e1', version: 4 })).toBe(true);
  });

  it('reconnects with growing delays when the feed drops, and the new snapshot replaces what was known', async () => {
    vi.useFakeTimers();
    const backend = new FakeBackend();
    const feed = new StatusFeed(backend, { reconnectDelaysMs: [100, 1000] });
    feed.start();
    await vi.advanceTimersByTimeAsync(0);
    backend.feeds[0]?.push({ kind: 'snapshot', statuses: [{ topicId: 'gone', status: 'streaming', unseen: false }], pathEpoch: 'e1', pathVersions: [], listVersions: NO_LIST_CHANGES });

    backend.feeds[0]?.drop(lost);
    expect(feed.getSnapshot()).toMatchObject({ connected: false, error: lost });
    // While the server is down, each attempt fails and the wait grows (then stays at the last delay).
    backend.failFeedNext = lost;
    await vi.advanceTimersByTimeAsync(99);
    expect(backend.names()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(backend.names()).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(999);
    expect(backend.names()).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(backend.names()).toHaveLength(3);
    expect(backend.feeds).toHaveLength(2);

    backend.feeds[1]?.push({ kind: 'snapshot', statuses: [{ topicId: 'new', status: 'pending', unseen: false }], pathEpoch: 'e1', pathVersions: [], listVersions: NO_LIST_CHANGES });
    expect([...feed.getSnapshot().byTopic.keys()]).toEqual(['new']);
    expect(feed.getSnapshot().connected).toBe(true);

    // A message resets the backoff.
    backend.feeds[1]?.drop();
    await vi.advanceTimersByTimeAsync(100);
    expect(backend.feeds).toHaveLength(3);
  });

  it('ignores a dropped feed it has replaced, and stops for good when stopped', async () => {
    vi.useFakeTimers();
    const backend = new FakeBackend();
    const feed = new StatusFeed(backend, { reconnectDelaysMs: [10] });
    feed.start();
    await vi.advanceTimersByTimeAsync(0);
    const first = backend.feeds[0];
    first?.drop();
    await vi.advanceTimersByTimeAsync(10);
    expect(backend.feeds).toHaveLength(2);
    // The replaced connection's late messages change nothing.
    first?.pushLate({ kind: 'changed', topicId: 'stale', status: 'error', unseen: true });
    expect(statusOf(feed, 'stale')).toBeUndefined();

    feed.stop();
    expect(backend.feeds[1]?.closed).toBe(true);
    await vi.advanceTimersByTimeAsync(1000);
    expect(backend.feeds).toHaveLength(2);
  });
});
