import type { ExecutionCursor, ModelRef, StreamMessage, TerminalStatus, UiChunk, UiMessage } from '../protocol.gen';
import { MessageFold } from './fold';
import { retryingAfter, type Retrying } from './retrying';
import { progressAfter, type ToolProgressByCall } from './tools';

/**
 * One model's reply as the live stream has built it so far: the one state a live reply is
 * shown from. Its message (the AI SDK's parts), the transient "retrying" notice and tool
 * progress all come from the same fold of the execution's chunks, in `seq` order.
 */
export interface LiveReply {
  executionId: string;
  /** The reply's row: a retry or continue runs a new execution on the same row. */
  messageId: string;
  turnId: string;
  model: ModelRef;
  /** The last `seq` folded in. */
  seq: number;
  message: UiMessage;
  /** The backend is retrying the provider (a transient `data-retrying` chunk); cleared by content. */
  retrying: Retrying | undefined;
  /** Running tool calls' progress (transient `data-tool-progress` chunks), until each call's output. */
  progress: ToolProgressByCall;
  /** Set once the execution's terminal arrived. */
  terminal?: TerminalStatus;
}

const NO_PROGRESS: ToolProgressByCall = new Map();

/** What reading one message means for the listener. */
export interface ReadEffect {
  /** What the user sees changed. */
  changed: boolean;
  /** Chunks were lost (a lagged notice or a gap in `seq`): attach again with `cursors()`. */
  reattach: boolean;
  /** The topic's last live execution has ended. */
  topicDone: boolean;
  /** A turn or a reply row this reader had not seen appeared (e.g. another window started it). */
  discovered: boolean;
}

const NOTHING: ReadEffect = { changed: false, reattach: false, topicDone: false, discovered: false };

interface Execution {
  reply: LiveReply;
  fold: MessageFold;
}

/**
 * Demultiplexes one topic's StreamMessages into one reply per execution. A turn with
 * several models interleaves their chunks on one stream; each execution keeps its own
 * fold and `seq`: a snapshot replaces that execution's message, a chunk at or below the
 * last `seq` is a duplicate and dropped, a chunk past `seq + 1` means something was
 * lost and asks for a reattach from the cursors.
 *
 * A topic runs one turn at a time. When messages of another turn arrive, the earlier
 * turn's replies stay readable (frozen) until {@link LiveReplies.prune} drops them
 * once the stored history covers them.
 */
export class LiveReplies {
  private readonly executions = new Map<string, Execution>();
  /** The last execution seen per reply row; kept after pruning, to name what wrote a row. */
  private readonly lastExecution = new Map<string, string>();
  private currentTurn: string | undefined;
  private replyList: LiveReply[] = [];
  private dirty = false;

  get turnId(): string | undefined {
    return this.currentTurn;
  }

  read(message: StreamMessage): ReadEffect {
    switch (message.kind) {
      case 'lagged':
        return { ...NOTHING, reattach: true };
      case 'snapshot': {
        const discovered = this.enterTurn(message.turnId) || !this.knowsRow(message.messageId);
        this.replaceRow(message.messageId, message.executionId);
        // The snapshot replaces whatever this reader had of the execution: its message holds
        // every part (answered approvals included), and transient notices start over.
        this.executions.set(message.executionId, started(message, MessageFold.fromSnapshot(message.message), message.seq));
        this.dirty = true;
        return { ...NOTHING, changed: true, discovered };
      }
      case 'chunk': {
        let execution = this.executions.get(message.executionId);
        let discovered = false;
        if (!execution) {
          // A new execution is followed from its first chunk; anything later without a
          // snapshot first means we missed its beginning.
          if (message.seq !== 1) return { ...NOTHING, reattach: true };
          discovered = this.enterTurn(message.turnId) || !this.knowsRow(message.messageId);
          this.replaceRow(message.messageId, message.executionId);
          execution = started(message, new MessageFold(message.messageId), 0);
          this.executions.set(message.executionId, execution);
        }
        const { reply } = execution;
        if (message.seq <= reply.seq) return NOTHING;
        if (message.seq > reply.seq + 1) return { ...NOTHING, reattach: true };
        execution.fold.apply(message.chunk);
        const next = afterChunk(reply, message.chunk, Date.now());
        const changed = execution.fold.message !== reply.message || next.retrying !== reply.retrying || next.progress !== reply.progress;
        execution.reply = { ...next, seq: message.seq, message: execution.fold.message };
        this.dirty = true;
        return { ...NOTHING, changed: changed || discovered, discovered };
      }
      case 'terminal': {
        const execution = this.executions.get(message.executionId);
        if (execution && execution.reply.terminal !== message.status) {
          // Nothing is retried or in progress after the end.
          execution.reply = { ...execution.reply, retrying: undefined, progress: NO_PROGRESS, terminal: message.status };
          this.dirty = true;
        }
        return { ...NOTHING, changed: execution !== undefined, topicDone: message.isTopicDone };
      }
    }
  }

  /** Where this listener is, per execution of the live turn: what `stream_attach` takes as `after`. */
  cursors(): ExecutionCursor[] {
    return this.replies()
      .filter((reply) => reply.turnId === this.currentTurn)
      .map((reply) => ({ executionId: reply.executionId, seq: reply.seq }));
  }

  /** The latest execution of each reply row, in the order they appeared. */
  replies(): LiveReply[] {
    if (this.dirty) {
      this.replyList = [...this.executions.values()].map((execution) => execution.reply);
      this.dirty = false;
    }
    return this.replyList;
  }

  /** Some reply of the live turn is still being written. */
  running(): boolean {
    return this.replies().some((reply) => reply.turnId === this.currentTurn && reply.terminal === undefined);
  }

  /**
   * Replies the stored history can now stand for: finished ones and those of an
   * earlier turn. Read before re-reading the history, then pass to {@link prune}.
   */
  settled(): string[] {
    return this.replies()
      .filter((reply) => reply.terminal !== undefined || reply.turnId !== this.currentTurn)
      .map((reply) => reply.executionId);
  }

  /**
   * The backend says nothing is live any more (an attach answered `live: false`): the
   * replies this reader still thought running have ended while it was not listening.
   */
  leaveTurn(): void {
    this.currentTurn = undefined;
  }

  /** Forgets these executions: the stored rows, re-read meanwhile, show them now. */
  prune(executionIds: readonly string[]): boolean {
    let removed = false;
    for (const id of executionIds) removed = this.executions.delete(id) || removed;
    if (removed) this.dirty = true;
    return removed;
  }

  /** True when a new turn began (the previous one's replies are kept, frozen). */
  private enterTurn(turnId: string): boolean {
    if (this.currentTurn === turnId) return false;
    this.currentTurn = turnId;
    return true;
  }

  private knowsRow(messageId: string): boolean {
    for (const { reply } of this.executions.values()) if (reply.messageId === messageId) return true;
    return false;
  }

  /** The execution that last wrote this reply row, as far as this reader saw. */
  get executionIds(): ReadonlyMap<string, string> {
    return this.lastExecution;
  }

  /** A newer execution of a row (retry, continue) supersedes the earlier one. */
  private replaceRow(messageId: string, executionId: string): void {
    this.lastExecution.set(messageId, executionId);
    for (const [id, execution] of this.executions) {
      if (execution.reply.messageId === messageId && id !== executionId) this.executions.delete(id);
    }
  }
}

/** An execution as this reader first meets it: its fold so far, read up to `seq`. */
function started(message: Extract<StreamMessage, { kind: 'snapshot' | 'chunk' }>, fold: MessageFold, seq: number): Execution {
  const { executionId, messageId, turnId, model } = message;
  return {
    fold,
    reply: { executionId, messageId, turnId, model, seq, message: fold.message, retrying: undefined, progress: NO_PROGRESS },
  };
}

/** The notices beside the message after `chunk` (the message itself is the fold's). */
function afterChunk(reply: LiveReply, chunk: UiChunk, now: number): LiveReply {
  const retrying = retryingAfter(reply.retrying, chunk, now);
  const progress = progressAfter(reply.progress, chunk);
  if (retrying === reply.retrying && progress === reply.progress) return reply;
  return { ...reply, retrying, progress };
}
