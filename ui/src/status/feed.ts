import { toApiFailure, type ApiFailure, type Backend, type FeedSubscription } from '../backend/backend';
import type { StatusMessage, TopicStatusEvent } from '../protocol.gen';

/** Every topic's status as this window last heard it. */
export interface TopicStatuses {
  byTopic: ReadonlyMap<string, TopicStatusEvent>;
  /** The feed is connected (false while it reconnects). */
  connected: boolean;
  /** Why the last connection attempt failed, while reconnecting. */
  error: ApiFailure | undefined;
}

export interface StatusFeedOptions {
  /** Waits before each reconnect attempt; the last one repeats for ever. */
  reconnectDelaysMs?: readonly number[];
}

const RECONNECT_DELAYS_MS = [500, 1000, 2000, 4000, 8000, 15000];

/**
 * The window's one subscription to `status_subscribe`: a snapshot of every topic's
 * status, then changes. The feed never ends by design; if the connection drops anyway
 * it reconnects with backoff, and the fresh snapshot replaces what was known.
 */
export class StatusFeed {
  private state: TopicStatuses = { byTopic: new Map(), connected: false, error: undefined };
  private readonly listeners = new Set<() => void>();
  private subscription: FeedSubscription | undefined;
  private running = false;
  /** Bumped per connection; callbacks of an earlier one are ignored. */
  private connection = 0;
  private attempts = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly delays: readonly number[];

  constructor(
    private readonly backend: Backend,
    options: StatusFeedOptions = {},
  ) {
    this.delays = options.reconnectDelaysMs ?? RECONNECT_DELAYS_MS;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): TopicStatuses => this.state;

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.connect();
  }

  stop(): void {
    this.running = false;
    this.connection++;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.subscription?.close();
    this.subscription = undefined;
  }

  private async connect(): Promise<void> {
    const connection = ++this.connection;
    try {
      const subscription = await this.backend.subscribeStatus(
        (message) => {
          if (connection === this.connection) this.onMessage(message);
        },
        (error) => {
          if (connection === this.connection) this.dropped(error);
        },
      );
      if (connection !== this.connection) {
        subscription.close();
        return;
      }
      this.subscription = subscription;
    } catch (error) {
      if (connection === this.connection) this.dropped(toApiFailure(error, 'Could not follow topic statuses'));
    }
  }

  private onMessage(message: StatusMessage): void {
    this.attempts = 0;
    // A switched version changes no status.
    if (message.kind === 'path_changed') return;
    let byTopic: Map<string, TopicStatusEvent>;
    if (message.kind === 'snapshot') {
      byTopic = new Map(message.statuses.map((event) => [event.topicId, event]));
    } else {
      const event: TopicStatusEvent = { topicId: message.topicId, status: message.status, unseen: message.unseen };
      byTopic = new Map(this.state.byTopic);
      byTopic.set(event.topicId, event);
    }
    this.publish({ byTopic, connected: true, error: undefined });
  }

  private dropped(error: ApiFailure | undefined): void {
    this.subscription = undefined;
    this.connection++;
    this.publish({ ...this.state, connected: false, error });
    if (!this.running) return;
    const delay = this.delays[Math.min(this.attempts, this.delays.length - 1)] ?? 1000;
    this.attempts++;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.running) void this.connect();
    }, delay);
  }

  private publish(state: TopicStatuses): void {
    this.state = state;
    for (const listener of this.listeners) listener();
  }
}
