const STORAGE_KEY = 'colloquy.token';

/**
 * The server's bearer token. `colloquy serve` prints a URL ending in `#token=...`; the
 * first visit moves the token into localStorage and removes it from the address bar so
 * it does not end up in bookmarks or screenshots.
 */
export function takeTokenFromLocation(): string | undefined {
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  const fromHash = params.get('token');
  if (fromHash) {
    try {
      window.localStorage.setItem(STORAGE_KEY, fromHash);
    } catch {
      // Storage may be disabled; the token still works for this page load.
    }
    params.delete('token');
    const rest = params.toString();
    const url = window.location.pathname + window.location.search + (rest ? `#${rest}` : '');
    window.history.replaceState(window.history.state, '', url);
    return fromHash;
  }
  try {
    return window.localStorage.getItem(STORAGE_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Forgets a token the server rejected, so the next visit asks for a fresh URL. */
export function forgetToken(): void {
  try {
    window.localStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing stored, nothing to forget.
  }
}
