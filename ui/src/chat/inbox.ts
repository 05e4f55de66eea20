import { toApiFailure, type ApiFailure, type Backend } from '../backend/backend';
import type {
  InboxAddRequest,
  InboxItem,
  InboxItemRequest,
  InboxMode,
  InboxMoveRequest,
  InboxUpdateRequest,
  ModelRef,
  TopicRequest,
  TopicStatus,
} from '../protocol.gen';
import type { TurnView } from './conversation';
import { isToolPart } from './tools';

/** How often, and how many times, a finished topic's queue is read again while it settles. */
const SETTLE_READ_INTERVAL_MS = 250;
const SETTLE_READS = 40;

export interface InboxState {
  /** In run order; `undefined` until first read. */
  items: InboxItem[] | undefined;
  /** The last action that failed, to show above the list. */
  error: ApiFailure | undefined;
}

/** The 0-based position one step up or down, or undefined at either end. */
export function stepPosition(items: readonly InboxItem[], id: string, direction: 'up' | 'down'): number | undefined {
  const index = items.findIndex((item) => item.id === id);
  if (index === -1) return undefined;
  const target = direction === 'up' ? index - 1 : index + 1;
  return target < 0 || target >= items.length ? undefined : target;
}

/**
 * When a steering message can take effect. A chat turn yields to one only at a step
 * boundary: after a step whose tool calls have their results (`docs/api.md`, Inbox). A
 * reply that calls no tool (a plain chat answer) has no such boundary, so the message
 * waits until the reply ends and then goes first, ahead of queued ones.
 *
 * `next-step`: a live reply has called a tool, so it may stop after its next one;
 * `after-reply`: no live reply has called one so far; `agent`: an agent session, whose
 * agent takes the message in before its next tool call and goes on; `after-turn`: an
 * agent that takes no message mid-turn (an ACP agent): it is queued and sent as the
 * agent's next prompt when the turn ends.
 */
export type SteerTiming = 'next-step' | 'after-reply' | 'agent' | 'after-turn';

/** How an agent session's agent takes a steering message: mid-turn (Claude Code) or as its next prompt (ACP). */
export type AgentSteering = 'mid-turn' | 'after-turn';

export function steerTiming(turns: readonly TurnView[], agent?: AgentSteering): SteerTiming {
  if (agent === 'mid-turn') return 'agent';
  if (agent === 'after-turn') return 'after-turn';
  const live = turns.flatMap((turn) => turn.replies).filter((reply) => reply.live);
  return live.some((reply) => reply.message.parts.some(isToolPart)) ? 'next-step' : 'after-reply';
}

/** What Steer does, for its button and the steering messages waiting in the inbox. */
export function steerExplanation(timing: SteerTiming): string {
  switch (timing) {
    case 'next-step':
      return 'Steer: the reply stops after the results of its next tool call, and your message is answered next, ahead of queued ones. If it calls no more tools, your message goes next when it ends.';
    case 'after-reply':
      return 'Steer: this reply has called no tool, so it has no step to stop at: unless it calls one, it runs to its end, then your message goes first, ahead of queued ones.';
    case 'agent':
      return 'Steer: the agent reads your message before its next tool call and goes on with it in mind. If it calls no more tools, your message runs next when it ends, ahead of queued ones.';
    case 'after-turn':
      return 'Steer: this agent takes no message mid-turn, so yours is queued and sent as its next prompt when this turn ends, ahead of queued ones. Interrupt cancels the turn and sends it now.';
  }
}

/** What Queue does. */
export const QUEUE_EXPLANATION = 'Queue: sent as a new turn when the reply ends, after messages queued before it.';

/**
 * One topic's steering inbox as the backend holds it. Every change is made by the
 * backend and the list shown is what it answered; when answers cross (a refresh and an
 * edit), the one asked for last wins.
 */
export class InboxStore {
  private state: InboxState = { items: undefined, error: undefined };
  private readonly listeners = new Set<() => void>();
  private asked = 0;
  private shown = 0;
  /** Bumped on every status change, so an older settling loop stops. */
  private statusChanges = 0;

  constructor(
    private readonly backend: Backend,
    readonly topicId: string,
  ) {}

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getState = (): InboxState => this.state;

  /** Reads the list again (the topic's status changed, or after an action). */
  async refresh(): Promise<void> {
    await this.run('Could not read the queued messages', () =>
      this.backend.call('inbox_list', { topicId: this.topicId } satisfies TopicRequest),
    );
  }

  /**
   * Reads the list after the topic's status changed. When a turn ends, the backend
   * settles the queue (sends the next item, or holds them all) after the same status
   * change this window sees, so the first read can come before that. A finished topic
   * never keeps queued items, so while the list shows some they are read again, until
   * they settle, the status changes, or about ten seconds pass.
   */
  async followStatus(status: TopicStatus | undefined): Promise<void> {
    const change = ++this.statusChanges;
    await this.refresh();
    const finished = status === 'done' || status === 'aborted' || status === 'error';
    for (let read = 0; finished && read < SETTLE_READS; read++) {
      if (change !== this.statusChanges || !this.state.items?.some((item) => item.state === 'queued')) return;
      await new Promise((resolve) => setTimeout(resolve, SETTLE_READ_INTERVAL_MS));
      if (change !== this.statusChanges) return;
      await this.refresh();
    }
  }

  /**
   * Queue: run as the next turn. Steer: the live turn yields at its next step and this
   * goes first. `models`: who answers it when it runs (none: the topic's model then).
   */
  async add(text: string, mode: InboxMode, models?: readonly ModelRef[]): Promise<boolean> {
    const request: InboxAddRequest = { topicId: this.topicId, text, mode, ...(models?.length ? { models: [...models] } : {}) };
    return this.change(mode === 'steer' ? 'Could not steer the reply' : 'Could not queue the message', () =>
      this.backend.call('inbox_add', request),
    );
  }

  async edit(id: string, text: string): Promise<boolean> {
    const request: InboxUpdateRequest = { id, text };
    return this.change('Could not change the queued message', () => this.backend.call('inbox_update', request));
  }

  async move(id: string, direction: 'up' | 'down'): Promise<void> {
    const position = stepPosition(this.state.items ?? [], id, direction);
    if (position === undefined) return;
    const request: InboxMoveRequest = { id, position };
    await this.run('Could not move the queued message', () => this.backend.call('inbox_move', request));
  }

  async cancel(id: string): Promise<boolean> {
    const request: InboxItemRequest = { id };
    return this.change('Could not cancel the queued message', () => this.backend.call('inbox_cancel', request));
  }

  /** A held item is sent when the topic is idle (now, if it is). */
  async release(id: string): Promise<boolean> {
    const request: InboxItemRequest = { id };
    return this.change('Could not send the held message', () => this.backend.call('inbox_release', request));
  }

  dismissError(): void {
    this.publish({ ...this.state, error: undefined });
  }

  /** An action that answers with one item or nothing: the list is read again after it. */
  private async change(what: string, action: () => Promise<unknown>): Promise<boolean> {
    try {
      await action();
    } catch (error) {
      this.publish({ ...this.state, error: toApiFailure(error, what) });
      return false;
    }
    await this.refresh();
    return true;
  }

  /** A request answering with the whole list; shown unless a later request answered first. */
  private async run(what: string, request: () => Promise<InboxItem[]>): Promise<void> {
    const ticket = ++this.asked;
    try {
      const items = await request();
      if (ticket < this.shown) return;
      this.shown = ticket;
      this.publish({ items, error: undefined });
    } catch (error) {
      this.publish({ ...this.state, error: toApiFailure(error, what) });
    }
  }

  private publish(state: InboxState): void {
    this.state = state;
    for (const listener of this.listeners) listener();
  }
}
