import { MAX_PAGE_TURNS, PAGE_TURNS } from './history';

/**
 * When and how much of the history above the loaded turns to read, from how the user
 * scrolls. The next older page is read before the top is reached: while the rows above
 * the window still cover the time a read takes at the current speed (at least a few
 * screens, when the view is still). A fast scroll asks for a larger page (up to the
 * backend's limit), so the reads keep ahead of it instead of each ending at the top.
 *
 * The floor is counted in turns, not pixels: until turns are measured their heights are
 * guesses (a topic just opened looks shorter than it is), and a read is not worth making
 * on a guess.
 */

/** What a page read costs, at most, on a slow machine (a debug server under load): the lead time a prefetch needs. */
export const READ_AHEAD_MS = 1_500;
/** A page covers this much scrolling at the current speed (so the next read starts well before it runs out). */
export const PAGE_AHEAD_MS = 3_000;
/** Read ahead by at least this many turns, even when the view is still (a few screens of them). */
export const MIN_AHEAD_TURNS = 10;
/** Scroll samples older than this say nothing about the current speed. */
const SPEED_WINDOW_MS = 250;

export interface OlderPageInput {
  /** Pixels above the window (the scroller's `scrollTop`, less what precedes the list). */
  above: number;
  /** Loaded turns above the window (the index of the first one in view). */
  turnsAbove: number;
  /** How fast the view moves up, in pixels per millisecond (0 when still or moving down). */
  speed: number;
  /** The average height of a loaded turn. */
  turnHeight: number;
}

/** The number of turns to read above the loaded ones now, or 0 when nothing needs reading yet. */
export function olderPageTurns({ above, turnsAbove, speed, turnHeight }: OlderPageInput): number {
  if (turnsAbove >= MIN_AHEAD_TURNS && above >= speed * READ_AHEAD_MS) return 0;
  if (!(turnHeight > 0) || speed <= 0) return PAGE_TURNS;
  const wanted = Math.ceil((speed * PAGE_AHEAD_MS) / turnHeight);
  return Math.min(MAX_PAGE_TURNS, Math.max(PAGE_TURNS, wanted));
}

/** The upward speed of a scroller from its recent positions (pixels per millisecond). */
export class ScrollSpeed {
  private samples: { at: number; top: number }[] = [];

  /** Records a position; `at` in milliseconds (`performance.now()`). */
  sample(top: number, at: number): void {
    const last = this.samples[this.samples.length - 1];
    // Moving down (or rows put above the window, which move it down): start over.
    if (last && top > last.top) this.samples = [];
    this.samples.push({ at, top });
    while (this.samples.length > 2 && at - (this.samples[0]?.at ?? at) > SPEED_WINDOW_MS) this.samples.shift();
  }

  /** Pixels per millisecond upwards over the last samples; 0 when still, moving down, or unknown. */
  upward(now: number): number {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || !last || last === first || now - last.at > SPEED_WINDOW_MS) return 0;
    const elapsed = last.at - first.at;
    return elapsed > 0 ? Math.max(0, (first.top - last.top) / elapsed) : 0;
  }
}
