import { describe, expect, it, vi } from 'vitest';
import { ApiFailure } from '../src/backend/backend';
import { messageText } from '../src/chat/messages';
import { TopicSession, type SessionState } from '../src/chat/session';
import type { ModelRef, StoredMessage, StreamMessage, UiMessage } from '../src/protocol.gen';
import { FakeBackend } from './fake-backend';
import { lagged, snapshot, terminal, textReply, type Execution } from './stream-messages';

const NOW = '2025-01-01T00:00:00Z';
const ALPHA: ModelRef = { providerId: 'p1', model: 'alpha' };
const BETA: ModelRef = { providerId: 'p2', model: 'beta' };
const A: Execution = { executionId: 'exec-a', messageId: 'msg-a', model: ALPHA };
const B: Execution = { executionId: 'exec-b', messageId: 'msg-b', model: BETA };

function row(id: string, message: Omit<UiMessage, 'id'>, status: StoredMessage['status'], extra: Partial<StoredMessage> = {}): StoredMessage {
  return { id, topicId: 'topic-1', turnId: 'turn-1', status, message: { ...message, id }, revision: 1, createdAt: NOW, updatedAt: NOW, ...extra };
}
const text = (t: string) => ({ role: 'assistant' as const, parts: [{ type: 'step-start' as const }, { type: 'text' as const, text: t, state: 'done' as const }] });
const userRow = row('user-1', { role: 'user', parts: [{ type: 'text', text: 'Compare' }] }, 'success');

function newSession(backend: FakeBackend) {
  const session = new TopicSession(backend, 'topic-1', { throttleMs: 0, reconnectDelaysMs: [0, 0, 0] });
  const seen: SessionState[] = [];
  session.subscribe(() => seen.push(session.getState()));
  return { session, seen };
}

/** The replies on screen, by message id → text. */
function shown(state: SessionState): Record<string, string> {
  return Object.fromEntries(state.turns.flatMap((turn) => turn.replies.map((reply) => [reply.messageId, messageText(reply.message)])));
}

function interleave(a: StreamMessage[], b: StreamMessage[]): StreamMessage[] {
  return Array.from({ length: Math.max(a.length, b.length) }, (_, i) => [a[i], b[i]]).flat().filter((m): m is StreamMessage => !!m);
}

describe('TopicSession', () => {
  it('follows a two-model turn, reattaches with cursors after lagging, and never shows a chunk twice', async () => {
    const backend = new FakeBackend();
    const a = textReply(['a1 ', 'a2 ', 'a3 ', 'a4'], A);
    const b = textReply(['b1 ', 'b2 ', 'b3'], B);
    backend.stored = [userRow, row('msg-a', text(''), 'streaming', { model: ALPHA }), row('msg-b', text(''), 'streaming', { model: BETA })];
    backend.streams.push({ reply: { live: true, turnId: 'turn-1' }, messages: interleave(a.slice(0, 5), b.slice(0, 4)) });
    const { session, seen } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-a': 'a1 a2 ', 'msg-b': 'b1 ' }));
    expect(backend.requestsOf('stream_attach')).toEqual([{ topicId: 'topic-1', after: [] }]);

    backend.streams.push({ reply: { live: true, turnId: 'turn-1' }, messages: [] });
    backend.live().push(lagged());
    await vi.waitFor(() => expect(backend.requestsOf('stream_attach')).toHaveLength(2));
    expect(backend.requestsOf('stream_attach')[1]).toEqual({
      topicId: 'topic-1',
      after: [
        { executionId: 'exec-a', seq: 5 },
        { executionId: 'exec-b', seq: 4 },
      ],
    });
    await vi.waitFor(() => expect(backend.opened).toHaveLength(2));
    expect(backend.opened[0]?.closed).toBe(true);

    // The replay overlaps what we had; then both finish.
    backend.stored = [userRow, row('msg-a', text('a1 a2 a3 a4'), 'success', { model: ALPHA }), row('msg-b', text('b1 b2 b3'), 'success', { model: BETA })];
    backend.live().push(...interleave(a.slice(3), b.slice(2)), terminal('success', A, false), terminal('success', B, true));
    await vi.waitFor(() => expect(session.getState().running).toBe(false));
    await vi.waitFor(() => expect(backend.names().filter((n) => n === 'messages_page')).toHaveLength(2));
    expect(shown(session.getState())).toEqual({ 'msg-a': 'a1 a2 a3 a4', 'msg-b': 'b1 b2 b3' });

    for (const state of seen) {
      for (const [id, value] of Object.entries(shown(state))) {
        const full = id === 'msg-a' ? 'a1 a2 a3 a4' : 'b1 b2 b3';
        expect(full.startsWith(value), `${id} showed "${value}"`).toBe(true);
      }
      expect(state.turns.length).toBeLessThanOrEqual(1);
      expect(state.turns[0]?.replies.length ?? 2).toBe(2);
    }
    expect(backend.live).toThrow();
  });

  it('reattaches from its cursors when the connection drops mid-reply', async () => {
    const backend = new FakeBackend();
    const a = textReply(['one ', 'two ', 'three'], A);
    backend.stored = [userRow, row('msg-a', text(''), 'streaming')];
    backend.streams.push({ reply: { live: true, turnId: 'turn-1' }, messages: a.slice(0, 5) });
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-a': 'one two ' }));

    backend.streams.push({ reply: { live: true, turnId: 'turn-1' }, messages: a.slice(5) });
    backend.live().end(new ApiFailure({ kind: 'internal', message: 'connection reset', retryable: true }));
    await vi.waitFor(() => expect(backend.requestsOf('stream_attach')).toHaveLength(2));
    expect(backend.requestsOf('stream_attach')[1]).toEqual({ topicId: 'topic-1', after: [{ executionId: 'exec-a', seq: 5 }] });
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-a': 'one two three' }));
    expect(session.getState().error).toBeUndefined();
  });

  it('follows a turn another window started when the status feed says so', async () => {
    const backend = new FakeBackend();
    backend.stored = [];
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(session.getState().loaded).toBe(true));
    expect(backend.names()).toEqual(['messages_page', 'stream_attach']);

    // Another window sent "Compare": its rows exist by the time the status says pending.
    backend.stored = [userRow, row('msg-a', text(''), 'pending')];
    backend.streams.push({ reply: { live: true, turnId: 'turn-1' }, messages: [snapshot(2, { id: 'msg-a', role: 'assistant', parts: [{ type: 'step-start' }] }, A)] });
    session.setStatus('pending');
    await vi.waitFor(() => expect(backend.requestsOf('stream_attach')).toHaveLength(2));
    // A turn this window had not read: it reads the history for its user message.
    await vi.waitFor(() => expect(session.getState().turns[0]?.user?.id).toBe('user-1'));
    expect(session.getState().turns[0]?.replies[0]).toMatchObject({ messageId: 'msg-a', executionId: 'exec-a', live: true });
    expect(session.getState().running).toBe(true);
  });

  it('follows the next turn when the status feed announced it before this stream ended', async () => {
    const backend = new FakeBackend();
    backend.stored = [userRow, row('msg-a', text(''), 'streaming')];
    backend.streams.push({ reply: { live: true, turnId: 'turn-1' }, messages: textReply(['one'], A).slice(0, 4) });
    const { session } = newSession(backend);
    session.open();
    session.setStatus('streaming');
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-a': 'one' }));
    // Done, then the queued message's turn starts: both reach the feed before our terminal.
    session.setStatus('done');
    session.setStatus('pending');
    expect(backend.requestsOf('stream_attach')).toHaveLength(1);
    const next: Execution = { executionId: 'exec-n', messageId: 'msg-n', turnId: 'turn-2' };
    backend.streams.push({ reply: { live: true, turnId: 'turn-2' }, messages: textReply(['next'], next).slice(0, 4) });
    backend.live().push(...textReply(['one'], A).slice(4), terminal('success', A, true));
    await vi.waitFor(() => expect(backend.requestsOf('stream_attach')).toHaveLength(2));
    await vi.waitFor(() => expect(shown(session.getState())['msg-n']).toBe('next'));
    expect(session.getState().running).toBe(true);
  });

  it('sends to several models and shows the message before the backend has it', async () => {
    const backend = new FakeBackend();
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(session.getState().loaded).toBe(true));
    backend.streams.push({ reply: { live: true, turnId: 'turn-1' }, messages: [] });
    const sent = session.send('Compare', [ALPHA, BETA]);
    expect(session.getState().turns.map((turn) => turn.user && messageText(turn.user))).toEqual(['Compare']);
    expect(session.getState().sending).toBe(true);
    expect(await sent).toEqual({});
    const open = backend.requestsOf('stream_open')[0] as { messageId: string };
    expect(open).toEqual({ topicId: 'topic-1', text: 'Compare', messageId: expect.any(String), models: [ALPHA, BETA] });

    backend.stored = [{ ...userRow, id: open.messageId }];
    backend.live().push(...interleave(textReply(['x'], A).slice(0, 4), textReply(['y'], B).slice(0, 4)));
    await vi.waitFor(() => expect(session.getState().turns[0]?.replies.map((r) => r.message.id)).toEqual(['msg-a', 'msg-b']));
    const turns = session.getState().turns;
    expect(turns).toHaveLength(1);
    expect(turns[0]?.user?.id).toBe(open.messageId);
    expect(shown(session.getState())).toEqual({ 'msg-a': 'x', 'msg-b': 'y' });
  });

  it('sends files with the message and shows them at once, as the stored message will', async () => {
    const backend = new FakeBackend();
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(session.getState().loaded).toBe(true));
    backend.streams.push({ reply: { live: true, turnId: 'turn-1' }, messages: [] });
    const png = { mediaType: 'image/png', filename: 'dot.png', data: 'iVBORw0KGgo=' };
    expect(await session.send('', [ALPHA], [png])).toEqual({});
    expect(backend.requestsOf('stream_open')[0]).toEqual({
      topicId: 'topic-1',
      text: '',
      messageId: expect.any(String),
      model: ALPHA,
      attachments: [png],
    });
    expect(session.getState().turns[0]?.user?.parts).toEqual([
      { type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,iVBORw0KGgo=', filename: 'dot.png' },
    ]);
  });

  it('a reply waiting for approval keeps the topic busy, and an answered one is followed when the feed says it goes on', async () => {
    const backend = new FakeBackend();
    const waiting = row('msg-a', text(''), 'paused', { statusReason: 'awaiting_approval' });
    backend.stored = [userRow, waiting];
    const { session } = newSession(backend);
    session.open();
    session.setStatus('awaiting_approval');
    await vi.waitFor(() => expect(session.getState().loaded).toBe(true));
    expect(session.getState().running).toBe(true);
    const attaches = backend.requestsOf('stream_attach').length;

    // The user answered (here or elsewhere): the backend resumes the reply by itself.
    backend.streams.push({ reply: { live: true, turnId: 'turn-1' }, messages: textReply(['went on'], A).slice(0, 4) });
    session.setStatus('pending');
    await vi.waitFor(() => expect(backend.requestsOf('stream_attach')).toHaveLength(attaches + 1));
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-a': 'went on' }));
    expect(session.getState().turns[0]?.replies[0]?.live).toBe(true);
  });

  it('gives the text back and says why when the topic is busy', async () => {
    const backend = new FakeBackend();
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(session.getState().loaded).toBe(true));
    backend.failNext = new ApiFailure({ kind: 'conflict', message: 'a reply is still streaming in this topic', retryable: true });
    expect(await session.send('Too soon', [ALPHA])).toEqual({ unsent: 'Too soon' });
    expect(session.getState().error?.kind).toBe('conflict');
    expect(session.getState().turns).toEqual([]);
  });

  it('Stop asks the backend to abort, then shows the stored paused reply', async () => {
    const backend = new FakeBackend();
    backend.stored = [userRow, row('msg-a', text('one '), 'streaming')];
    backend.streams.push({ reply: { live: true }, messages: textReply(['one ', 'two ', 'three'], A).slice(0, 4) });
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-a': 'one ' }));
    backend.answers.set('stream_abort', () => {
      backend.stored = [userRow, row('msg-a', text('one '), 'paused', { statusReason: 'user_stop' })];
      backend.live().push(terminal('paused', A, true));
      return null;
    });
    await session.stop();
    await vi.waitFor(() => expect(session.getState().turns[0]?.replies[0]?.message.metadata).toMatchObject({ status: 'paused', statusReason: 'user_stop' }));
    expect(session.getState().running).toBe(false);
    expect(backend.names()).toContain('stream_abort');
  });

  it('retries a reply on its own listener, and on a conflict reports it and takes the live turn up again', async () => {
    const backend = new FakeBackend();
    backend.stored = [userRow, row('msg-a', text('done'), 'success'), row('msg-b', text(''), 'streaming')];
    backend.streams.push({ reply: { live: true, turnId: 'turn-1' }, messages: textReply(['b1 '], B).slice(0, 4) });
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(shown(session.getState())['msg-b']).toBe('b1 '));

    backend.failNext = new ApiFailure({ kind: 'conflict', message: 'this reply is streaming right now; stop it first', retryable: false });
    backend.streams.push({ reply: { live: true, turnId: 'turn-1' }, messages: [] });
    const failure = await session.retry('msg-b');
    expect(failure?.kind).toBe('conflict');
    expect(backend.requestsOf('stream_retry')).toEqual([{ topicId: 'topic-1', messageId: 'msg-b' }]);
    await vi.waitFor(() => expect(backend.requestsOf('stream_attach')).toHaveLength(2));
    expect(backend.requestsOf('stream_attach')[1]).toEqual({ topicId: 'topic-1', after: [{ executionId: 'exec-b', seq: 4 }] });
  });

  it('continues a paused reply: the snapshot with the kept text replaces the stored row, the rest follows', async () => {
    const backend = new FakeBackend();
    backend.stored = [userRow, row('msg-a', text('kept '), 'paused', { statusReason: 'user_stop' })];
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(session.getState().loaded).toBe(true));
    const again: Execution = { ...A, executionId: 'exec-a2' };
    const kept: UiMessage = { id: 'msg-a', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text: 'kept ', state: 'done' }] };
    backend.streams.push({
      reply: { live: true, turnId: 'turn-1' },
      messages: [
        snapshot(0, kept, again),
        ...textReply(['and ', 'more'], again)
          .slice(0, 6)
          .map((m) => (m.kind === 'chunk' && m.chunk.type === 'start' ? { ...m, chunk: { type: 'start' as const } } : m)),
      ],
    });
    expect(await session.continueReply('msg-a')).toBeUndefined();
    expect(backend.requestsOf('stream_continue')).toEqual([{ topicId: 'topic-1', messageId: 'msg-a' }]);
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-a': 'kept and more' }));
    expect(session.getState().turns[0]?.replies[0]?.live).toBe(true);
  });

  it('leaving the topic detaches without stopping the reply', async () => {
    const backend = new FakeBackend();
    backend.streams.push({ reply: { live: true }, messages: textReply(['x'], A).slice(0, 2) });
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(backend.opened).toHaveLength(1));
    session.close();
    await vi.waitFor(() => expect(backend.opened[0]?.closed).toBe(true));
    expect(backend.names()).not.toContain('stream_abort');
  });
});

describe('TopicSession and the conversation tree', () => {
  const A2: Execution = { executionId: 'exec-a2', messageId: 'msg-a2', model: ALPHA };
  const versions = (state: SessionState) => state.turns.map((turn) => turn.replies.map((reply) => reply.versions ?? [reply.messageId]));

  it('Retry shows the new version live in its column; switching to the old one keeps the stream, switching back shows it live', async () => {
    const backend = new FakeBackend();
    const first = row('msg-a', text('first answer'), 'success', { model: ALPHA });
    backend.stored = [userRow, first];
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-a': 'first answer' }));

    const retried = textReply(['second ', 'answer'], A2);
    backend.streams.push({ reply: { live: true, turnId: 'turn-1' }, messages: retried.slice(0, 4) });
    // The history read the new row causes already lists both versions.
    const second = row('msg-a2', text(''), 'streaming', { model: ALPHA, versions: ['msg-a', 'msg-a2'] });
    backend.stored = [userRow, second];
    expect(await session.retry('msg-a')).toBeUndefined();
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-a2': 'second ' }));
    expect(versions(session.getState())).toEqual([[['msg-a', 'msg-a2']]]);
    expect(session.getState().turns[0]?.replies[0]?.live).toBe(true);

    // ‹: the first version, while the second goes on streaming.
    backend.pathAfter.set('msg-a', [userRow, { ...first, versions: ['msg-a', 'msg-a2'] }]);
    expect(await session.selectVersion('msg-a')).toBeUndefined();
    expect(backend.requestsOf('message_select')).toEqual([{ topicId: 'topic-1', messageId: 'msg-a' }]);
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-a': 'first answer' }));
    backend.live().push(retried[4] as StreamMessage);
    expect(backend.live().closed).toBe(false);
    expect(session.getState().running).toBe(true);

    // ›: the second again, live, with what it wrote meanwhile.
    backend.pathAfter.set('msg-a2', [userRow, second]);
    expect(await session.selectVersion('msg-a2')).toBeUndefined();
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-a2': 'second answer' }));
    expect(session.getState().turns[0]?.replies[0]).toMatchObject({ live: true, executionId: 'exec-a2' });
    expect(backend.names()).not.toContain('stream_abort');
  });

  it('an edit replaces the edited message and its branch at once, sent with stream_edit and exactly the files kept', async () => {
    const backend = new FakeBackend();
    const later = row('user-2', { role: 'user', parts: [{ type: 'text', text: 'Later' }] }, 'success', { turnId: 'turn-2' });
    backend.stored = [userRow, row('msg-a', text('A'), 'success', { model: ALPHA }), later, row('msg-l', text('L'), 'success', { model: ALPHA, turnId: 'turn-2' })];
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(session.getState().turns).toHaveLength(2));

    backend.streams.push({ reply: { live: true, turnId: 'turn-1b' }, messages: [] });
    const png = { mediaType: 'image/png', filename: 'dot.png', data: 'iVBORw0KGgo=' };
    const sent = session.edit('user-1', 'Compare again', [png]);
    const pending = session.getState().turns;
    expect(pending.map((turn) => turn.user && messageText(turn.user))).toEqual(['Compare again']);
    expect(pending[0]?.userVersions).toEqual(['user-1', expect.any(String)]);
    expect(await sent).toEqual({});
    const request = backend.requestsOf('stream_edit')[0] as { newMessageId: string };
    expect(request).toEqual({ topicId: 'topic-1', messageId: 'user-1', text: 'Compare again', newMessageId: expect.any(String), attachments: [png] });
    expect(pending[0]?.user?.id).toBe(request.newMessageId);

    // The new branch's reply streams under it; the history then holds the new branch.
    const edited = row(request.newMessageId, { role: 'user', parts: [{ type: 'text', text: 'Compare again' }] }, 'success', {
      turnId: 'turn-1b',
      versions: ['user-1', request.newMessageId],
    });
    backend.stored = [edited, row('msg-e', text(''), 'streaming', { model: ALPHA, turnId: 'turn-1b' })];
    backend.live().push(...textReply(['new'], { executionId: 'exec-e', messageId: 'msg-e', model: ALPHA, turnId: 'turn-1b' }).slice(0, 4));
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-e': 'new' }));
    expect(session.getState().turns).toHaveLength(1);
    expect(session.getState().turns[0]?.userVersions).toEqual(['user-1', request.newMessageId]);
  });

  it('a refused edit gives the text back and leaves the conversation as it was', async () => {
    const backend = new FakeBackend();
    backend.stored = [userRow, row('msg-a', text('A'), 'success', { model: ALPHA })];
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(session.getState().turns).toHaveLength(1));
    backend.failNext = new ApiFailure({ kind: 'conflict', message: 'a reply is still streaming in this topic', retryable: true });
    expect(await session.edit('user-1', 'Other', [])).toEqual({ unsent: 'Other' });
    expect(session.getState().error?.kind).toBe('conflict');
    expect(session.getState().turns[0]?.user?.id).toBe('user-1');
    expect(shown(session.getState())).toEqual({ 'msg-a': 'A' });
  });

  it('delete reads the path again; a refused delete reports why and changes nothing', async () => {
    const backend = new FakeBackend();
    const kept = row('msg-a', text('A'), 'success', { model: ALPHA });
    backend.stored = [userRow, { ...kept, versions: ['msg-a', 'msg-a2'] }];
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(versions(session.getState())).toEqual([[['msg-a', 'msg-a2']]]));

    backend.failCall.set('message_delete', new ApiFailure({ kind: 'conflict', message: 'a reply in it is streaming', retryable: true }));
    expect((await session.deleteMessage('msg-a'))?.kind).toBe('conflict');
    expect(backend.names().filter((name) => name === 'messages_page')).toHaveLength(1);

    backend.pathAfter.set('msg-a', [userRow, row('msg-a2', text('A2'), 'success', { model: ALPHA })]);
    expect(await session.deleteMessage('msg-a')).toBeUndefined();
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-a2': 'A2' }));
    expect(versions(session.getState())).toEqual([[['msg-a2']]]);
  });

  it('fork answers the new topic; refresh reads the path another window changed', async () => {
    const backend = new FakeBackend();
    backend.stored = [userRow, row('msg-a', text('A'), 'success', { model: ALPHA })];
    const { session } = newSession(backend);
    session.open();
    await vi.waitFor(() => expect(session.getState().loaded).toBe(true));
    expect(await session.fork('msg-a')).toEqual({ topic: expect.objectContaining({ forkedFrom: { topicId: 'topic-1', messageId: 'msg-a' } }) });

    backend.stored = [userRow, row('msg-b', text('B'), 'success', { model: ALPHA, versions: ['msg-a', 'msg-b'] })];
    session.refresh();
    await vi.waitFor(() => expect(shown(session.getState())).toEqual({ 'msg-b': 'B' }));
  });
});
