import type { UiChunk } from '../protocol.gen';

/**
 * The backend is retrying the provider for a live reply (a transient `data-retrying`
 * chunk, never part of a stored message).
 */
export interface Retrying {
  attempt: number;
  delayMs: number;
  reason: string;
  /** When the chunk was read (ms since the epoch): the countdown runs from here. */
  since: number;
}

/** Chunks that only frame a reply: they do not end a "retrying" notice. */
const FRAMING: ReadonlySet<string> = new Set(['start', 'start-step', 'message-metadata']);

/**
 * The retry notice after `chunk`: a `data-retrying` chunk starts (or replaces) it, any
 * chunk with content (text, reasoning, tools, error, finish, …) ends it.
 */
export function retryingAfter(current: Retrying | undefined, chunk: UiChunk, now: number): Retrying | undefined {
  if (chunk.type === 'data-retrying') return parseRetrying(chunk.data, now);
  if (FRAMING.has(chunk.type)) return current;
  return undefined;
}

function parseRetrying(data: unknown, now: number): Retrying | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const record = data as Record<string, unknown>;
  const delayMs = typeof record.delayMs === 'number' && Number.isFinite(record.delayMs) ? Math.max(0, record.delayMs) : 0;
  const attempt = typeof record.attempt === 'number' ? record.attempt : 0;
  const reason = typeof record.reason === 'string' ? record.reason : '';
  return { attempt, delayMs, reason, since: now };
}

/** Whole seconds left before the retry (rounded up, never negative). */
export function secondsLeft(retrying: Retrying, now: number): number {
  return Math.max(0, Math.ceil((retrying.since + retrying.delayMs - now) / 1000));
}
