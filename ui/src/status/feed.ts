import { toApiFailure, type ApiFailure, type Backend, type FeedSubscription } from '../backend/backend';
import type { ListName, ListVersion, ListVersions, PathVersion, StatusMessage, TopicStatusEvent } from '../protocol.gen';

/** Every topic's status as this window last heard it. */
export interface TopicStatuses {
  byTopic: ReadonlyMap<string, TopicStatusEvent>;
  /** The feed is connected (false while it reconnects). */
  connected: boolean;
  /** Why the last connection attempt failed, while reconnecting. */
  error: ApiFailure | undefined;
  /** The backend's epoch of path versions; undefined until the first snapshot. */
  pathEpoch: string | undefined;
  /**
   * The version of each topic's last change of its active path (a version switched, a
   * message edited or deleted, here or in another window) since the backend started; 0
   * for a topic not listed. An open topic reads its history again when this is newer
   * than what it read (see {@link pathIsNewer}).
   */
  pathVersions: ReadonlyMap<string, number>;
  /**
   * The version of each list's last change (a topic or session created, renamed, deleted
   * or written in) since the backend started, counted in the same epoch. A list is read
   * again when this is newer than what its last read saw (see {@link listIsNewer}).
   */
  listVersions: ListVersions;
  /**
   * How many turns each topic started since the feed did (a change into a running status).
   * Two changes can reach a window's render together (a queued message that ran and
   * finished at once reads as `done` to `done`); this count still moves.
   */
  turnStarts: ReadonlyMap<string, number>;
}

const RUNNING: readonly string[] = ['pending', 'streaming', 'awaiting_approval'];

/** Changes whenever a turn started in the topic (see `TopicStatuses.turnStarts`). */
export function turnStarts(statuses: TopicStatuses, topicId: string): number {
  return statuses.turnStarts.get(topicId) ?? 0;
}

/** The topic's last path change as the feed knows it; undefined until the first snapshot. */
export function topicPath(statuses: TopicStatuses, topicId: string): PathVersion | undefined {
  const epoch = statuses.pathEpoch;
  return epoch === undefined ? undefined : { epoch, version: statuses.pathVersions.get(topicId) ?? 0 };
}

/**
 * Whether `known` (a change the feed told of) is newer than what a page read at `read`
 * saw. Another epoch means the backend restarted (its count started over): anything may
 * have changed.
 */
export function pathIsNewer(known: PathVersion, read: PathVersion): boolean {
  return known.epoch !== read.epoch || known.version > read.version;
}

/** The list's last change as the feed knows it; undefined until the first snapshot. */
export function listChange(statuses: TopicStatuses, list: ListName): ListVersion | undefined {
  const epoch = statuses.pathEpoch;
  if (epoch === undefined) return undefined;
  return { epoch, version: list === 'topics' ? statuses.listVersions.topics : statuses.listVersions.agentSessions };
}

/**
 * Whether `known` (a list change the feed told of) is newer than what a list read at
 * `read` saw; as for paths, another epoch means the backend restarted.
 */
export const listIsNewer: (known: ListVersion, read: ListVersion) => boolean = pathIsNewer;

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
  private state: TopicStatuses = { byTopic: new Map(), connected: false, error: undefined, pathEpoch: undefined, pathVersions: new Map(), listVersions: { topics: 0, agentSessions: 0 }, turnStarts: new Map() };
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
    switch (message.kind) {
      case 'snapshot': {
        // Replaces what was known: after a dropped connection, the versions say which
        // topics changed meanwhile (and a new epoch, that the backend restarted).
        const byTopic = new Map(message.statuses.map((event) => [event.topicId, event]));
        const pathVersions = new Map(message.pathVersions.map((path) => [path.topicId, path.version]));
        const { turnStarts } = this.state;
        const { listVersions } = message;
        this.publish({ byTopic, connected: true, error: undefined, pathEpoch: message.pathEpoch, pathVersions, listVersions, turnStarts });
        break;
      }
      case 'changed': {
        const event: TopicStatusEvent = { topicId: message.topicId, status: message.status, unseen: message.unseen };
        const before = this.state.byTopic.get(event.topicId)?.status;
        const byTopic = new Map(this.state.byTopic);
        byTopic.set(event.topicId, event);
        let turnStarts = this.state.turnStarts;
        if (RUNNING.includes(event.status) && !RUNNING.includes(before ?? '')) {
          const counted = new Map(turnStarts);
          counted.set(event.topicId, (turnStarts.get(event.topicId) ?? 0) + 1);
          turnStarts = counted;
        }
        this.publish({ ...this.state, byTopic, connected: true, error: undefined, turnStarts });
        break;
      }
      case 'path_changed': {
        // The statuses stay the same objects: lists that follow them are not re-read.
        const pathVersions = new Map(this.state.pathVersions);
        pathVersions.set(message.topicId, Math.max(message.version, pathVersions.get(message.topicId) ?? 0));
        this.publish({ ...this.state, connected: true, error: undefined, pathVersions });
        break;
      }
      case 'list_changed': {
        // As for paths, the statuses stay the same objects.
        const listVersions = { ...this.state.listVersions };
        if (message.list === 'topics') listVersions.topics = Math.max(message.version, listVersions.topics);
        else listVersions.agentSessions = Math.max(message.version, listVersions.agentSessions);
        this.publish({ ...this.state, connected: true, error: undefined, listVersions });
        break;
      }
    }
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
