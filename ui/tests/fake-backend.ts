import type {
  ApiFailure,
  Backend,
  FeedSubscription,
  Operation,
  OperationRequest,
  OperationResponse,
  StreamOperation,
  Subscription,
} from '../src/backend/backend';
import type { AttachReply, MessageRequest, MessagesPage, MessagesPageRequest, PathVersion, StatusMessage, StoredMessage, StreamMessage, Topic } from '../src/protocol.gen';

export interface ScriptedStream {
  reply: AttachReply;
  /** Delivered right after the subscription is made, as a live backend would. */
  messages: StreamMessage[];
}

/** One listener the fake backend handed out; tests push to it and end it. */
export class FakeStream {
  closed = false;
  constructor(
    readonly name: StreamOperation,
    readonly request: unknown,
    private readonly onMessage: (message: StreamMessage) => void,
    private readonly onEnd: ((error?: ApiFailure) => void) | undefined,
  ) {}

  push(...messages: StreamMessage[]): void {
    for (const message of messages) if (!this.closed) this.onMessage(message);
  }

  /** The backend side ends (a dropped connection, with `error`). */
  end(error?: ApiFailure): void {
    if (this.closed) return;
    this.closed = true;
    this.onEnd?.(error);
  }
}

/** One status feed the fake backend handed out. */
export class FakeFeed {
  closed = false;
  constructor(
    private readonly onMessage: (message: StatusMessage) => void,
    private readonly onEnd: (error?: ApiFailure) => void,
  ) {}

  push(...messages: StatusMessage[]): void {
    for (const message of messages) if (!this.closed) this.onMessage(message);
  }

  /** A message that was already on its way when the feed was closed. */
  pushLate(message: StatusMessage): void {
    this.onMessage(message);
  }

  drop(error?: ApiFailure): void {
    if (this.closed) return;
    this.closed = true;
    this.onEnd(error);
  }
}

/** A Backend that answers from scripts and records what it was asked. */
export class FakeBackend implements Backend {
  readonly calls: { name: string; request: unknown }[] = [];
  /** Replies for the next subscriptions, in order; without one the topic is not live. */
  readonly streams: ScriptedStream[] = [];
  readonly opened: FakeStream[] = [];
  readonly feeds: FakeFeed[] = [];
  readonly windows: string[] = [];
  stored: StoredMessage[] = [];
  /**
   * The topic's active path after `message_select` or `message_delete` of a message id:
   * the call makes it `stored`. An id without an entry changes nothing.
   */
  readonly pathAfter = new Map<string, StoredMessage[]>();
  /** What `messages_page` answers as the path changes it has seen (tests bump `version`). */
  path: PathVersion = { epoch: 'e1', version: 0 };
  /** Answers for plain calls by name (messages_list answers `stored` unless set here); see {@link answer}. */
  readonly answers = new Map<string, (request: unknown) => unknown>();
  /** Makes the next subscribe (or the next call of that name) reject. */
  failNext: ApiFailure | undefined;
  readonly failCall = new Map<string, ApiFailure>();
  failFeedNext: ApiFailure | undefined;

  async call<K extends Operation>(name: K, ...[request]: OperationRequest<K>): Promise<OperationResponse<K>> {
    this.calls.push({ name, request });
    const failure = this.failCall.get(name);
    if (failure) {
      this.failCall.delete(name);
      throw failure;
    }
    const answer = this.answers.get(name);
    if (answer) return (await answer(request)) as OperationResponse<K>;
    switch (name) {
      case 'messages_list':
        return structuredClone(this.stored) as OperationResponse<K>;
      case 'messages_page':
        return pageOf(this.stored, request as MessagesPageRequest, this.path) as OperationResponse<K>;
      case 'message_select':
      case 'message_delete': {
        const path = this.pathAfter.get((request as MessageRequest).messageId);
        if (path) this.stored = path;
        return null as OperationResponse<K>;
      }
      case 'topic_fork': {
        const { topicId, messageId } = request as MessageRequest;
        const topic: Topic = { id: `fork-of-${topicId}`, title: 'Forked', forkedFrom: { topicId, messageId }, createdAt: '', updatedAt: '' };
        return topic as OperationResponse<K>;
      }
      default:
        return null as OperationResponse<K>;
    }
  }

  /** Answers every later call of `name` with `answer` (typed by the operations table). */
  answer<K extends Operation>(name: K, answer: (...request: OperationRequest<K>) => OperationResponse<K> | Promise<OperationResponse<K>>): void {
    this.answers.set(name, (request) => (answer as (request: unknown) => unknown)(request));
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
    const stream = new FakeStream(name, request, onMessage, onEnd);
    this.opened.push(stream);
    await Promise.resolve();
    stream.push(...script.messages);
    return {
      reply: script.reply,
      close: () => {
        stream.closed = true;
      },
    };
  }

  async subscribeStatus(onMessage: (message: StatusMessage) => void, onEnd: (error?: ApiFailure) => void): Promise<FeedSubscription> {
    this.calls.push({ name: 'status_subscribe', request: {} });
    const failure = this.failFeedNext;
    this.failFeedNext = undefined;
    if (failure) throw failure;
    const feed = new FakeFeed(onMessage, onEnd);
    this.feeds.push(feed);
    return {
      close: () => {
        feed.closed = true;
      },
    };
  }

  async openWindow(topicId: string): Promise<void> {
    this.windows.push(topicId);
  }

  names(): string[] {
    return this.calls.map((call) => call.name);
  }

  requestsOf(name: string): unknown[] {
    return this.calls.filter((call) => call.name === name).map((call) => call.request);
  }

  /** The newest listener that is still open. */
  live(): FakeStream {
    const stream = [...this.opened].reverse().find((s) => !s.closed);
    if (!stream) throw new Error('no open stream');
    return stream;
  }
}

/** `messages_page` over `stored` (the active path), as the backend pages it: whole turns, newest first. */
export function pageOf(
  stored: readonly StoredMessage[],
  request: MessagesPageRequest,
  path: PathVersion = { epoch: 'e1', version: 0 },
): MessagesPage {
  const end = request.before === undefined ? stored.length : stored.findIndex((row) => row.id === request.before);
  if (end < 0) throw Object.assign(new Error('message not found'), { kind: 'not_found', message: 'message not found', retryable: false });
  const starts = stored.slice(0, end).flatMap((row, index) => (row.message.role === 'user' ? [index] : []));
  const turns = request.turns ?? 50;
  if (starts.length <= turns) return { messages: structuredClone(stored.slice(0, end)), older: null, path: { ...path } };
  const start = starts[starts.length - turns];
  return { messages: structuredClone(stored.slice(start, end)), older: stored[start].id, path: { ...path } };
}
