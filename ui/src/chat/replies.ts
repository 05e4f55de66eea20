import type { ExecutionCursor, ModelRef, StreamMessage, TerminalStatus, UiChunk, UiMessage } from '../protocol.gen';
import { MessageFold } from './fold';

/** One model's reply as the live stream has built it so far. */
export interface LiveReply {
  executionId: string;
  /** The reply's row: a retry or continue runs a new execution on the same row. */
  messageId: string;
  turnId: string;
  model: ModelRef;
  /** The last `seq` folded in. */
  seq: number;
  /** The `seq` of the snapshot the message was rebuilt from (0: from its first chunk). */
  base: number;
  message: UiMessage;
  /** Set once the execution's terminal arrived. */
  terminal?: TerminalStatus;
}

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

/** Someone reading one execution's chunks (an `ExecutionTransport`'s stream). */
export interface ExecutionFollower {
  /** What the chunks continue: the snapshot, or an empty message of the reply's row. */
  begin(message: UiMessage): void;
  chunk(chunk: UiChunk): void;
  /** The execution ended (its terminal), or was replaced or dropped: no more chunks. */
  end(): void;
}

interface Execution {
  reply: LiveReply;
  fold: MessageFold;
  /** The message the chunks below continue, and the chunks folded in since, in order. */
  base: UiMessage;
  chunks: UiChunk[];
  followers: Set<ExecutionFollower>;
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
        const reply: LiveReply = {
          executionId: message.executionId,
          messageId: message.messageId,
          turnId: message.turnId,
          model: message.model,
          seq: message.seq,
          base: message.seq,
          message: message.message,
        };
        // Whoever followed the execution starts over from the snapshot.
        this.endFollowers(this.executions.get(message.executionId));
        this.executions.set(message.executionId, {
          reply,
          fold: MessageFold.fromSnapshot(message.message),
          base: message.message,
          chunks: [],
          followers: new Set(),
        });
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
          const fold = new MessageFold(message.messageId);
          execution = {
            fold,
            reply: {
              executionId: message.executionId,
              messageId: message.messageId,
              turnId: message.turnId,
              model: message.model,
              seq: 0,
              base: 0,
              message: fold.message,
            },
            base: fold.message,
            chunks: [],
            followers: new Set(),
          };
          this.executions.set(message.executionId, execution);
        }
        const { reply } = execution;
        if (message.seq <= reply.seq) return NOTHING;
        if (message.seq > reply.seq + 1) return { ...NOTHING, reattach: true };
        execution.fold.apply(message.chunk);
        execution.chunks.push(message.chunk);
        for (const follower of execution.followers) follower.chunk(message.chunk);
        const changed = execution.fold.message !== reply.message;
        execution.reply = { ...reply, seq: message.seq, message: execution.fold.message };
        this.dirty = true;
        return { ...NOTHING, changed: changed || discovered, discovered };
      }
      case 'terminal': {
        const execution = this.executions.get(message.executionId);
        if (execution && execution.reply.terminal !== message.status) {
          execution.reply = { ...execution.reply, terminal: message.status };
          this.dirty = true;
        }
        this.endFollowers(execution);
        return { ...NOTHING, changed: execution !== undefined, topicDone: message.isTopicDone };
      }
    }
  }

  /**
   * Follows one execution: `begin` and every chunk folded in so far at once, then each
   * new chunk as it is read, until `end`. Undefined when this reader does not know the
   * execution (any more); otherwise a function to stop following.
   */
  follow(executionId: string, follower: ExecutionFollower): (() => void) | undefined {
    const execution = this.executions.get(executionId);
    if (!execution) return undefined;
    follower.begin(execution.base);
    for (const chunk of execution.chunks) follower.chunk(chunk);
    if (execution.reply.terminal !== undefined) {
      follower.end();
      return () => {};
    }
    execution.followers.add(follower);
    return () => execution.followers.delete(follower);
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
    for (const id of executionIds) {
      this.endFollowers(this.executions.get(id));
      removed = this.executions.delete(id) || removed;
    }
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
      if (execution.reply.messageId === messageId && id !== executionId) {
        this.endFollowers(execution);
        this.executions.delete(id);
      }
    }
  }

  private endFollowers(execution: Execution | undefined): void {
    if (!execution) return;
    const followers = [...execution.followers];
    execution.followers.clear();
    for (const follower of followers) follower.end();
  }
}
