import type { MessagesPage, StoredMessage } from '../protocol.gen';

/** Turns per page: a window's worth several times over, and one read when a topic opens. */
export const PAGE_TURNS = 50;
/** The most turns one read may ask for (the backend's limit). */
export const MAX_PAGE_TURNS = 500;

/**
 * The part of a topic's active path this window has read: the newest page and the older
 * pages the user scrolled up to, oldest first, and the cursor for the page above them
 * (`null`: they start at the first turn).
 */
export interface LoadedHistory {
  rows: StoredMessage[];
  older: string | null;
}

/** How many turns (user messages) the loaded rows hold. */
export function loadedTurns(rows: readonly StoredMessage[]): number {
  return rows.reduce((count, row) => count + (row.message.role === 'user' ? 1 : 0), 0);
}

/**
 * A fresh read of the newest page joined onto what is loaded: the rows above the page's
 * first turn stay (the user may be reading them); from there on the page is the truth.
 * When the page's first turn is not among the loaded rows (the path changed above it, or
 * nothing was loaded), the page alone is the history.
 */
export function joinNewest(loaded: LoadedHistory | undefined, page: MessagesPage): LoadedHistory {
  if (loaded && page.older !== null) {
    const start = page.messages[0]?.id;
    const at = start === undefined ? -1 : loaded.rows.findIndex((row) => row.id === start);
    if (at >= 0) return { rows: [...loaded.rows.slice(0, at), ...page.messages], older: loaded.older };
  }
  return { rows: page.messages, older: page.older };
}

/** An older page read with `before: loaded.older`, put above what is loaded. */
export function prependOlder(loaded: LoadedHistory, page: MessagesPage): LoadedHistory {
  const known = new Set(loaded.rows.map((row) => row.id));
  // A row already shown (the path moved between the reads) is not shown twice.
  const rows = page.messages.filter((row) => !known.has(row.id));
  return { rows: [...rows, ...loaded.rows], older: page.older };
}

/**
 * The newest page of the topic the address names, asked for as the page loads (before
 * the topic list, providers and settings are read and the conversation is mounted), so
 * that a reload or a topic opened in its own window shows its messages one round trip
 * sooner. The topic's session takes it, once, for its first read; a failed early read is
 * asked again by the session, which reports it.
 */
let earlyPage: { topicId: string; page: Promise<MessagesPage>; at: number; arrived?: MessagesPage } | undefined;

/** An early page older than this is not used: the session asks afresh. */
const EARLY_PAGE_MS = 5_000;

export function readNewestPageEarly(read: (topicId: string) => Promise<MessagesPage>, topicId: string | undefined): void {
  if (topicId === undefined) return;
  const page = read(topicId);
  // Unhandled until taken; the session asks again if it failed.
  const early: NonNullable<typeof earlyPage> = { topicId, page, at: performance.now() };
  page.then(
    (arrived) => {
      early.arrived = arrived;
    },
    () => {},
  );
  earlyPage = early;
}

/** The early page of `topicId`, if there is a recent one; only the first caller gets it. */
export function takeEarlyPage(topicId: string): Promise<MessagesPage> | undefined {
  const early = earlyPage;
  earlyPage = undefined;
  return early?.topicId === topicId && performance.now() - early.at < EARLY_PAGE_MS ? early.page : undefined;
}

/**
 * The early page of `topicId` if it has arrived already (and is recent), taken as by
 * `takeEarlyPage`: a session made after it arrived starts with it, so that the
 * conversation's first frame shows its messages rather than an empty list. `undefined`
 * (nothing taken) otherwise.
 */
export function takeArrivedEarlyPage(topicId: string): MessagesPage | undefined {
  const early = earlyPage;
  if (early?.arrived === undefined || early.topicId !== topicId || performance.now() - early.at >= EARLY_PAGE_MS) return undefined;
  earlyPage = undefined;
  return early.arrived;
}
