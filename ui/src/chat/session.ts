import { Chat } from '@ai-sdk/react';
import { toApiFailure, type ApiFailure, type Backend } from '../backend/backend';
import type { ModelRef, StoredMessage, TopicRequest } from '../protocol.gen';
import { chatHistory, storedToChat, type ChatMessage } from './messages';
import { ColloquyChatTransport, type SendBody } from './transport';

export interface TopicSessionHooks {
  /** Stored state was re-read after a reply ended (titles or statuses may have changed). */
  onSettled?: () => void;
  /** Something failed outside the AI SDK's own request (e.g. re-reading history). */
  onError?: (error: ApiFailure) => void;
}

/**
 * One open topic: owns the AI SDK `Chat` for it and the rules around it. The backend
 * is the truth: whenever a reply ends, the stored messages replace what the stream
 * built, so statuses (`paused` and its reason) and error parts come from storage.
 */
export class TopicSession {
  readonly chat: Chat<ChatMessage>;
  private readonly transport: ColloquyChatTransport;
  private disposed = false;

  constructor(
    private readonly backend: Backend,
    readonly topicId: string,
    history: ChatMessage[],
    private readonly hooks: TopicSessionHooks = {},
  ) {
    this.transport = new ColloquyChatTransport(backend);
    this.chat = new Chat<ChatMessage>({ id: topicId, messages: history, transport: this.transport });
  }

  get busy(): boolean {
    return this.chat.status === 'submitted' || this.chat.status === 'streaming';
  }

  /**
   * Attaches to the topic's live reply, if any: it may have been started by another
   * window or before a reload.
   */
  private async resume(): Promise<void> {
    await this.chat.resumeStream();
    await this.settle(this.transport.lastReply?.live === true);
  }

  /**
   * Sends a user message and streams the reply. Resolves when the reply has ended; with
   * the text back when the message never reached the backend (so it can be retried).
   */
  async send(text: string, model?: ModelRef): Promise<{ unsent?: string }> {
    const body: SendBody = model ? { model } : {};
    await this.chat.sendMessage({ text }, { body });
    const failedBeforeReply = this.chat.status === 'error';
    const stored = await this.settle(true);
    if (failedBeforeReply && stored && !stored.some((m) => m.message.role === 'user' && textOf(m) === text)) {
      return { unsent: text };
    }
    return {};
  }

  /** Stop: the backend aborts and persists the reply as paused; then stop reading. */
  async stop(): Promise<void> {
    const request: TopicRequest = { topicId: this.topicId };
    try {
      await this.backend.call<null>('stream_abort', request);
    } catch (error) {
      this.hooks.onError?.(toApiFailure(error, 'Could not stop the reply'));
    }
    await this.chat.stop();
    await this.settle(false);
  }

  /** The topic is shown: attach to its live reply, if any. */
  open(): void {
    this.disposed = false;
    void this.resume();
  }

  /** The window leaves the topic: stop reading (detach). The reply itself goes on. */
  close(): void {
    this.disposed = true;
    void this.chat.stop();
  }

  /**
   * Re-reads stored messages and makes them the chat's messages. When the stored list
   * still ends in a live reply (e.g. a turn another window started) and `mayReattach`,
   * attaches again instead of showing the stale row.
   */
  private async settle(mayReattach: boolean): Promise<StoredMessage[] | undefined> {
    if (this.disposed) return undefined;
    let stored: StoredMessage[];
    try {
      stored = await this.backend.call<StoredMessage[]>('messages_list', { topicId: this.topicId } satisfies TopicRequest);
    } catch (error) {
      if (!this.disposed) this.hooks.onError?.(toApiFailure(error, 'Could not reload this topic'));
      return undefined;
    }
    // A new turn that began meanwhile settles on its own when it ends.
    if (this.disposed || this.busy) return stored;
    const history = chatHistory(stored);
    if (history.liveReplyDropped && mayReattach) {
      this.chat.messages = history.messages;
      void this.resume();
      return stored;
    }
    this.chat.messages = stored.map(storedToChat);
    this.hooks.onSettled?.();
    return stored;
  }
}

function textOf(stored: StoredMessage): string {
  return stored.message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
