import { useCallback, useEffect, useState, useSyncExternalStore } from 'react';

/** Below this width the sidebar opens over the conversation instead of beside it. */
export const NARROW_QUERY = '(max-width: 719px)';
/** The user's choice on a wide window, kept across reloads (a view preference of this browser, not app state). */
const COLLAPSED_KEY = 'colloquy.sidebar.collapsed';

export interface SidebarLayout {
  /** The window is narrow: the sidebar is an overlay, closed until asked for. */
  narrow: boolean;
  /** The sidebar is on screen (beside the conversation, or over it). */
  shown: boolean;
  toggle: () => void;
  /** Closes the overlay (a topic was picked, Esc, a click outside); a docked sidebar stays. */
  closeOverlay: () => void;
}

/**
 * Whether the sidebar is shown. On a wide window it is docked unless the user collapsed
 * it (remembered); on a narrow one it is an overlay that starts closed each time the
 * window becomes narrow.
 */
export function useSidebarLayout(): SidebarLayout {
  const narrow = useSyncExternalStore(subscribeNarrow, isNarrow);
  const [collapsed, setCollapsed] = useState(readCollapsed);
  const [overlay, setOverlay] = useState({ open: false, narrow });
  if (overlay.narrow !== narrow) {
    // Adjusted while rendering: a window that narrows again starts with the overlay closed.
    setOverlay({ open: false, narrow });
  }
  const open = overlay.open && overlay.narrow === narrow;

  const toggle = useCallback(() => {
    if (isNarrow()) {
      setOverlay((current) => ({ ...current, open: !current.open }));
    } else {
      setCollapsed((current) => !current);
    }
  }, []);
  const closeOverlay = useCallback(() => setOverlay((current) => (current.open ? { ...current, open: false } : current)), []);

  useEffect(() => writeCollapsed(collapsed), [collapsed]);

  return { narrow, shown: narrow ? open : !collapsed, toggle, closeOverlay };
}

const isNarrow = () => window.matchMedia(NARROW_QUERY).matches;

function subscribeNarrow(changed: () => void): () => void {
  const query = window.matchMedia(NARROW_QUERY);
  query.addEventListener('change', changed);
  return () => query.removeEventListener('change', changed);
}

function readCollapsed(): boolean {
  try {
    return window.localStorage.getItem(COLLAPSED_KEY) === 'true';
  } catch {
    return false;
  }
}

function writeCollapsed(collapsed: boolean): void {
  try {
    if (collapsed) window.localStorage.setItem(COLLAPSED_KEY, 'true');
    else window.localStorage.removeItem(COLLAPSED_KEY);
  } catch {
    // Without storage the sidebar comes back docked after a reload; nothing else changes.
  }
}
