import type { ApiFailure, Backend, StreamOperation, Subscription } from '../src/backend/backend';
import type { AttachReply, StoredMessage, StreamMessage } from '../src/protocol.gen';

export interface ScriptedStream {
  reply: AttachReply;
  messages: StreamMessage[];
}

/** A Backend that answers from scripts and records what it was asked. */
export class FakeBackend implements Backend {
  readonly calls: { name: string; request: unknown }[] = [];
  readonly streams: ScriptedStream[] = [];
  stored: StoredMessage[] = [];
  closed = 0;
  /** Ends the backend side of the next subscription early, e.g. a dropped connection. */
  endEarly: ApiFailure | undefined;
  /** Makes the next subscribe reject, e.g. a conflict before streaming starts. */
  failNext: ApiFailure | undefined;

  async call<T>(name: string, request?: unknown): Promise<T> {
    this.calls.push({ name, request });
    if (name === 'messages_list') return structuredClone(this.stored) as T;
    return null as T;
  }

  async subscribe(
    name: StreamOperation,
    request: unknown,
    onMessage: (message: StreamMessage) => void,
    onEnd?: (error?: ApiFailure) => void,
  ): Promise<Subscription> {
    this.calls.push({ name, request });
    const failure = this.failNext;
    this.failNext = undefined;
    if (failure) throw failure;
    const script = this.streams.shift() ?? { reply: { live: false }, messages: [] };
    let closed = false;
    setTimeout(() => {
      for (const message of script.messages) if (!closed) onMessage(message);
      if (this.endEarly && !closed) onEnd?.(this.endEarly);
    }, 0);
    return {
      reply: script.reply,
      close: () => {
        if (!closed) this.closed++;
        closed = true;
      },
    };
  }

  names(): string[] {
    return this.calls.map((call) => call.name);
  }
}
