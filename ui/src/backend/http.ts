import type { StreamOperations } from '../operations.gen';
import type { ApiError, AttachReply, StatusMessage, StreamMessage } from '../protocol.gen';
import {
  ApiFailure,
  isApiError,
  toApiFailure,
  type Backend,
  type FeedSubscription,
  type Operation,
  type OperationRequest,
  type OperationResponse,
  type StreamOperation,
  type Subscription,
} from './backend';
import { SseParser, type SseEvent } from './sse';

export interface HttpBackendOptions {
  token: string;
  /** Base URL of the server; the page's own origin by default. */
  baseUrl?: string;
  /** Called when the server rejects the token (HTTP 401). */
  onUnauthorized?: () => void;
}

/** `colloquy serve`: `POST /api/<name>` with a bearer token; streams are SSE responses. */
export class HttpBackend implements Backend {
  private readonly token: string;
  private readonly baseUrl: string;
  private readonly onUnauthorized: (() => void) | undefined;

  constructor(options: HttpBackendOptions) {
    this.token = options.token;
    this.baseUrl = (options.baseUrl ?? '').replace(/\/$/, '');
    this.onUnauthorized = options.onUnauthorized;
  }

  async call<K extends Operation>(name: K, ...[request]: OperationRequest<K>): Promise<OperationResponse<K>> {
    const response = await this.post(name, request);
    const text = await response.text();
    if (text.trim() === '') return null as OperationResponse<K>;
    try {
      return JSON.parse(text) as OperationResponse<K>;
    } catch {
      throw new ApiFailure({ kind: 'internal', message: `The server sent an unreadable answer to ${name}.`, retryable: true });
    }
  }

  async subscribe<K extends StreamOperation>(
    name: K,
    request: StreamOperations[K]['request'],
    onMessage: (message: StreamMessage) => void,
    onEnd?: (error?: ApiFailure) => void,
  ): Promise<Subscription> {
    const abort = new AbortController();
    const response = await this.post(name, request, abort.signal);
    if ((response.headers.get('content-type') ?? '').includes('application/json')) {
      // Tolerate a plain JSON AttachReply (e.g. `live: false`): nothing will stream.
      const reply = JSON.parse(await response.text()) as AttachReply;
      return { reply, close: () => abort.abort() };
    }
    const body = response.body;
    if (!body) {
      throw new ApiFailure({ kind: 'internal', message: `The server sent no stream for ${name}.`, retryable: true });
    }
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new SseParser();
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      // Dropping the response is how an HTTP listener detaches; the stream goes on.
      abort.abort();
    };

    // Everything before the `reply` event is ignored; every later event is a StreamMessage.
    let reply: AttachReply | undefined;
    const early: StreamMessage[] = [];
    const collect = (events: SseEvent[]) => {
      for (const event of events) {
        if (reply === undefined) {
          if (event.event === 'reply') reply = JSON.parse(event.data) as AttachReply;
        } else if (event.event === 'message') {
          early.push(JSON.parse(event.data) as StreamMessage);
        }
      }
    };
    try {
      while (reply === undefined) {
        const { done, value } = await reader.read();
        collect(done ? parser.end() : parser.push(value));
        if (done) break;
      }
    } catch (error) {
      close();
      throw toApiFailure(error, `Could not open the stream (${name})`);
    }
    if (reply === undefined) {
      close();
      throw new ApiFailure({ kind: 'internal', message: `The server ended the stream before answering ${name}.`, retryable: true });
    }

    if (!reply.live) {
      close();
      return { reply, close };
    }
    for (const message of early) onMessage(message);
    const pump = async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          for (const event of done ? parser.end() : parser.push(value)) {
            if (event.event === 'message' && !closed) onMessage(JSON.parse(event.data) as StreamMessage);
          }
          if (done) break;
        }
        if (!closed) {
          closed = true;
          onEnd?.();
        }
      } catch (error) {
        if (closed) return;
        closed = true;
        onEnd?.(toApiFailure(error, 'The connection to the reply stream was lost'));
      }
    };
    void pump();
    return { reply, close };
  }

  async subscribeStatus(onMessage: (message: StatusMessage) => void, onEnd: (error?: ApiFailure) => void): Promise<FeedSubscription> {
    const abort = new AbortController();
    const response = await this.post('status_subscribe', {}, abort.signal);
    const body = response.body;
    if (!body) {
      throw new ApiFailure({ kind: 'internal', message: 'The server sent no status feed.', retryable: true });
    }
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      abort.abort();
    };
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new SseParser();
    const pump = async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          for (const event of done ? parser.end() : parser.push(value)) {
            if (event.event === 'message' && !closed) onMessage(JSON.parse(event.data) as StatusMessage);
          }
          if (done) break;
        }
        if (!closed) {
          closed = true;
          onEnd();
        }
      } catch (error) {
        if (closed) return;
        closed = true;
        onEnd(toApiFailure(error, 'The connection to the status feed was lost'));
      }
    };
    void pump();
    return { close };
  }

  /** A browser opens the topic in a new tab; the token stays in this origin's localStorage. */
  async openWindow(topicId: string): Promise<void> {
    const url = `${window.location.origin}${window.location.pathname}#topic=${encodeURIComponent(topicId)}`;
    const opened = window.open(url, '_blank');
    if (!opened) {
      throw new ApiFailure({
        kind: 'bad_request',
        message: 'The browser blocked the new tab. Allow pop-ups for this page, or open the topic from its link.',
        retryable: true,
      });
    }
  }

  sendAsPageCloses<K extends Operation>(name: K, ...[request]: OperationRequest<K>): void {
    this.post(name, request, undefined, true).catch(() => {
      // The page is gone; there is nobody to tell.
    });
  }

  private async post(name: string, request: unknown, signal?: AbortSignal, keepalive = false): Promise<Response> {
    let response: Response;
    try {
      const init: RequestInit = {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${this.token}` },
        body: JSON.stringify(request ?? {}),
        keepalive,
      };
      if (signal) init.signal = signal;
      response = await fetch(`${this.baseUrl}/api/${name}`, init);
    } catch (error) {
      throw toApiFailure(error, 'Could not reach the Colloquy server. Check that `colloquy serve` is still running');
    }
    if (response.ok) return response;
    if (response.status === 401) this.onUnauthorized?.();
    const text = await response.text().catch(() => '');
    throw new ApiFailure(parseError(text, name, response.status));
  }
}

function parseError(text: string, name: string, status?: number): ApiError {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isApiError(parsed)) return { ...parsed, retryable: Boolean(parsed.retryable) };
  } catch {
    // Not JSON: fall through to a generic description.
  }
  return {
    kind: status === 401 ? 'unauthorized' : status === 404 ? 'not_found' : 'internal',
    message: `${name} failed${status ? ` with HTTP ${status}` : ''}${text ? `: ${text.slice(0, 200)}` : ''}`,
    retryable: status === undefined || status >= 500,
  };
}
