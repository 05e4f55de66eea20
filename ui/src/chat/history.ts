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
