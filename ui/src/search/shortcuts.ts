/** What a key press asks of search: the search box, or find in the open conversation. */
export type SearchShortcut = 'search' | 'find';

interface KeyPress {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
}

/**
 * Ctrl/Cmd+K and Ctrl/Cmd+Shift+F open the search box; Ctrl/Cmd+F finds in the open
 * conversation (ours, also in the desktop window, where the web view would otherwise
 * take it).
 */
export function searchShortcut(event: KeyPress): SearchShortcut | undefined {
  if (!(event.ctrlKey || event.metaKey) || event.altKey) return undefined;
  const key = event.key.toLowerCase();
  if (key === 'k' && !event.shiftKey) return 'search';
  if (key === 'f') return event.shiftKey ? 'search' : 'find';
  return undefined;
}
