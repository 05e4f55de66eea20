import { Channel, invoke } from '@tauri-apps/api/core';
import type { StreamMessage, TopicRequest } from '../protocol.gen';
import { toApiFailure, type Backend, type StreamOperation, type Subscription } from './backend';

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

  async call<T>(name: string, request?: unknown): Promise<T> {
    try {
      return await invoke<T>(name, { request: request ?? {} });
    } catch (error) {
      throw toApiFailure(error, `${name} failed`);
    }
  }

  async subscribe(
    name: StreamOperation,
    request: unknown,
    onMessage: (message: StreamMessage) => void,
  ): Promise<Subscription> {
    const topicId = (request as TopicRequest).topicId;
    const token = Symbol(topicId);
    this.newest.set(topicId, token);
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
      invoke('stream_detach', { request: detach }).catch(() => {
        // Detaching a topic that already finished is harmless.
      });
    };
    try {
      const reply = await invoke<Subscription['reply']>(name, { request, channel });
      return { reply, close };
    } catch (error) {
      closed = true;
      if (this.newest.get(topicId) === token) this.newest.delete(topicId);
      throw toApiFailure(error, `${name} failed`);
    }
  }
}
