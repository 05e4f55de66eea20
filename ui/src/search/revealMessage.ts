/** How long a message opened from search stays highlighted. */
const HIGHLIGHT_MS = 6000;
/** How long to wait for the message to be shown (the topic loading its messages). */
const WAIT_MS = 8000;

/**
 * Scrolls the open conversation to a message once it is shown and highlights it for a
 * while (`data-search-hit` on its element). Returns a function that gives up.
 */
export function revealMessage(messageId: string): () => void {
  let stopped = false;
  let clearTimer: number | undefined;
  const selector = `.main [data-message-id="${CSS.escape(messageId)}"]`;
  const started = performance.now();
  const look = () => {
    if (stopped) return;
    const element = document.querySelector<HTMLElement>(selector);
    if (!element) {
      if (performance.now() - started < WAIT_MS) window.setTimeout(look, 50);
      return;
    }
    document.querySelectorAll('[data-search-hit]').forEach((other) => other.removeAttribute('data-search-hit'));
    element.setAttribute('data-search-hit', 'true');
    element.scrollIntoView({ block: 'center' });
    clearTimer = window.setTimeout(() => element.removeAttribute('data-search-hit'), HIGHLIGHT_MS);
  };
  look();
  return () => {
    stopped = true;
    window.clearTimeout(clearTimer);
  };
}
