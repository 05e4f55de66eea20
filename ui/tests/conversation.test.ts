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

function live(messageId: string, turnId: string, text: string, terminal?: LiveReply['terminal']): LiveReply {
  const reply: LiveReply = {
    executionId: `exec-${messageId}`,
    messageId,
    turnId,
    model: { providerId: 'p1', model: 'live' },
    seq: 3,
    base: 0,
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
    const streaming = buildConversation({ stored, live: [live('x3', 'turn-3', ''), live('y3', 'turn-3', '')], liveTurnId: 'turn-3', pendingUser });
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
