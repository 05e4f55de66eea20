import type { TokensResult } from 'shiki/core';

// What the page and the code highlighter's worker exchange. Kept apart from the tokenizer
// so that the page's side does not load Shiki.

/** The light and the dark theme, as Streamdown's `shikiTheme` names them. */
export const THEMES = ['github-light', 'github-dark'] as const;

/** A block to highlight: `incomplete` while it is still streaming. */
export interface HighlightJob {
  id: number;
  code: string;
  language: string;
  incomplete: boolean;
}

/** Shiki's tokens without the grammar state, which cannot leave the worker. */
export type Tokens = Omit<TokensResult, 'grammarState'>;

export type HighlightReply = { id: number; tokens: Tokens } | { id: number; skipped: true } | { id: number; error: string };

/**
 * A streaming block's job is dropped when a later job in the queue will answer for it: the
 * same language, and code that starts with this code (the block grew). Streamdown shows
 * the newer result, so the older one would only be thrown away after costing its time.
 */
export function superseded(job: HighlightJob, later: readonly HighlightJob[]): boolean {
  return job.incomplete && later.some((next) => next.language === job.language && next.code.startsWith(job.code));
}
