import type { ModelRef, StoredMessage } from '../protocol.gen';
import { storedToChat, type ChatMessage } from './messages';
import type { LiveReply } from './replies';

/** One model's reply as shown: the stored row, or the live stream's version of it. */
export interface ReplyView {
  messageId: string;
  /** The execution writing (or that last wrote) this reply, when this window follows it. */
  executionId?: string;
  model?: ModelRef;
  message: ChatMessage;
  /** Being written right now. */
  live: boolean;
  /** For a live reply: the `seq` of the snapshot its stream starts from (0: its first chunk). */
  base?: number;
}

/** A user message and the replies of every model asked. */
export interface TurnView {
  key: string;
  turnId?: string;
  user?: ChatMessage;
  replies: ReplyView[];
}

export interface ConversationInput {
  stored: readonly StoredMessage[];
  live: readonly LiveReply[];
  /** The turn the live stream is on; other turns' live replies are frozen. */
  liveTurnId: string | undefined;
  /** A message this window sent that the stored history may not hold yet. */
  pendingUser: ChatMessage | undefined;
  /** The execution that last wrote each reply row, where known. */
  executionIds?: ReadonlyMap<string, string>;
}

/**
 * Decides what the conversation shows. This is the only place that merges the stored
 * history with the live stream: a stored row is shown as stored unless this window
 * follows an execution of it (then the stream's version wins); live replies whose rows
 * were not read yet join their turn, or a trailing turn under the message just sent.
 *
 * Pass the previous result to keep unchanged turns and replies as the same objects, so
 * memoized views of finished messages do not re-render.
 */
export function buildConversation(input: ConversationInput, previous: readonly TurnView[] = []): TurnView[] {
  const liveByRow = new Map(input.live.map((reply) => [reply.messageId, reply]));
  const turns: TurnView[] = [];
  const byTurn = new Map<string, TurnView>();
  let last: TurnView | undefined;
  const storedIds = new Set<string>();

  const startTurn = (key: string, turnId: string | undefined, user: ChatMessage | undefined): TurnView => {
    const turn: TurnView = { key, replies: [] };
    if (turnId !== undefined) {
      turn.turnId = turnId;
      byTurn.set(turnId, turn);
    }
    if (user) turn.user = user;
    turns.push(turn);
    return turn;
  };

  for (const row of input.stored) {
    storedIds.add(row.id);
    if (row.message.role !== 'assistant') {
      last = startTurn(row.id, row.turnId, storedToChat(row));
      continue;
    }
    const target = (row.turnId !== undefined ? byTurn.get(row.turnId) : undefined) ?? last ?? startTurn(row.id, row.turnId, undefined);
    target.replies.push(replyView(row, liveByRow.get(row.id), input.liveTurnId, input.executionIds?.get(row.id)));
    liveByRow.delete(row.id);
  }

  const pending = input.pendingUser && !storedIds.has(input.pendingUser.id) ? input.pendingUser : undefined;
  let pendingShown = false;
  for (const reply of liveByRow.values()) {
    let turn = byTurn.get(reply.turnId);
    if (!turn) {
      const user: ChatMessage | undefined = pending && !pendingShown ? pending : undefined;
      pendingShown ||= user !== undefined;
      turn = startTurn(user?.id ?? reply.turnId, reply.turnId, user);
    }
    turn.replies.push(replyView(undefined, reply, input.liveTurnId));
  }
  if (pending && !pendingShown) startTurn(pending.id, undefined, pending);

  return reuse(turns, previous);
}

function replyView(
  row: StoredMessage | undefined,
  live: LiveReply | undefined,
  liveTurnId: string | undefined,
  executionId?: string,
): ReplyView {
  if (live) {
    const view: ReplyView = {
      messageId: live.messageId,
      executionId: live.executionId,
      model: live.model,
      message: live.message,
      live: live.terminal === undefined && live.turnId === liveTurnId,
    };
    if (view.live) view.base = live.base;
    return view;
  }
  const stored = row as StoredMessage;
  const view: ReplyView = { messageId: stored.id, message: storedToChat(stored), live: false };
  if (stored.model) view.model = stored.model;
  if (executionId !== undefined) view.executionId = executionId;
  return view;
}

/** Keeps earlier objects for turns and replies that did not change. */
function reuse(turns: TurnView[], previous: readonly TurnView[]): TurnView[] {
  if (previous.length === 0) return turns;
  const before = new Map(previous.map((turn) => [turn.key, turn]));
  return turns.map((turn) => {
    const old = before.get(turn.key);
    if (!old) return turn;
    const oldReplies = new Map(old.replies.map((reply) => [reply.messageId, reply]));
    const replies = turn.replies.map((reply) => {
      const prior = oldReplies.get(reply.messageId);
      return prior && sameReply(prior, reply) ? prior : reply;
    });
    const unchanged =
      old.user === turn.user &&
      old.turnId === turn.turnId &&
      old.replies.length === replies.length &&
      replies.every((reply, index) => reply === old.replies[index]);
    return unchanged ? old : { ...turn, replies };
  });
}

function sameReply(a: ReplyView, b: ReplyView): boolean {
  return (
    a.message === b.message &&
    a.live === b.live &&
    a.base === b.base &&
    a.executionId === b.executionId &&
    a.model?.providerId === b.model?.providerId &&
    a.model?.model === b.model?.model
  );
}
