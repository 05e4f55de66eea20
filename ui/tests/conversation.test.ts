import { describe, expect, it } from 'vitest';
import { buildConversation } from '../src/chat/conversation';
import type { ChatMessage } from '../src/chat/messages';
import type { LiveReply } from '../src/chat/replies';
import type { StoredMessage, UiMessage } from '../src/protocol.gen';

const NOW = '2025-01-01T00:00:00Z';

function row(id: string, role: UiMessage['role'], turnId: string, text: string, status: StoredMessage['status'] = 'success'): StoredMessage {
  return {
    id,
    topicId: 'topic-1',
    turnId,
    status,
    model: role === 'assistant' ? { providerId: 'p1', model: `model-${id}` } : undefined,
    message: { id, role, parts: [{ type: 'text', text }] },
    revision: 1,
    createdAt: NOW,
    updatedAt: NOW,
  } as StoredMessage;
}

function live(messageId: string, turnId: string, text: string, terminal?: LiveReply['terminal'], model = 'live'): LiveReply {
  const reply: LiveReply = {
    executionId: `exec-${messageId}`,
    messageId,
    turnId,
    model: { providerId: 'p1', model },
    seq: 3,
    retrying: undefined,
    progress: new Map(),
    message: { id: messageId, role: 'assistant', parts: [{ type: 'text', text }] },
  };
  if (terminal) reply.terminal = terminal;
  return reply;
}

const outline = (turns: ReturnType<typeof buildConversation>) =>
  turns.map((turn) => [turn.user?.id ?? null, ...turn.replies.map((reply) => `${reply.messageId}${reply.live ? '*' : ''}`)]);

describe('buildConversation', () => {
  const stored = [
    row('u1', 'user', 'turn-1', 'Q1'),
    row('a1', 'assistant', 'turn-1', 'A1'),
    row('b1', 'assistant', 'turn-1', 'B1'),
    row('u2', 'user', 'turn-2', 'Q2'),
    row('a2', 'assistant', 'turn-2', 'A2'),
    // A model added to the first turn later is stored last but belongs to turn 1.
    row('c1', 'assistant', 'turn-1', 'C1'),
  ];

  it('groups replies under their turn, wherever the row is stored', () => {
    expect(outline(buildConversation({ stored, live: [], liveTurnId: undefined, pendingUser: undefined }))).toEqual([
      ['u1', 'a1', 'b1', 'c1'],
      ['u2', 'a2'],
    ]);
  });

  it("shows the stream's version of a row it follows, live only while its turn runs", () => {
    const turns = buildConversation({
      stored,
      live: [live('a1', 'turn-1', 'A1 again'), live('b1', 'turn-1', 'B1', 'success')],
      liveTurnId: 'turn-1',
      pendingUser: undefined,
    });
    expect(outline(turns)[0]).toEqual(['u1', 'a1*', 'b1', 'c1']);
    expect(turns[0]?.replies[0]).toMatchObject({ executionId: 'exec-a1', message: { parts: [{ type: 'text', text: 'A1 again' }] } });
  });

  it('puts replies of a turn not read yet under the message just sent', () => {
    const pendingUser: ChatMessage = { id: 'u3', role: 'user', parts: [{ type: 'text', text: 'Q3' }] };
    const waiting = buildConversation({ stored, live: [], liveTurnId: undefined, pendingUser });
    expect(outline(waiting).at(-1)).toEqual(['u3']);
    const streaming = buildConversation({ stored, live: [live('x3', 'turn-3', '', undefined, 'x'), live('y3', 'turn-3', '', undefined, 'y')], liveTurnId: 'turn-3', pendingUser });
    expect(outline(streaming).at(-1)).toEqual(['u3', 'x3*', 'y3*']);
    // The same React key before and after the replies arrive: the message is not remounted.
    expect(streaming.at(-1)?.key).toBe(waiting.at(-1)?.key);
  });

  it('keeps unchanged turns and replies as the same objects', () => {
    const input = { stored, live: [live('a2', 'turn-2', 'A2 more')], liveTurnId: 'turn-2', pendingUser: undefined };
    const first = buildConversation(input);
    const second = buildConversation({ ...input, live: [live('a2', 'turn-2', 'A2 more and more')] }, first);
    expect(second[0]).toBe(first[0]);
    expect(second[1]).not.toBe(first[1]);
    expect(second[1]?.user).toBe(first[1]?.user);
  });
});

describe('buildConversation with versions', () => {
  const versioned = (stored: StoredMessage, versions: string[]): StoredMessage => ({ ...stored, versions });
  /** A reply of model `m` (every version of a column has the same model). */
  const reply = (id: string, turnId: string, text: string, model: string, status: StoredMessage['status'] = 'success') => ({
    ...row(id, 'assistant', turnId, text, status),
    model: { providerId: 'p1', model },
  });
  const versionsOf = (turns: ReturnType<typeof buildConversation>) =>
    turns.map((turn) => [turn.userVersions ?? null, ...turn.replies.map((r) => r.versions ?? null)]);

  it('shows the active version of each column with every version it has', () => {
    const turns = buildConversation({
      stored: [versioned(row('u1b', 'user', 'turn-1b', 'Q1 edited'), ['u1', 'u1b']), versioned(reply('a1c', 'turn-1b', 'A', 'm'), ['a1', 'a1b', 'a1c'])],
      live: [],
      liveTurnId: undefined,
      pendingUser: undefined,
    });
    expect(outline(turns)).toEqual([['u1b', 'a1c']]);
    expect(versionsOf(turns)).toEqual([[['u1', 'u1b'], ['a1', 'a1b', 'a1c']]]);
  });

  it('shows a retry as a new version in its column before the history holds it', () => {
    const stored = [row('u1', 'user', 'turn-1', 'Q1'), reply('a1', 'turn-1', 'A1', 'm'), reply('b1', 'turn-1', 'B1', 'n')];
    const turns = buildConversation({ stored, live: [live('a2', 'turn-1', 'A again', undefined, 'm')], liveTurnId: 'turn-1', pendingUser: undefined });
    // The new version takes the column of the reply it replaces, live: `2/2`.
    expect(outline(turns)).toEqual([['u1', 'a2*', 'b1']]);
    expect(turns[0]?.replies[0]?.versions).toEqual(['a1', 'a2']);
  });

  it('keeps a version the user switched away from streaming, hidden, and shows it live again when switched back', () => {
    const user = row('u1', 'user', 'turn-1', 'Q1');
    const streaming = live('a2', 'turn-1', 'A again, still writing', undefined, 'm');
    // Switched to the first version while the second streams.
    const older = buildConversation({
      stored: [user, versioned(reply('a1', 'turn-1', 'A1', 'm'), ['a1', 'a2'])],
      live: [streaming],
      liveTurnId: 'turn-1',
      pendingUser: undefined,
    });
    expect(outline(older)).toEqual([['u1', 'a1']]);
    expect(older[0]?.replies[0]).toMatchObject({ live: false, versions: ['a1', 'a2'], message: { parts: [{ text: 'A1' }] } });
    // Back to the second: the stream's version of it, live.
    const newer = buildConversation({
      stored: [user, versioned(reply('a2', 'turn-1', '', 'm', 'streaming'), ['a1', 'a2'])],
      live: [streaming],
      liveTurnId: 'turn-1',
      pendingUser: undefined,
    });
    expect(outline(newer)).toEqual([['u1', 'a2*']]);
    expect(newer[0]?.replies[0]).toMatchObject({ executionId: 'exec-a2', versions: ['a1', 'a2'], message: { parts: [{ text: 'A again, still writing' }] } });
  });

  it('still gives a model added to the turn its own column', () => {
    const stored = [row('u1', 'user', 'turn-1', 'Q1'), versioned(reply('a1', 'turn-1', 'A1', 'm'), ['a0', 'a1'])];
    const turns = buildConversation({ stored, live: [live('c1', 'turn-1', 'C', undefined, 'other')], liveTurnId: 'turn-1', pendingUser: undefined });
    expect(outline(turns)).toEqual([['u1', 'a1', 'c1*']]);
  });

  it('hides live replies of a turn that left the active path', () => {
    const first = [row('u1', 'user', 'turn-1', 'Q1'), reply('a1', 'turn-1', 'A1', 'm')];
    const branch = [...first, row('u2', 'user', 'turn-2', 'Q2'), reply('a2', 'turn-2', '', 'm', 'streaming')];
    const streaming = live('a2', 'turn-2', 'still going', undefined, 'm');
    const knownTurns = new Set(['turn-1', 'turn-2']);
    const on = buildConversation({ stored: branch, live: [streaming], liveTurnId: 'turn-2', pendingUser: undefined, knownTurns });
    expect(outline(on)).toEqual([['u1', 'a1'], ['u2', 'a2*']]);
    // The user switched the first message to another version: turn 2 is on the other branch.
    const off = buildConversation({ stored: first, live: [streaming], liveTurnId: 'turn-2', pendingUser: undefined, knownTurns });
    expect(outline(off)).toEqual([['u1', 'a1']]);
  });

  it('shows an edit in place of the edited message, with the branch below it gone, until the history holds it', () => {
    const stored = [
      row('u1', 'user', 'turn-1', 'Q1'),
      reply('a1', 'turn-1', 'A1', 'm'),
      row('u2', 'user', 'turn-2', 'Q2'),
      reply('a2', 'turn-2', 'A2', 'm'),
      row('u3', 'user', 'turn-3', 'Q3'),
      reply('a3', 'turn-3', 'A3', 'm'),
      // A model added to the first turn later: stored last, but not on the edited branch.
      reply('c1', 'turn-1', 'C1', 'other'),
    ];
    const pendingUser: ChatMessage = { id: 'u2b', role: 'user', parts: [{ type: 'text', text: 'Q2 edited' }] };
    const knownTurns = new Set(['turn-1', 'turn-2', 'turn-3']);
    const input = { stored, live: [], liveTurnId: undefined, pendingUser, pendingEdit: { editedId: 'u2' }, knownTurns };
    const waiting = buildConversation(input);
    expect(outline(waiting)).toEqual([['u1', 'a1', 'c1'], ['u2b']]);
    expect(waiting[1]?.userVersions).toEqual(['u2', 'u2b']);
    const streaming = buildConversation({ ...input, live: [live('a2b', 'turn-2b', 'new', undefined, 'm')], liveTurnId: 'turn-2b' }, waiting);
    expect(outline(streaming)).toEqual([['u1', 'a1', 'c1'], ['u2b', 'a2b*']]);
    expect(streaming[1]?.key).toBe(waiting[1]?.key);
    expect(streaming[0]).toBe(waiting[0]);
  });

  it('keeps turns whose versions did not change as the same objects across reads', () => {
    const stored = () => [versioned(row('u1', 'user', 'turn-1', 'Q1'), ['u0', 'u1']), versioned(reply('a1', 'turn-1', 'A1', 'm'), ['a0', 'a1'])];
    const first = buildConversation({ stored: stored(), live: [], liveTurnId: undefined, pendingUser: undefined });
    const again = stored();
    // The same rows read again are new objects with equal content: only the messages differ.
    const second = buildConversation({ stored: again, live: [], liveTurnId: undefined, pendingUser: undefined }, first);
    expect(second[0]?.userVersions).toBe(first[0]?.userVersions);
  });
});
