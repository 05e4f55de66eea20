import type { Theme } from './protocol.gen';

/**
 * The app's colours: the user's choice (Settings → General), else the system's. The
 * stylesheet keys its dark colours off `<html data-theme="dark">`; this module is the
 * one place that sets it. The last choice is kept in localStorage too, so a window paints
 * in the right colours before the backend has answered, and every window of the app
 * follows a change made in one of them (the `storage` event).
 */

const STORAGE_KEY = 'colloquy.theme';
const systemDark = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : undefined;
let chosen: Theme | undefined;
const listeners = new Set<() => void>();

function parse(value: string | null): Theme | undefined {
  return value === 'light' || value === 'dark' ? value : undefined;
}

/** The colours on screen now. */
export function resolvedTheme(): Theme {
  return chosen ?? (systemDark?.matches ? 'dark' : 'light');
}

function paint() {
  const theme = resolvedTheme();
  document.documentElement.dataset.theme = theme;
  document.documentElement.style.colorScheme = theme;
  listeners.forEach((listener) => listener());
}

/** Applies the user's choice (`undefined`: follow the system) and remembers it for the next start. */
export function applyTheme(theme: Theme | undefined) {
  chosen = theme;
  try {
    if (theme) localStorage.setItem(STORAGE_KEY, theme);
    else localStorage.removeItem(STORAGE_KEY);
  } catch {
    // Storage can be off (private mode): the choice still applies to this window.
  }
  paint();
}

/** Calls `listener` whenever the colours change (e.g. to redraw a diagram); returns the unsubscribe. */
export function onThemeChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Paints the last choice at start-up and follows the system and other windows from then on. */
export function startTheme() {
  try {
    chosen = parse(localStorage.getItem(STORAGE_KEY));
  } catch {
    chosen = undefined;
  }
  systemDark?.addEventListener('change', () => {
    if (!chosen) paint();
  });
  window.addEventListener('storage', (event) => {
    if (event.key !== STORAGE_KEY) return;
    chosen = parse(event.newValue);
    paint();
  });
  paint();
}
