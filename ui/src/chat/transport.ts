import type { ChatTransport, UIMessageChunk } from 'ai';
import { ApiFailure, type Backend, type StreamOperation, type Subscription } from '../backend/backend';
import type { AttachReply, ModelRef, StreamMessage, StreamOpenRequest, TopicRequest } from '../protocol.gen';
import type { ChatMessage } from './messages';
import { StreamMessageReader } from './reader';

/** Extra fields a `sendMessage` call may pass in `body`. */
export interface SendBody {
  /** Overrides the topic's model for this turn. */
  model?: ModelRef;
}

/**
 * `useChat`'s transport over our backend: the chat id is the topic id, sending opens a
 * turn (`stream_open`) and reconnecting attaches to the topic's live reply
 * (`stream_attach`). The AI SDK's abort signal only detaches this window: leaving or
 * reloading never stops a reply. Stopping is `stream_abort`, which the Stop button calls.
 */
export class ColloquyChatTransport implements ChatTransport<ChatMessage> {
  /** An attach starts with a snapshot of the whole reply, i.e. a complete replay. */
  readonly resumeStreamIsReplay = true;

  /** The answer to the most recent open or attach, e.g. to tell whether a reply was live. */
  lastReply: AttachReply | undefined;

  constructor(private readonly backend: Backend) {}

  async sendMessages(options: Parameters<ChatTransport<ChatMessage>['sendMessages']>[0]): Promise<ReadableStream<UIMessageChunk>> {
    const last = options.messages[options.messages.length - 1];
    if (!last || last.role !== 'user') {
      throw new ApiFailure({ kind: 'bad_request', message: 'There is no new message to send.', retryable: false });
    }
    const request: StreamOpenRequest = {
      topicId: options.chatId,
      text: last.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''),
      messageId: last.id,
    };
    const model = (options.body as SendBody | undefined)?.model;
    if (model) request.model = model;
    const { stream } = await this.listen('stream_open', request, options.abortSignal);
    return stream;
  }

  async reconnectToStream(
    options: Parameters<ChatTransport<ChatMessage>['reconnectToStream']>[0],
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const request: TopicRequest = { topicId: options.chatId };
    const { reply, stream } = await this.listen('stream_attach', request, options.abortSignal);
    return reply.live ? stream : null;
  }

  private async listen(
    operation: StreamOperation,
    request: StreamOpenRequest | TopicRequest,
    abortSignal: AbortSignal | undefined,
  ): Promise<{ reply: AttachReply; stream: ReadableStream<UIMessageChunk> }> {
    let controller!: ReadableStreamDefaultController<UIMessageChunk>;
    // Filled in once `subscribe` resolves; messages may arrive before that.
    const held: { subscription?: Subscription } = {};
    let finished = false;

    const finish = (error?: ApiFailure) => {
      if (finished) return;
      finished = true;
      held.subscription?.close();
      try {
        if (error) controller.error(error);
        else controller.close();
      } catch {
        // The reader already went away.
      }
    };

    const stream = new ReadableStream<UIMessageChunk>({
      start: (c) => {
        controller = c;
      },
      cancel: () => finish(),
    });
    const reader = new StreamMessageReader({
      chunk: (chunk) => {
        if (!finished) controller.enqueue(chunk);
      },
      terminal: () => finish(),
    });

    const onMessage = (message: StreamMessage) => reader.read(message);
    const onEnd = (error?: ApiFailure) =>
      finish(
        error ??
          new ApiFailure({
            kind: 'internal',
            message: 'The connection to the reply closed before the reply finished. Reload the page to reattach.',
            retryable: true,
          }),
      );

    // Detach (never abort) when the AI SDK stops reading, e.g. on unmount or Stop.
    const onAbort = () => finish();
    abortSignal?.addEventListener('abort', onAbort, { once: true });

    const subscription = await this.backend.subscribe(operation, request, onMessage, onEnd);
    held.subscription = subscription;
    this.lastReply = subscription.reply;
    if (finished || abortSignal?.aborted) {
      // A terminal or an abort arrived before the subscription was ours to close.
      subscription.close();
      finish();
    } else if (!subscription.reply.live) {
      finish();
    }
    return { reply: subscription.reply, stream };
  }
}
