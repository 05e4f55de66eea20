import { describe, expect, it, vi } from 'vitest';
import { ApiFailure } from '../src/backend/backend';
import { approvalStatusesChanged, ApprovalInbox, newlyPending } from '../src/chat/approvals';
import type { Approval, TopicStatus, TopicStatusEvent } from '../src/protocol.gen';
import { FakeBackend } from './fake-backend';

const approval = (id: string, extra: Partial<Approval> = {}): Approval => ({
  id,
  topicId: 'topic-1',
  topicTitle: 'Notes',
  messageId: 'msg-1',
  toolCallId: `call-${id}`,
  toolName: 'write_file',
  input: { path: `${id}.md` },
  state: 'pending',
  createdAt: '2025-01-01T00:00:00Z',
  ...extra,
});

function later<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const statuses = (entries: [string, TopicStatus][]): ReadonlyMap<string, TopicStatusEvent> =>
  new Map(entries.map(([topicId, status]) => [topicId, { topicId, status, unseen: false }]));

describe('ApprovalInbox', () => {
  it('sends one answer however often it is asked, and shows it until the list no longer has the call', async () => {
    const backend = new FakeBackend();
    let pending = [approval('a'), approval('b')];
    backend.answers.set('approvals_list', () => pending);
    const reply = later<Approval>();
    backend.answers.set('tool_approval_respond', () => reply.promise);
    const inbox = new ApprovalInbox(backend);
    await inbox.refresh();
    expect(inbox.getState().pending?.map((a) => a.id)).toEqual(['a', 'b']);

    const first = inbox.respond('a', { decision: 'approve', scope: 'once' });
    const second = inbox.respond('a', { decision: 'approve', scope: 'once' });
    expect(inbox.getState().answering.has('a')).toBe(true);
    pending = [approval('b')];
    reply.resolve(approval('a', { state: 'approved' }));
    expect(await first).toBeUndefined();
    expect(await second).toBeUndefined();
    await inbox.respond('a', { decision: 'deny' });

    expect(backend.requestsOf('tool_approval_respond')).toEqual([{ approvalId: 'a', decision: 'approve', scope: 'once' }]);
    const state = inbox.getState();
    expect(state.answered.get('a')?.state).toBe('approved');
    expect(state.answering.size).toBe(0);
    await vi.waitFor(() => expect(inbox.getState().pending?.map((a) => a.id)).toEqual(['b']));
  });

  it('sends a reason only when there is one, and edited arguments as given', async () => {
    const backend = new FakeBackend();
    backend.answers.set('approvals_list', () => []);
    backend.answers.set('tool_approval_respond', (request) => approval((request as { approvalId: string }).approvalId));
    const inbox = new ApprovalInbox(backend);
    await inbox.respond('a', { decision: 'deny', reason: '  not that file ' });
    await inbox.respond('b', { decision: 'deny', reason: '   ' });
    await inbox.respond('c', { decision: 'approve', updatedInput: { path: 'c.md' } });
    expect(backend.requestsOf('tool_approval_respond')).toEqual([
      { approvalId: 'a', decision: 'deny', reason: 'not that file' },
      { approvalId: 'b', decision: 'deny' },
      { approvalId: 'c', decision: 'approve', updatedInput: { path: 'c.md' } },
    ]);
  });

  it('keeps a failed answer open to try again, with its error', async () => {
    const backend = new FakeBackend();
    backend.answers.set('approvals_list', () => [approval('a')]);
    backend.failCall.set('tool_approval_respond', new ApiFailure({ kind: 'not_found', message: 'no approval a', retryable: false }));
    const inbox = new ApprovalInbox(backend);
    await inbox.refresh();
    const failure = await inbox.respond('a', { decision: 'approve' });
    expect(failure?.kind).toBe('not_found');
    expect(inbox.getState().failures.get('a')?.message).toBe('no approval a');
    expect(inbox.getState().answered.has('a')).toBe(false);

    backend.answers.set('tool_approval_respond', () => approval('a', { state: 'approved' }));
    expect(await inbox.respond('a', { decision: 'approve' })).toBeUndefined();
    expect(inbox.getState().failures.has('a')).toBe(false);
    expect(backend.requestsOf('tool_approval_respond')).toHaveLength(2);
  });

  it('Allow all answers each waiting call once', async () => {
    const backend = new FakeBackend();
    backend.answers.set('approvals_list', () => []);
    backend.answers.set('tool_approval_respond', (request) => approval((request as { approvalId: string }).approvalId, { state: 'approved' }));
    const inbox = new ApprovalInbox(backend);
    await Promise.all([inbox.respondAll(['a', 'b'], { decision: 'approve' }), inbox.respondAll(['a', 'b'], { decision: 'approve' })]);
    expect(backend.requestsOf('tool_approval_respond').map((r) => (r as { approvalId: string }).approvalId)).toEqual(['a', 'b']);
  });

  it('reads the list again when a topic enters or leaves "awaiting approval", and reports new calls', async () => {
    const backend = new FakeBackend();
    let pending: Approval[] = [];
    backend.answers.set('approvals_list', () => pending);
    const inbox = new ApprovalInbox(backend);
    const fresh: string[][] = [];
    inbox.onNewlyPending((list) => fresh.push(list.map((a) => a.id)));
    const reads = () => backend.requestsOf('approvals_list').length;

    inbox.followStatuses(statuses([['topic-1', 'streaming']]));
    await vi.waitFor(() => expect(reads()).toBe(1));
    inbox.followStatuses(statuses([['topic-1', 'done']]));
    inbox.followStatuses(statuses([['topic-1', 'done'], ['topic-2', 'streaming']]));
    expect(reads()).toBe(1);

    pending = [approval('a', { topicId: 'topic-2' })];
    inbox.followStatuses(statuses([['topic-1', 'done'], ['topic-2', 'awaiting_approval']]));
    await vi.waitFor(() => expect(inbox.getState().pending).toHaveLength(1));
    expect(fresh).toEqual([['a']]);

    pending = [];
    inbox.followStatuses(statuses([['topic-1', 'done'], ['topic-2', 'streaming']]));
    await vi.waitFor(() => expect(inbox.getState().pending).toHaveLength(0));
    expect(reads()).toBe(3);
  });

  it('an older list answered late does not replace a newer one', async () => {
    const backend = new FakeBackend();
    const slow = later<Approval[]>();
    let calls = 0;
    backend.answers.set('approvals_list', () => (++calls === 1 ? slow.promise : [approval('new')]));
    const inbox = new ApprovalInbox(backend);
    const first = inbox.refresh();
    await inbox.refresh();
    slow.resolve([approval('old')]);
    await first;
    expect(inbox.getState().pending?.map((a) => a.id)).toEqual(['new']);
  });
});

describe('newlyPending and approvalStatusesChanged', () => {
  it('nothing is new on the first read', () => {
    expect(newlyPending(undefined, [approval('a')])).toEqual([]);
    expect(newlyPending([approval('a')], [approval('a'), approval('b')]).map((a) => a.id)).toEqual(['b']);
  });

  it('only entering or leaving awaiting_approval counts', () => {
    const before = statuses([['t', 'streaming']]);
    expect(approvalStatusesChanged(before, statuses([['t', 'done']]))).toBe(false);
    expect(approvalStatusesChanged(before, statuses([['t', 'awaiting_approval']]))).toBe(true);
    expect(approvalStatusesChanged(statuses([['t', 'awaiting_approval']]), statuses([]))).toBe(true);
    expect(approvalStatusesChanged(before, before)).toBe(false);
  });
});
