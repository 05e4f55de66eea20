import { Channel, invoke } from '@tauri-apps/api/core';
import type { StatusMessage, StreamMessage, TopicRequest } from '../protocol.gen';
import type { StreamOperations } from '../operations.gen';
import {
  toApiFailure,
  type Backend,
  type FeedSubscription,
  type Operation,
  type OperationRequest,
  type OperationResponse,
  type StreamOperation,
  type Subscription,
} from './backend';

/** True inside the Tauri webview. */
export function isTauri(): boolean {
  return typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;
}

/** The desktop app: Tauri commands, with streams delivered on a `Channel`. */
export class IpcBackend implements Backend {
  /**
   * The backend keeps one listener per window and topic, and a new attach replaces the
   * old one. A late `close()` of a replaced subscription must not detach its successor,
   * so only the newest subscription of a topic may send `stream_detach`.
   */
  private readonly newest = new Map<string, symbol>();
  /**
   * The last subscribe or detach still on its way, per topic. The next one waits for it:
   * commands run concurrently, and the backend keeps whichever listener of the window it
   * registered last, so an older request that overtook a newer one would win.
   */
  private readonly inFlight = new Map<string, Promise<unknown>>();

  async call<K extends Operation>(name: K, ...[request]: OperationRequest<K>): Promise<OperationResponse<K>> {
    try {
      return await invoke<OperationResponse<K>>(name, { request: request ?? {} });
    } catch (error) {
      throw toApiFailure(error, `${name} failed`);
    }
  }

  async subscribe<K extends StreamOperation>(
    name: K,
    request: StreamOperations[K]['request'],
    onMessage: (message: StreamMessage) => void,
  ): Promise<Subscription> {
    const topicId = request.topicId;
    const token = Symbol(topicId);
    this.newest.set(topicId, token);
    const done = this.after(topicId);
    await done.previous;
    let closed = false;
    const channel = new Channel<StreamMessage>();
    channel.onmessage = (message) => {
      if (!closed) onMessage(message);
    };
    const close = () => {
      if (closed) return;
      closed = true;
      channel.onmessage = () => {};
      if (this.newest.get(topicId) !== token) return;
      this.newest.delete(topicId);
      const detach: TopicRequest = { topicId };
      const detached = this.after(topicId);
      void detached.previous
        .then(() => invoke('stream_detach', { request: detach }))
        .catch(() => {
          // Detaching a topic that already finished is harmless.
        })
        .finally(detached.finish);
    };
    try {
      const reply = await invoke<Subscription['reply']>(name, { request, channel });
      return { reply, close };
    } catch (error) {
      closed = true;
      if (this.newest.get(topicId) === token) this.newest.delete(topicId);
      throw toApiFailure(error, `${name} failed`);
    } finally {
      done.finish();
    }
  }

  /** Queues a topic's request behind the one before it; call `finish` once it is answered. */
  private after(topicId: string): { previous: Promise<unknown>; finish: () => void } {
    const previous = this.inFlight.get(topicId) ?? Promise.resolve();
    let finish!: () => void;
    const current = new Promise<void>((resolve) => (finish = resolve));
    this.inFlight.set(topicId, current);
    return {
      previous,
      finish: () => {
        finish();
        if (this.inFlight.get(topicId) === current) this.inFlight.delete(topicId);
      },
    };
  }

  /** The window's status feed. Subscribing again (e.g. after a reload) replaces the previous one. */
  async subscribeStatus(onMessage: (message: StatusMessage) => void): Promise<FeedSubscription> {
    let closed = false;
    const channel = new Channel<StatusMessage>();
    channel.onmessage = (message) => {
      if (!closed) onMessage(message);
    };
    try {
      await invoke<null>('status_subscribe', { channel });
    } catch (error) {
      throw toApiFailure(error, 'Could not subscribe to topic statuses');
    }
    return {
      close: () => {
        closed = true;
        channel.onmessage = () => {};
      },
    };
  }

  async openWindow(topicId: string): Promise<void> {
    await this.call('window_open', { topicId });
  }

  sendAsPageCloses<K extends Operation>(name: K, ...request: OperationRequest<K>): void {
    this.call(name, ...request).catch(() => {
      // The window is gone; there is nobody to tell.
    });
  }
}
