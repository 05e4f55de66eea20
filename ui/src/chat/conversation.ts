import type { ModelRef, StoredMessage } from '../protocol.gen';
import { storedToChat, type ChatMessage } from './messages';
import type { LiveReply } from './replies';
import type { Retrying } from './retrying';
import type { ToolProgressByCall } from './tools';

/** One model's reply as shown: the stored row, or the live stream's version of it. */
export interface ReplyView {
  messageId: string;
  /** The execution writing (or that last wrote) this reply, when this window follows it. */
  executionId?: string;
  model?: ModelRef;
  message: ChatMessage;
  /** Being written right now. */
  live: boolean;
  /** A live reply's "retrying" notice (the backend retries the provider). */
  retrying?: Retrying;
  /** A live reply's running tool calls' progress. */
  progress?: ToolProgressByCall;
  /** Every version of this reply (this model's replies to the turn), oldest first; absent: only one. */
  versions?: readonly string[];
}

/** A user message and the replies of every model asked. */
export interface TurnView {
  key: string;
  turnId?: string;
  user?: ChatMessage;
  /** Every version of the user message (its edits), oldest first; absent: only one. */
  userVersions?: readonly string[];
  /** The user message was just sent and the stored history does not hold it yet. */
  unsaved?: boolean;
  replies: ReplyView[];
}

/** A user message being edited: its new version replaces it and everything after it. */
export interface PendingEdit {
  /** The user message the new version is made from. */
  editedId: string;
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
  /** `pendingUser` is a new version of this stored user message (an edit), not a new turn. */
  pendingEdit?: PendingEdit | undefined;
  /**
   * Every turn some earlier read of the stored history held. A live reply of such a turn
   * that the current history lacks is off the active path (another branch, or deleted):
   * it is kept streaming but not shown.
   */
  knownTurns?: ReadonlySet<string>;
}

/**
 * Decides what the conversation shows. This is the only place that merges the stored
 * history (the topic's active path) with the live stream: a stored row is shown as stored
 * unless this window follows an execution of it (then the stream's version wins); live
 * replies whose rows were not read yet join their turn, or a trailing turn under the
 * message just sent.
 *
 * One version per model column: a live reply of a model the turn shows already is a
 * newer version (a retry the history does not hold yet) and takes that column, unless
 * the stored reply lists it among its versions, i.e. the user picked another version
 * (then it streams on, hidden). Live replies of turns off the active path are hidden too.
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
  const editedId = input.pendingEdit?.editedId;
  /** The edited message's versions, once its row is reached (the rows after it are replaced). */
  let edited: readonly string[] | undefined;

  const startTurn = (key: string, turnId: string | undefined, user: ChatMessage | undefined, versions?: readonly string[]): TurnView => {
    const turn: TurnView = { key, replies: [] };
    if (turnId !== undefined) {
      turn.turnId = turnId;
      byTurn.set(turnId, turn);
    }
    if (user) turn.user = user;
    if (versions && versions.length > 1) turn.userVersions = versions;
    turns.push(turn);
    return turn;
  };

  for (const row of input.stored) {
    storedIds.add(row.id);
    if (row.id === editedId) edited = row.versions ?? [row.id];
    if (row.message.role !== 'assistant') {
      // After the edited message only replies a model added to an earlier turn remain.
      if (edited === undefined) last = startTurn(row.id, row.turnId, storedToChat(row), row.versions);
      continue;
    }
    const live = liveByRow.get(row.id);
    liveByRow.delete(row.id);
    const target = (row.turnId !== undefined ? byTurn.get(row.turnId) : undefined) ?? (edited === undefined ? last : undefined);
    if (edited !== undefined && target === undefined) continue;
    (target ?? startTurn(row.id, row.turnId, undefined)).replies.push(replyView(row, live, input.liveTurnId, input.executionIds?.get(row.id)));
  }

  const pending = input.pendingUser && !storedIds.has(input.pendingUser.id) ? input.pendingUser : undefined;
  const pendingVersions = pending && edited ? [...edited, pending.id] : undefined;
  let pendingShown = false;
  for (const reply of liveByRow.values()) {
    let turn = byTurn.get(reply.turnId);
    if (!turn) {
      // A turn an earlier read held and this one lacks is on another branch, or deleted.
      if (input.knownTurns?.has(reply.turnId)) continue;
      const user: ChatMessage | undefined = pending && !pendingShown ? pending : undefined;
      pendingShown ||= user !== undefined;
      turn = startTurn(user?.id ?? reply.turnId, reply.turnId, user, user ? pendingVersions : undefined);
      if (user) turn.unsaved = true;
      turn.replies.push(replyView(undefined, reply, input.liveTurnId));
      continue;
    }
    addVersion(turn, replyView(undefined, reply, input.liveTurnId));
  }
  if (pending && !pendingShown) startTurn(pending.id, undefined, pending, pendingVersions).unsaved = true;

  return reuse(turns, previous);
}

/**
 * A live reply whose row the history lacks, in a turn the history shows: a model added to
 * the turn gets its own column; a newer version of a column's reply takes its place; a
 * version the user switched away from is not shown.
 */
function addVersion(turn: TurnView, live: ReplyView): void {
  const column = turn.replies.findIndex((reply) => sameModel(reply.model, live.model));
  const shown = turn.replies[column];
  if (!shown) {
    turn.replies.push(live);
    return;
  }
  const versions = shown.versions ?? [shown.messageId];
  if (versions.includes(live.messageId)) return;
  turn.replies[column] = { ...live, versions: [...versions, live.messageId] };
}

function sameModel(a: ModelRef | undefined, b: ModelRef | undefined): boolean {
  return a !== undefined && b !== undefined && a.providerId === b.providerId && a.model === b.model;
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
    if (view.live) {
      if (live.retrying) view.retrying = live.retrying;
      if (live.progress.size > 0) view.progress = live.progress;
    }
    if (row?.versions && row.versions.length > 1) view.versions = row.versions;
    return view;
  }
  const stored = row as StoredMessage;
  const view: ReplyView = { messageId: stored.id, message: storedToChat(stored), live: false };
  if (stored.model) view.model = stored.model;
  if (executionId !== undefined) view.executionId = executionId;
  if (stored.versions && stored.versions.length > 1) view.versions = stored.versions;
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
      old.unsaved === turn.unsaved &&
      sameIds(old.userVersions, turn.userVersions) &&
      old.replies.length === replies.length &&
      replies.every((reply, index) => reply === old.replies[index]);
    if (unchanged) return old;
    const next: TurnView = { ...turn, replies };
    // Versions are rebuilt on every read; equal ones keep the earlier array.
    if (old.userVersions && sameIds(old.userVersions, turn.userVersions)) next.userVersions = old.userVersions;
    return next;
  });
}

function sameIds(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  return a.every((id, index) => id === b[index]);
}

function sameReply(a: ReplyView, b: ReplyView): boolean {
  return (
    a.message === b.message &&
    a.live === b.live &&
    a.retrying === b.retrying &&
    a.progress === b.progress &&
    a.executionId === b.executionId &&
    sameIds(a.versions, b.versions) &&
    a.model?.providerId === b.model?.providerId &&
    a.model?.model === b.model?.model
  );
}
