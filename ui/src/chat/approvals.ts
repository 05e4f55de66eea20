import { toApiFailure, type ApiFailure, type Backend } from '../backend/backend';
import type {
  Approval,
  ApprovalDecision,
  ApprovalScope,
  ApprovalsListRequest,
  ToolApprovalRespond,
  TopicStatusEvent,
} from '../protocol.gen';

/** What the user answers to one tool call. */
export interface ApprovalAnswer {
  decision: ApprovalDecision;
  scope?: ApprovalScope;
  /** Told to the model when denying. */
  reason?: string;
  /** Approve with these arguments instead of the model's. */
  updatedInput?: unknown;
}

export interface ApprovalsState {
  /** Tool calls waiting for an answer, across every topic; undefined until first read. */
  pending: Approval[] | undefined;
  /**
   * Answers given in this window, by approval id. A card shows its answer from here
   * until the reply's stored message says it too.
   */
  answered: ReadonlyMap<string, Approval>;
  /** Approvals whose answer is on its way. */
  answering: ReadonlySet<string>;
  /** Why an answer failed, by approval id. */
  failures: ReadonlyMap<string, ApiFailure>;
  /** Reading the list failed. */
  error: ApiFailure | undefined;
}

/** The approvals that are pending in `after` and were not in `before` (none on the first read). */
export function newlyPending(before: readonly Approval[] | undefined, after: readonly Approval[]): Approval[] {
  if (before === undefined) return [];
  const known = new Set(before.map((approval) => approval.id));
  return after.filter((approval) => !known.has(approval.id));
}

/**
 * True when some topic entered or left `awaiting_approval` between two status maps:
 * the pending list may have changed.
 */
export function approvalStatusesChanged(
  before: ReadonlyMap<string, TopicStatusEvent>,
  after: ReadonlyMap<string, TopicStatusEvent>,
): boolean {
  if (before === after) return false;
  const ids = new Set([...before.keys(), ...after.keys()]);
  for (const id of ids) {
    const was = before.get(id)?.status;
    const is = after.get(id)?.status;
    if (was !== is && (was === 'awaiting_approval' || is === 'awaiting_approval')) return true;
  }
  return false;
}

/**
 * The window's view of tool calls waiting for the user, across all topics (the sidebar
 * inbox, the cards in the conversation). The backend holds the approvals; this only
 * reads them, sends answers (each at most once from this window, however often a button
 * is clicked) and remembers the answers it got until the stored replies show them.
 */
export class ApprovalInbox {
  private state: ApprovalsState = {
    pending: undefined,
    answered: new Map(),
    answering: new Set(),
    failures: new Map(),
    error: undefined,
  };
  private readonly listeners = new Set<() => void>();
  private readonly newListeners = new Set<(approvals: Approval[]) => void>();
  private readonly inFlight = new Map<string, Promise<ApiFailure | undefined>>();
  private asked = 0;
  private shown = 0;
  private statuses: ReadonlyMap<string, TopicStatusEvent> | undefined;

  constructor(private readonly backend: Backend) {}

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getState = (): ApprovalsState => this.state;

  /** Calls `listener` with approvals that became pending since the last read. */
  onNewlyPending(listener: (approvals: Approval[]) => void): () => void {
    this.newListeners.add(listener);
    return () => this.newListeners.delete(listener);
  }

  /** The status feed changed: read the list again when a topic entered or left "awaiting approval". */
  followStatuses(statuses: ReadonlyMap<string, TopicStatusEvent>): void {
    const before = this.statuses;
    this.statuses = statuses;
    if (before === undefined || approvalStatusesChanged(before, statuses)) void this.refresh();
  }

  /** Reads the pending approvals of every topic. When answers cross, the one asked for last wins. */
  async refresh(): Promise<void> {
    const ticket = ++this.asked;
    try {
      const pending = await this.backend.call('approvals_list', {} satisfies ApprovalsListRequest);
      if (ticket < this.shown) return;
      this.shown = ticket;
      const fresh = newlyPending(this.state.pending, pending);
      // An answer this window is still sending stays out of the list.
      const shown = pending.filter((approval) => !this.state.answered.has(approval.id));
      this.publish({ ...this.state, pending: shown, error: undefined });
      if (fresh.length > 0) for (const listener of this.newListeners) listener(fresh);
    } catch (error) {
      this.publish({ ...this.state, error: toApiFailure(error, 'Could not read the tool calls waiting for you') });
    }
  }

  /**
   * Answers one approval. A second call for the same approval while the first is on its
   * way, or after it was answered here, sends nothing. Resolves with the error to show.
   */
  respond(approvalId: string, answer: ApprovalAnswer): Promise<ApiFailure | undefined> {
    const running = this.inFlight.get(approvalId);
    if (running) return running;
    if (this.state.answered.has(approvalId)) return Promise.resolve(undefined);
    const request: ToolApprovalRespond = { approvalId, decision: answer.decision };
    if (answer.scope !== undefined) request.scope = answer.scope;
    if (answer.reason !== undefined && answer.reason.trim() !== '') request.reason = answer.reason.trim();
    if (answer.updatedInput !== undefined) request.updatedInput = answer.updatedInput;

    const failures = new Map(this.state.failures);
    failures.delete(approvalId);
    this.publish({ ...this.state, answering: new Set(this.state.answering).add(approvalId), failures });
    const sent = (async () => {
      let failure: ApiFailure | undefined;
      try {
        const decided = await this.backend.call('tool_approval_respond', request);
        const answered = new Map(this.state.answered).set(approvalId, decided);
        const pending = this.state.pending?.filter((approval) => approval.id !== approvalId);
        this.publish({ ...this.state, answered, pending });
      } catch (error) {
        failure = toApiFailure(error, 'Your answer was not recorded');
        this.publish({ ...this.state, failures: new Map(this.state.failures).set(approvalId, failure) });
      } finally {
        this.inFlight.delete(approvalId);
        const answering = new Set(this.state.answering);
        answering.delete(approvalId);
        this.publish({ ...this.state, answering });
      }
      void this.refresh();
      return failure;
    })();
    this.inFlight.set(approvalId, sent);
    return sent;
  }

  /** Answers several approvals the same way ("Allow all", "Deny all"); resolves with the first error. */
  async respondAll(approvalIds: readonly string[], answer: ApprovalAnswer): Promise<ApiFailure | undefined> {
    const failures = await Promise.all(approvalIds.map((id) => this.respond(id, answer)));
    return failures.find((failure) => failure !== undefined);
  }

  private publish(state: ApprovalsState): void {
    this.state = state;
    for (const listener of this.listeners) listener();
  }
}
