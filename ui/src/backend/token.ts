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

/**
 * The token in what the user pasted: the token itself, or the whole URL `colloquy serve`
 * printed (`…/#token=…`). Undefined when there is nothing to use.
 */
export function tokenFromPaste(pasted: string): string | undefined {
  const text = pasted.trim();
  const hash = text.indexOf('#');
  if (hash !== -1) {
    const fromUrl = new URLSearchParams(text.slice(hash + 1)).get('token')?.trim();
    if (fromUrl) return fromUrl;
  }
  if (/^token=/.test(text)) return new URLSearchParams(text).get('token')?.trim() || undefined;
  // A URL without a token is not one.
  if (!text || /\s/.test(text) || /^https?:\/\//i.test(text)) return undefined;
  return text;
}

/** Keeps a token the server accepted, as the printed link does; false when the browser stores nothing. */
export function rememberToken(token: string): boolean {
  try {
    window.localStorage.setItem(STORAGE_KEY, token);
    return window.localStorage.getItem(STORAGE_KEY) === token;
  } catch {
    return false;
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
