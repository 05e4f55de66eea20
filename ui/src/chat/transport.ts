import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import type { ApiFailure } from '../backend/backend';
import type { MessageMetadata, UiChunk } from '../protocol.gen';
import type { ChatMessage } from './messages';
import type { ExecutionFollower } from './replies';
import { snapshotToChunks } from './snapshot';

/** A message as the AI SDK's `Chat` holds it. */
export type SdkMessage = UIMessage<MessageMetadata>;

/**
 * A `Chat`'s message as the conversation shows it. The AI SDK folded our chunks with the
 * rules our protocol is generated from, so the parts are ours (its types are only wider).
 */
export function sdkToChat(message: SdkMessage): ChatMessage {
  return message as unknown as ChatMessage;
}

/**
 * What an {@link ExecutionTransport} reads from: the topic's one listener and its
 * demultiplexer (`TopicSession` over `LiveReplies`). The transport never listens to the
 * backend itself, so a window keeps one listener per topic.
 */
export interface ExecutionSource {
  /** See `LiveReplies.follow`. */
  follow(executionId: string, follower: ExecutionFollower): (() => void) | undefined;
  /** Continues a paused reply (`stream_continue` over the window's `Backend`: IPC or HTTP). */
  continueReply(messageId: string): Promise<ApiFailure | undefined>;
  /** Resolves with the execution that now writes this reply row, once the stream shows it. */
  nextExecution(messageId: string, after: string): Promise<string>;
}

/**
 * `useChat`'s transport for one live reply, i.e. one execution. `reconnectToStream`
 * yields exactly that execution's chunks as `LiveReplies` demultiplexed them: the
 * snapshot it started from as the chunks that rebuild it, then every chunk folded in
 * since, then the live ones; the stream closes after the execution's terminal (or when
 * the execution is replaced or dropped). `sendMessages` continues the reply over the
 * same backend and streams the execution that does it.
 */
export class ExecutionTransport implements ChatTransport<SdkMessage> {
  /** Every stream starts from the beginning of the execution (a complete replay). */
  readonly resumeStreamIsReplay = true;

  constructor(
    private readonly source: ExecutionSource,
    readonly executionId: string,
    readonly messageId: string,
  ) {}

  reconnectToStream(
    options: Parameters<ChatTransport<SdkMessage>['reconnectToStream']>[0],
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    return Promise.resolve(this.stream(this.executionId, options.abortSignal));
  }

  async sendMessages(
    options: Parameters<ChatTransport<SdkMessage>['sendMessages']>[0],
  ): Promise<ReadableStream<UIMessageChunk>> {
    const failure = await this.source.continueReply(this.messageId);
    if (failure) throw failure;
    const executionId = await this.source.nextExecution(this.messageId, this.executionId);
    const stream = this.stream(executionId, options.abortSignal);
    if (!stream) throw new Error(`The continued reply (execution ${executionId}) is no longer live.`);
    return stream;
  }

  /** Null when the source does not know the execution (any more). */
  private stream(executionId: string, abortSignal: AbortSignal | undefined): ReadableStream<UIMessageChunk> | null {
    const ids = new OpenParts();
    let stop: (() => void) | undefined;
    let ended = false;
    let known = false;
    const finish = (controller: ReadableStreamDefaultController<UIMessageChunk>) => {
      if (ended) return;
      ended = true;
      stop?.();
      try {
        controller.close();
      } catch {
        // The reader went away already.
      }
    };
    const stream = new ReadableStream<UIMessageChunk>({
      start: (controller) => {
        const follower: ExecutionFollower = {
          begin: (message) => {
            for (const chunk of snapshotToChunks(message)) controller.enqueue(ids.map(chunk));
          },
          chunk: (chunk) => {
            if (!ended) controller.enqueue(ids.map(toSdkChunk(chunk)));
          },
          end: () => finish(controller),
        };
        stop = this.source.follow(executionId, follower);
        known = stop !== undefined;
        if (ended) stop?.();
        abortSignal?.addEventListener('abort', () => finish(controller), { once: true });
      },
      cancel: () => {
        ended = true;
        stop?.();
      },
    });
    return known ? stream : null;
  }
}

/** Our protocol's chunk is the AI SDK's `UIMessageChunk` (generated from the same contract). */
function toSdkChunk(chunk: UiChunk): UIMessageChunk {
  return chunk as UIMessageChunk;
}

/**
 * Open text and reasoning parts by chunk id. Should a chunk use another id while exactly
 * one part of its kind is open, it continues that part (as `MessageFold` does) rather
 * than failing the AI SDK's whole stream.
 */
class OpenParts {
  private readonly text = new Set<string>();
  private readonly reasoning = new Set<string>();

  map(chunk: UIMessageChunk): UIMessageChunk {
    switch (chunk.type) {
      case 'text-start':
        this.text.add(chunk.id);
        return chunk;
      case 'reasoning-start':
        this.reasoning.add(chunk.id);
        return chunk;
      case 'text-delta':
      case 'text-end': {
        const id = resolve(this.text, chunk.id);
        if (chunk.type === 'text-end') this.text.delete(id);
        return id === chunk.id ? chunk : { ...chunk, id };
      }
      case 'reasoning-delta':
      case 'reasoning-end': {
        const id = resolve(this.reasoning, chunk.id);
        if (chunk.type === 'reasoning-end') this.reasoning.delete(id);
        return id === chunk.id ? chunk : { ...chunk, id };
      }
      case 'finish-step':
        this.text.clear();
        this.reasoning.clear();
        return chunk;
      default:
        return chunk;
    }
  }
}

function resolve(open: Set<string>, id: string): string {
  if (open.has(id) || open.size !== 1) return id;
  return open.values().next().value ?? id;
}
