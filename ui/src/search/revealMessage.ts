/** How long a message opened from search stays highlighted. */
const HIGHLIGHT_MS = 6000;
/** How long to wait for the message to be shown (the topic loading its messages). */
const WAIT_MS = 8000;

/** Told to the message list when a message should be brought into the DOM. */
export const REVEAL_EVENT = 'colloquy:reveal-message';

let pending: { messageId: string; until: number } | undefined;

/**
 * The message the conversation should scroll to, if one was asked for recently. The
 * message list is virtualized: a message far from the window is not in the DOM until the
 * list scrolls to it (loading older pages if need be), which it does on this request.
 */
export function pendingReveal(): string | undefined {
  if (pending && performance.now() > pending.until) pending = undefined;
  return pending?.messageId;
}

/** The list has brought the message into view (or it is gone): nothing is pending. */
export function revealDone(messageId: string): void {
  if (pending?.messageId === messageId) pending = undefined;
}

/**
 * Scrolls the open conversation to a message once it is shown and highlights it for a
 * while (`data-search-hit` on its element). Returns a function that gives up.
 */
export function revealMessage(messageId: string): () => void {
  pending = { messageId, until: performance.now() + WAIT_MS };
  window.dispatchEvent(new CustomEvent(REVEAL_EVENT, { detail: messageId }));
  let stopped = false;
  let clearTimer: number | undefined;
  const selector = `.main [data-message-id="${CSS.escape(messageId)}"]`;
  const started = performance.now();
  let highlightedSince: number | undefined;
  const look = () => {
    if (stopped) return;
    const element = document.querySelector<HTMLElement>(selector);
    if (highlightedSince === undefined) {
      if (!element) {
        if (performance.now() - started < WAIT_MS) window.setTimeout(look, 50);
        return;
      }
      document.querySelectorAll('[data-search-hit]').forEach((other) => other.removeAttribute('data-search-hit'));
      element.scrollIntoView({ block: 'center' });
      highlightedSince = performance.now();
    }
    // The list is virtualized: its row may be rendered again (a new element), which
    // must stay highlighted for the whole while.
    if (performance.now() - highlightedSince >= HIGHLIGHT_MS) {
      element?.removeAttribute('data-search-hit');
      return;
    }
    if (element && element.getAttribute('data-search-hit') !== 'true') element.setAttribute('data-search-hit', 'true');
    clearTimer = window.setTimeout(look, 100);
  };
  look();
  return () => {
    stopped = true;
    revealDone(messageId);
    window.clearTimeout(clearTimer);
    document.querySelector(selector)?.removeAttribute('data-search-hit');
  };
}
