import type { Operations, StreamOperations } from '../operations.gen';
import type { ApiError, AttachReply, ErrorKind, StatusMessage, StreamMessage } from '../protocol.gen';

/** The name of an operation {@link Backend.call} runs (the generated table's keys). */
export type Operation = keyof Operations;

/** What {@link Backend.call} answers for operation `K`. */
export type OperationResponse<K extends Operation> = Operations[K]['response'];

/** The request argument of operation `K`: none for an operation without a request. */
export type OperationRequest<K extends Operation> = Operations[K]['request'] extends void
  ? []
  : [request: Operations[K]['request']];

/** The streaming operations: each makes the caller a listener of one topic. */
export type StreamOperation = keyof StreamOperations;

export interface Subscription {
  /** The backend's answer; `live: false` means nothing will arrive. */
  reply: AttachReply;
  /**
   * Stops delivery to this window. Never stops the stream itself: only `stream_abort` does.
   * Safe to call more than once.
   */
  close(): void;
}

/**
 * How the UI reaches the Rust backend: Tauri IPC in the desktop app, HTTP + SSE in a
 * browser against `colloquy serve`. Both reject with an {@link ApiFailure}.
 */
export interface Backend {
  /** Runs operation `name`: its request and answer types come from `operations.gen.ts`. */
  call<K extends Operation>(name: K, ...request: OperationRequest<K>): Promise<OperationResponse<K>>;
  /**
   * `onEnd` fires when the backend side of the subscription ends on its own (the SSE
   * response finished or broke); it is not called after `close()`.
   */
  subscribe<K extends StreamOperation>(
    name: K,
    request: StreamOperations[K]['request'],
    onMessage: (message: StreamMessage) => void,
    onEnd?: (error?: ApiFailure) => void,
  ): Promise<Subscription>;
  /**
   * The topic-status feed of this window (`status_subscribe`): a snapshot, then changes.
   * It never ends by design; `onEnd` fires if the connection breaks anyway, so the
   * caller can subscribe again.
   */
  subscribeStatus(onMessage: (message: StatusMessage) => void, onEnd: (error?: ApiFailure) => void): Promise<FeedSubscription>;
  /** Shows the topic in another window: a desktop window, or a browser tab. */
  openWindow(topicId: string): Promise<void>;
  /**
   * Sends `name` as the page goes away (`pagehide`): over HTTP the request outlives the
   * page (`fetch` with `keepalive`); in the desktop window it is an ordinary call that
   * may not get out if the window is already torn down. Nothing is answered.
   */
  sendAsPageCloses<K extends Operation>(name: K, ...request: OperationRequest<K>): void;
}

export interface FeedSubscription {
  /** Stops delivery. Safe to call more than once. */
  close(): void;
}

/**
 * An {@link ApiError} that is also a real `Error`, so it can be thrown, shown by the AI
 * SDK and still be read field by field.
 */
export class ApiFailure extends Error implements ApiError {
  readonly kind: ErrorKind;
  readonly retryable: boolean;
  readonly field?: string;
  readonly code?: string;

  constructor(error: ApiError) {
    super(error.message);
    this.name = 'ApiFailure';
    this.kind = error.kind;
    this.retryable = error.retryable;
    if (error.field !== undefined) this.field = error.field;
    if (error.code !== undefined) this.code = error.code;
  }

  toJSON(): ApiError {
    const json: ApiError = { kind: this.kind, message: this.message, retryable: this.retryable };
    if (this.field !== undefined) json.field = this.field;
    if (this.code !== undefined) json.code = this.code;
    return json;
  }
}

const ERROR_KINDS: readonly ErrorKind[] = ['bad_request', 'not_found', 'conflict', 'unauthorized', 'provider', 'internal'];

export function isApiError(value: unknown): value is ApiError {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.message === 'string' &&
    typeof candidate.kind === 'string' &&
    (ERROR_KINDS as readonly string[]).includes(candidate.kind)
  );
}

/** Turns whatever a transport rejected with into an {@link ApiFailure}. */
export function toApiFailure(error: unknown, fallback: string): ApiFailure {
  if (error instanceof ApiFailure) return error;
  if (isApiError(error)) {
    return new ApiFailure({ ...error, retryable: Boolean(error.retryable) });
  }
  const detail = error instanceof Error ? error.message : typeof error === 'string' ? error : '';
  return new ApiFailure({
    kind: 'internal',
    message: detail ? `${fallback}: ${detail}` : fallback,
    retryable: true,
  });
}
