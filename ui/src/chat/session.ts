import { toApiFailure, type ApiFailure, type Backend, type StreamOperation, type Subscription } from '../backend/backend';
import type { StreamOperations } from '../operations.gen';
import type {
  AddModelRequest,
  AttachReply,
  Attachment,
  EditMessageRequest,
  McpResourceRef,
  MessageRequest,
  ModelRef,
  ReplyRequest,
  StoredMessage,
  StreamAttachRequest,
  StreamMessage,
  MessagesPage,
  MessagesPageRequest,
  PathVersion,
  StreamOpenRequest,
  Topic,
  TopicRequest,
  TopicStatus,
  UiPart,
} from '../protocol.gen';
import { attachmentParts } from './attachments';
import { RESOURCE_PART } from './mcpContent';
import { buildConversation, type PendingEdit, type TurnView } from './conversation';
import { joinNewest, loadedTurns, MAX_PAGE_TURNS, PAGE_TURNS, prependOlder, takeArrivedEarlyPage, takeEarlyPage } from './history';
import type { ChatMessage } from './messages';
import { LiveReplies } from './replies';
import { pathIsNewer } from '../status/feed';

/** What the chat view renders; a new object whenever something visible changed. */
export interface SessionState {
  /** The stored history has been read at least once. */
  loaded: boolean;
  /** Reading the history failed before anything could be shown. */
  loadError: ApiFailure | undefined;
  turns: TurnView[];
  /** Turns above the first one shown can be read with `loadOlder`. */
  hasOlder: boolean;
  /** `loadOlder` is reading. */
  loadingOlder: boolean;
  /** A turn is live in this topic (this window's stream, or the status feed, says so). */
  running: boolean;
  /** A message was sent and its turn has not started streaming yet. */
  sending: boolean;
  stopping: boolean;
  /** Something failed outside any one reply (stop, a lost connection). */
  error: ApiFailure | undefined;
}

export interface TopicSessionOptions {
  /** A reply ended and the history was re-read: titles or the topic list may have changed. */
  onSettled?: () => void;
  /** Coalesces re-renders while chunks stream; 0 renders on every change. */
  throttleMs?: number;
  /** Delays between reattach attempts after a dropped connection. */
  reconnectDelaysMs?: readonly number[];
}

const RECONNECT_DELAYS_MS = [0, 250, 500, 1000, 2000, 4000, 4000, 4000];

export function isRunningStatus(status: TopicStatus | undefined): boolean {
  return status === 'pending' || status === 'streaming' || status === 'awaiting_approval';
}

/**
 * One topic as this window shows it. It owns the topic's single listener (open, retry,
 * continue, add model, interrupt and attach all replace it), reads its stream with
 * {@link LiveReplies}, and merges that with the stored history in
 * {@link buildConversation}: the one place that decides what is on screen.
 *
 * The backend is the truth: when a reply ends, the history is read again and the
 * stream's copies of finished replies are dropped. Leaving the topic only detaches.
 */
export class TopicSession {
  /** The loaded part of the active path (the newest page, and older ones as the user scrolls up). */
  private stored: StoredMessage[] | undefined;
  /** The `before` cursor of the page above `stored`; `null` when it starts at the first turn. */
  private older: string | null = null;
  private loadingOlder = false;
  /** The next read replaces what is loaded (the path changed) instead of joining it. */
  private rereadAll = false;
  /** The path changes the newest page read has seen. */
  private readPath: PathVersion | undefined;
  /** The topic's last path change the status feed told of. */
  private knownPath: PathVersion | undefined;
  private readonly replies = new LiveReplies();
  private pendingUser: ChatMessage | undefined;
  /** Set while `pendingUser` is a new version of a stored message (an edit). */
  private pendingEdit: PendingEdit | undefined;
  /** Every turn a read of the history held: live replies of those it lacks now are off the path. */
  private readonly knownTurns = new Set<string>();
  private subscription: Subscription | undefined;
  /** Bumped whenever the listener is replaced or dropped; older callbacks are ignored. */
  private generation = 0;
  /** Streaming requests on their way (open, attach, retry, …). */
  private requests = 0;
  private sendingTurn = false;
  private stopping = false;
  private topicStatus: TopicStatus | undefined;
  private error: ApiFailure | undefined;
  private loadError: ApiFailure | undefined;
  private active = false;
  private reconnectAttempts = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private reading: Promise<void> | undefined;
  /** The finished turn after which this window last looked for a next one. */
  private lookedAfter: string | undefined;
  private readAgain = false;
  /** The first page, already here when the session was made: its first read is this. */
  private arrivedPage: MessagesPage | undefined;

  private state: SessionState;
  private readonly listeners = new Set<() => void>();
  private renderTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly throttleMs: number;
  private readonly reconnectDelays: readonly number[];

  constructor(
    private readonly backend: Backend,
    readonly topicId: string,
    private readonly options: TopicSessionOptions = {},
  ) {
    this.throttleMs = options.throttleMs ?? 40;
    this.reconnectDelays = options.reconnectDelaysMs ?? RECONNECT_DELAYS_MS;
    // The page asked for as the window loaded, if it is here: the first frame shows it.
    const arrived = takeArrivedEarlyPage(topicId);
    if (arrived) {
      this.arrivedPage = arrived;
      this.stored = arrived.messages;
      this.older = arrived.older;
    }
    this.state = this.buildState();
  }

  // ---- React binding ----

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getState = (): SessionState => this.state;

  // ---- Lifecycle ----

  /** The topic is shown: read its history and attach to its live turn, if any. */
  open(): void {
    if (this.active) return;
    this.active = true;
    this.readHistory();
    void this.attach();
  }

  /** The window leaves the topic: stop listening (detach). The reply itself goes on. */
  close(): void {
    this.active = false;
    this.detach();
    if (this.renderTimer !== undefined) clearTimeout(this.renderTimer);
    this.renderTimer = undefined;
  }

  /** The topic's status from the window's status feed. */
  setStatus(status: TopicStatus | undefined): void {
    const before = this.topicStatus;
    this.topicStatus = status;
    if (!this.active || before === status) return;
    if (isRunningStatus(status) && !this.listening()) {
      // Another window (or the inbox) started a turn here: follow it.
      void this.attach();
    } else if (!isRunningStatus(status) && isRunningStatus(before) && !this.listening()) {
      this.readHistory();
    }
    this.render();
  }

  /** Reads the history again, e.g. after it failed to load. */
  reload(): void {
    this.loadError = undefined;
    this.render();
    this.readHistory();
  }

  dismissError(): void {
    this.error = undefined;
    this.render();
  }

  /** Reads the page of turns above the loaded ones (the user scrolled up to them). */
  loadOlder = async (): Promise<void> => {
    const before = this.older;
    if (!this.active || this.loadingOlder || before === null || !this.stored) return;
    this.loadingOlder = true;
    this.render();
    try {
      const request: MessagesPageRequest = { topicId: this.topicId, before, turns: PAGE_TURNS };
      const page = await this.backend.call('messages_page', request);
      // A read of the newest page meanwhile may have replaced what this page joins.
      if (this.stored && this.older === before) {
        const joined = prependOlder({ rows: this.stored, older: before }, page);
        this.stored = joined.rows;
        this.older = joined.older;
      }
    } catch (error) {
      const failure = toApiFailure(error, 'Could not load earlier messages');
      if (failure.kind === 'not_found') {
        // That message is gone (deleted in another window): read the path again.
        this.rereadAll = true;
        this.readHistory();
      } else {
        this.error = failure;
      }
    } finally {
      this.loadingOlder = false;
      this.render();
    }
  };

  // ---- What the user does ----

  /**
   * Sends a message (with files, if any) to one model or several. Resolves once the turn
   * has started (or failed to); with the text back when it never reached the backend.
   */
  send(text: string, models: readonly ModelRef[], attachments: readonly Attachment[] = [], resources: readonly McpResourceRef[] = []): Promise<{ unsent?: string }> {
    return this.startTurn('stream_open', text, models, attachments, undefined, resources);
  }

  /** Stops the live turn (kept as paused) and sends this message at once. */
  interrupt(text: string, models: readonly ModelRef[], attachments: readonly Attachment[] = [], resources: readonly McpResourceRef[] = []): Promise<{ unsent?: string }> {
    return this.startTurn('stream_interrupt', text, models, attachments, undefined, resources);
  }

  /** Stop: resolves once the backend has persisted the turn as paused. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.render();
    try {
      await this.backend.call('stream_abort', { topicId: this.topicId } satisfies TopicRequest);
    } catch (error) {
      this.error = toApiFailure(error, 'Could not stop the reply');
    } finally {
      this.stopping = false;
    }
    // The terminals arrive on the stream; without one, read the stored state now.
    if (!this.listening()) this.readHistory();
    this.render();
  }

  /**
   * Stops one reply of the live turn (a model column); the other models go on. Its
   * terminal arrives on the stream. Resolves with the error to show beside it, if any.
   */
  async stopReply(messageId: string): Promise<ApiFailure | undefined> {
    try {
      await this.backend.call('reply_stop', { topicId: this.topicId, messageId } satisfies ReplyRequest);
      return undefined;
    } catch (error) {
      return toApiFailure(error, 'Could not stop this reply');
    }
  }

  /**
   * Generates a reply again as a new version of it (the old one stays, one `‹ ›` away).
   * Resolves with the error to show beside it, if any.
   */
  retry(messageId: string): Promise<ApiFailure | undefined> {
    const request: ReplyRequest = { topicId: this.topicId, messageId };
    return this.replyOperation('stream_retry', request, 'Could not retry this reply');
  }

  /** Continues a paused reply after the text it kept. */
  continueReply(messageId: string): Promise<ApiFailure | undefined> {
    const request: ReplyRequest = { topicId: this.topicId, messageId };
    return this.replyOperation('stream_continue', request, 'Could not continue this reply');
  }

  /**
   * Sends a new version of a user message (its text and exactly these files), answered by
   * the models that answered it; it becomes the active branch. Resolves as `send` does.
   */
  edit(messageId: string, text: string, attachments: readonly Attachment[] = []): Promise<{ unsent?: string }> {
    return this.startTurn('stream_edit', text, [], attachments, messageId);
  }

  /**
   * Shows another version of a message (for a user message, its whole branch). A reply
   * streaming in the version left goes on, hidden. Resolves with the error to show, if any.
   */
  selectVersion(messageId: string): Promise<ApiFailure | undefined> {
    return this.changePath('message_select', messageId, 'Could not show that version');
  }

  /** Deletes a message (or reply version) with everything after it on its branch. */
  deleteMessage(messageId: string): Promise<ApiFailure | undefined> {
    return this.changePath('message_delete', messageId, 'Could not delete the message');
  }

  /** A new topic whose history is the active path up to this message. */
  async fork(messageId: string): Promise<{ topic: Topic } | { error: ApiFailure }> {
    try {
      const topic = await this.backend.call('topic_fork', { topicId: this.topicId, messageId } satisfies MessageRequest);
      return { topic };
    } catch (error) {
      return { error: toApiFailure(error, 'Could not fork the topic here') };
    }
  }

  /**
   * The status feed's latest word on this topic's path (see `topicPath`): when it is
   * newer than what was read (changed in another window, or while the feed was away, or
   * the backend restarted), the path is read again. A change the last read already saw,
   * such as the first snapshot after the page was read as the window loaded, reads
   * nothing.
   */
  followPath(known: PathVersion | undefined): void {
    if (!known) return;
    this.knownPath = known;
    if (this.readPath && pathIsNewer(known, this.readPath)) this.refresh();
  }

  /**
   * A turn started in the topic (the status feed says so). One this window does not
   * follow may already have ended by the time the window renders the change (a queued
   * message that ran at once): the history is read, so it shows.
   */
  turnStarted(): void {
    if (this.active && !this.listening()) this.readHistory();
  }

  /**
   * The active path changed elsewhere: read it again. The live stream stays attached.
   */
  refresh(): void {
    if (!this.active) return;
    this.rereadAll = true;
    this.readHistory();
  }

  private async changePath(operation: 'message_select' | 'message_delete', messageId: string, what: string) {
    try {
      await this.backend.call(operation, { topicId: this.topicId, messageId } satisfies MessageRequest);
    } catch (error) {
      return toApiFailure(error, what);
    }
    // The path may have changed anywhere in what is loaded: read all of it again.
    this.rereadAll = true;
    this.readHistory();
    return undefined;
  }

  /** Asks one more model to answer a turn. */
  addModel(turnId: string, model: ModelRef): Promise<ApiFailure | undefined> {
    const request: AddModelRequest = { topicId: this.topicId, turnId, model };
    return this.replyOperation('stream_add_model', request, 'Could not ask another model');
  }

  // ---- Listening ----

  private listening(): boolean {
    return this.subscription !== undefined || this.requests > 0 || this.reconnectTimer !== undefined;
  }

  private async startTurn(
    operation: 'stream_open' | 'stream_interrupt' | 'stream_edit',
    text: string,
    models: readonly ModelRef[],
    attachments: readonly Attachment[],
    editedId?: string,
    resources: readonly McpResourceRef[] = [],
  ) {
    const messageId = newMessageId();
    this.pendingUser = {
      id: messageId,
      role: 'user',
      // As the backend stores it: the text (if any), then the files.
      parts: [
        ...(text === '' ? [] : [{ type: 'text' as const, text }]),
        ...attachmentParts(attachments),
        // Shown as chips until the stored message (with what was read) replaces it.
        ...resources.map((r) => ({ type: RESOURCE_PART, data: { serverId: r.serverId, serverName: '', uri: r.uri, contents: [] } }) as UiPart),
      ],
      metadata: { status: 'success' },
    };
    this.pendingEdit = editedId !== undefined ? { editedId } : undefined;
    this.error = undefined;
    this.sendingTurn = true;
    this.render();
    const wasListening = this.subscription !== undefined;
    try {
      if (operation === 'stream_edit' && editedId !== undefined) {
        const request: EditMessageRequest = { topicId: this.topicId, messageId: editedId, text, newMessageId: messageId };
        if (attachments.length > 0) request.attachments = [...attachments];
        await this.listen(operation, request);
      } else if (operation !== 'stream_edit') {
        const request: StreamOpenRequest = { topicId: this.topicId, text, messageId };
        if (models.length > 1) request.models = [...models];
        else if (models[0]) request.model = models[0];
        if (attachments.length > 0) request.attachments = [...attachments];
        if (resources.length > 0) request.mcpResources = [...resources];
        await this.listen(operation, request);
      }
      return {};
    } catch (error) {
      this.pendingUser = undefined;
      this.pendingEdit = undefined;
      this.error = toApiFailure(error, editedId !== undefined ? 'Your edit was not sent' : 'Your message was not sent');
      if (wasListening || isRunningStatus(this.topicStatus)) void this.attach();
      return { unsent: text };
    } finally {
      this.sendingTurn = false;
      this.render();
    }
  }

  private async replyOperation(operation: StreamOperation, request: ReplyRequest | AddModelRequest, what: string) {
    const wasListening = this.subscription !== undefined;
    try {
      await this.listen(operation, request);
      return undefined;
    } catch (error) {
      // The listener was given up for this request: take the live turn up again.
      if (wasListening || isRunningStatus(this.topicStatus)) void this.attach();
      return toApiFailure(error, what);
    }
  }

  /** Attaches to the topic's live turn, continuing after what this window already has. */
  private async attach(): Promise<void> {
    if (!this.active) return;
    const request: StreamAttachRequest = { topicId: this.topicId, after: this.replies.cursors() };
    let reply: AttachReply;
    try {
      reply = await this.listen('stream_attach', request);
    } catch (error) {
      const failure = toApiFailure(error, 'Could not follow the reply');
      if (failure.retryable) this.reconnect(failure);
      else {
        this.error = failure;
        this.render();
      }
      return;
    }
    if (!reply.live) this.turnOver();
  }

  /**
   * Makes `operation` this window's one listener of the topic. Messages that arrive
   * before the request resolves (IPC delivers them early) are read already.
   */
  private async listen<K extends StreamOperation>(
    operation: K,
    request: StreamOperations[K]['request'],
  ): Promise<AttachReply> {
    this.detach();
    const generation = this.generation;
    this.requests++;
    try {
      const subscription = await this.backend.subscribe(
        operation,
        request,
        (message) => {
          if (generation === this.generation) this.onMessage(message);
        },
        (error) => {
          if (generation === this.generation) this.onDropped(error);
        },
      );
      if (generation !== this.generation || !subscription.reply.live) {
        // Replaced meanwhile, finished already, or nothing live to follow.
        subscription.close();
      } else {
        this.subscription = subscription;
      }
      return subscription.reply;
    } finally {
      this.requests--;
    }
  }

  /** Drops the current listener (if any); its late messages are ignored. */
  private detach(): void {
    this.generation++;
    this.subscription?.close();
    this.subscription = undefined;
    if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
  }

  private onMessage(message: StreamMessage): void {
    const effect = this.replies.read(message);
    if (message.kind === 'chunk' || message.kind === 'snapshot') this.reconnectAttempts = 0;
    if (effect.reattach) {
      // Lagged, or a chunk is missing: attach again from our cursors right away.
      void this.attach();
    } else if (effect.topicDone) {
      const finished = this.replies.turnId;
      this.detach();
      this.readHistory();
      // The status feed can announce the next turn (e.g. the inbox's next message) before
      // this stream's end arrives: look once whether one is live now.
      if (isRunningStatus(this.topicStatus) && this.lookedAfter !== finished) {
        this.lookedAfter = finished;
        void this.attach();
      }
    } else if (effect.discovered && this.hasUnreadRows()) {
      this.readHistory();
    }
    if (effect.changed) this.render(true);
  }

  /** The connection ended before the turn did. */
  private onDropped(error: ApiFailure | undefined): void {
    this.subscription = undefined;
    this.generation++;
    this.reconnect(error);
  }

  private reconnect(error: ApiFailure | undefined): void {
    if (!this.active) return;
    const delay = this.reconnectDelays[this.reconnectAttempts];
    if (delay === undefined) {
      this.error =
        error ?? toApiFailure(undefined, 'The connection to the reply was lost. Reopen the topic to follow it again');
      this.reconnectAttempts = 0;
      this.render();
      return;
    }
    this.reconnectAttempts++;
    if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.attach();
    }, delay);
  }

  /** Nothing is live any more: whatever this window followed has ended. */
  private turnOver(): void {
    if (!this.replies.running()) return;
    this.replies.leaveTurn();
    this.readHistory();
  }

  private hasUnreadRows(): boolean {
    const stored = this.stored;
    if (!stored) return false;
    const ids = new Set(stored.map((row) => row.id));
    return this.replies.replies().some((reply) => !ids.has(reply.messageId));
  }

  // ---- History ----

  /** Reads the stored history; the stream's copies of replies it now covers are dropped. */
  private readHistory(): void {
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = (async () => {
      do {
        this.readAgain = false;
        const settled = this.replies.settled();
        try {
          // The newest page, joined onto the older pages the user scrolled to; after a
          // change of path, as many turns as are loaded, in place of them.
          const whole = this.rereadAll;
          this.rereadAll = false;
          const loaded = this.stored ? loadedTurns(this.stored) : 0;
          const turns = whole ? Math.min(MAX_PAGE_TURNS, Math.max(PAGE_TURNS, loaded)) : PAGE_TURNS;
          const request: MessagesPageRequest = { topicId: this.topicId, turns };
          const read = () => this.backend.call('messages_page', request);
          // The first read may take the page asked for as the window loaded. Nothing has
          // settled yet then (no stream was attached), so nothing is pruned by it.
          const early = this.stored === undefined && settled.length === 0 ? takeEarlyPage(this.topicId) : undefined;
          const arrived = this.arrivedPage;
          this.arrivedPage = undefined;
          // Awaited even when it is here: `this.reading` must be set before this ends.
          const page = await (arrived ?? (early ? early.catch(read) : read()));
          const joined = joinNewest(whole || !this.stored ? undefined : { rows: this.stored, older: this.older }, page);
          const stored = joined.rows;
          this.stored = stored;
          this.older = joined.older;
          this.readPath = page.path;
          // A change told of while this page was on its way and that it did not see.
          if (this.knownPath && pathIsNewer(this.knownPath, page.path)) {
            this.rereadAll = true;
            this.readAgain = true;
          }
          this.loadError = undefined;
          for (const row of stored) if (row.turnId !== undefined) this.knownTurns.add(row.turnId);
          this.replies.prune(settled);
          if (this.pendingUser && stored.some((row) => row.id === this.pendingUser?.id)) {
            this.pendingUser = undefined;
            this.pendingEdit = undefined;
          }
          this.render();
          this.options.onSettled?.();
        } catch (error) {
          const failure = toApiFailure(error, 'Could not load this topic');
          if (this.stored) this.error = failure;
          else this.loadError = failure;
          this.render();
        }
      } while (this.readAgain && this.active);
      this.reading = undefined;
    })();
  }

  // ---- Rendering ----

  private buildState(previous?: SessionState): SessionState {
    const turns = this.stored
      ? buildConversation(
          {
            stored: this.stored,
            live: this.replies.replies(),
            liveTurnId: this.replies.turnId,
            pendingUser: this.pendingUser,
            pendingEdit: this.pendingEdit,
            executionIds: this.replies.executionIds,
            knownTurns: this.knownTurns,
          },
          previous?.turns,
        )
      : [];
    return {
      loaded: this.stored !== undefined,
      loadError: this.loadError,
      turns,
      hasOlder: this.stored !== undefined && this.older !== null,
      loadingOlder: this.loadingOlder,
      running: this.sendingTurn || this.replies.running() || isRunningStatus(this.topicStatus),
      sending: this.sendingTurn,
      stopping: this.stopping,
      error: this.error,
    };
  }

  /** Publishes a new state; stream chunks (`coalesce`) at most once per throttle interval. */
  private render(coalesce = false): void {
    if (coalesce && this.throttleMs > 0) {
      this.renderTimer ??= setTimeout(() => {
        this.renderTimer = undefined;
        this.publish();
      }, this.throttleMs);
      return;
    }
    if (this.renderTimer !== undefined) clearTimeout(this.renderTimer);
    this.renderTimer = undefined;
    this.publish();
  }

  private publish(): void {
    this.state = this.buildState(this.state);
    for (const listener of this.listeners) listener();
  }
}

function newMessageId(): string {
  if (typeof crypto !== 'undefined' && typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return `msg-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}
