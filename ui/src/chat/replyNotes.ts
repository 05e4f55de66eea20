import type { MessageMetadata } from '../protocol.gen';

/**
 * The notes an agent session's reply carries besides text and tool calls: where the agent
 * compacted its context (`data-compaction`), whether a steering message reached the
 * running turn (`data-steer`), and what the turn cost.
 */

export type CompactionState = 'started' | 'done' | 'error';

export interface CompactionMarker {
  state: CompactionState;
  label: string;
  /** Why and by how much, when the agent said. */
  detail: string | undefined;
}

function record(data: unknown): Record<string, unknown> | undefined {
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
}

/** `12 345` tokens as `12k`, `1 234` as `1.2k`. */
export function formatTokens(tokens: number): string {
  if (tokens < 1000) return String(Math.round(tokens));
  const thousands = tokens / 1000;
  return `${thousands < 10 ? thousands.toFixed(1).replace(/\.0$/, '') : Math.round(thousands)}k`;
}

/** A `data-compaction` part's marker, or undefined when its data is not one. */
export function compactionMarker(data: unknown): CompactionMarker | undefined {
  const fields = record(data);
  const state = fields?.state;
  if (state !== 'started' && state !== 'done' && state !== 'error') return undefined;
  if (state === 'started') return { state, label: 'Compacting the context…', detail: undefined };
  if (state === 'error') {
    const message = typeof fields?.message === 'string' && fields.message !== '' ? fields.message : undefined;
    return { state, label: 'Compacting the context failed', detail: message };
  }
  const details: string[] = [];
  if (fields?.trigger === 'auto') details.push('automatically, as the context was full');
  else if (fields?.trigger === 'manual') details.push('on request');
  const before = fields?.preTokens;
  const after = fields?.postTokens;
  if (typeof before === 'number' && typeof after === 'number') details.push(`${formatTokens(before)} → ${formatTokens(after)} tokens`);
  else if (typeof before === 'number') details.push(`from ${formatTokens(before)} tokens`);
  return {
    state,
    label: 'Context compacted',
    detail: details.length > 0 ? details.join(', ') : undefined,
  };
}

/**
 * `delivered`: it went into the running turn at a tool boundary; `undelivered`: it came
 * after the last one and runs as the next turn; `queued`: the agent takes no message
 * mid-turn (ACP), so it was sent as the next prompt; `interrupted`: the user cancelled
 * this turn to send their message now (Interrupt).
 */
export type SteerState = 'delivered' | 'undelivered' | 'queued' | 'interrupted';

export interface SteerNote {
  state: SteerState;
  text: string;
}

/** A `data-steer` part's note, or undefined when its data is not one. */
export function steerNote(data: unknown): SteerNote | undefined {
  const state = record(data)?.state;
  if (state === 'delivered') return { state, text: 'Your message went in at the next step.' };
  if (state === 'undelivered') return { state, text: 'Your message arrived after the last step; it runs as the next turn.' };
  if (state === 'queued') return { state, text: 'Queued — your message came during this turn and was sent as the next prompt after it.' };
  if (state === 'interrupted') return { state, text: 'Interrupted — you cancelled this turn to send your message now.' };
  return undefined;
}

/** What the turn cost as the agent reported it (`costUsd`), e.g. `$0.03`. */
export function replyCost(metadata: MessageMetadata | undefined): string | undefined {
  const cost = (metadata as Record<string, unknown> | undefined)?.costUsd;
  if (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0) return undefined;
  if (cost > 0 && cost < 0.01) return '<$0.01';
  return `$${cost.toFixed(2)}`;
}
