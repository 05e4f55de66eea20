import { createContext, useContext, useEffect, useLayoutEffect, useRef } from 'react';
import { currentPlatform, isApplePlatform, matchShortcuts, type Focus, type ShortcutId } from './shortcuts';

/**
 * Acts on a shortcut; returns whether it did. `false` (nothing to do here now, e.g. Esc
 * with no reply running) lets the key go on to the next shortcut on it, or to the page.
 */
export type ShortcutHandler = (event: KeyboardEvent) => boolean;

/**
 * Who acts on each shortcut: components register while mounted (the open conversation
 * stops its reply); the newest registration is asked first.
 */
export class ShortcutRegistry {
  private readonly handlers = new Map<ShortcutId, ShortcutHandler[]>();

  register(id: ShortcutId, handler: ShortcutHandler): () => void {
    const list = this.handlers.get(id) ?? [];
    list.push(handler);
    this.handlers.set(id, list);
    return () => {
      const at = list.indexOf(handler);
      if (at >= 0) list.splice(at, 1);
    };
  }

  /** Asks the handlers of `id`, newest first, until one acts. */
  dispatch(id: ShortcutId, event: KeyboardEvent): boolean {
    const list = this.handlers.get(id) ?? [];
    for (let i = list.length - 1; i >= 0; i -= 1) {
      if (list[i]?.(event)) return true;
    }
    return false;
  }
}

/** This machine shows ⌘ ⇧ ⌥ for its keys. */
export const APPLE = isApplePlatform(currentPlatform());

export const ShortcutRegistryContext = createContext<ShortcutRegistry | undefined>(undefined);

/** Where the focus is, for the table's `where` (the message box's text area has `data-composer`). */
export function focusOf(target: EventTarget | null): Focus {
  if (!(target instanceof HTMLElement)) return 'page';
  if (target instanceof HTMLTextAreaElement && target.hasAttribute('data-composer')) return target.value === '' ? 'empty-composer' : 'composer';
  if (target.isContentEditable || target.closest('input, textarea, select')) return 'field';
  return 'page';
}

/**
 * Nothing has the keyboard: the focus is on the page or a button, not in a field, a
 * dialog or a menu. A view opening may then take it (the message box of a topic).
 */
export function focusIsFree(): boolean {
  const active = document.activeElement;
  if (!(active instanceof HTMLElement) || active === document.body) return true;
  return focusOf(active) === 'page' && active.closest('[role="dialog"], [role="alertdialog"], [role="menu"]') === null;
}

const modalOpen = () => document.querySelector('[aria-modal="true"]') !== null;

/**
 * The window's one key handler. Shortcuts with Ctrl/Cmd are taken in the capture phase,
 * before anything in the page (and the web view's own find) sees them. The others (Esc,
 * ↑, Alt+↑/↓, `/`) are taken last, in the bubble phase, and only if nothing in the page
 * took the key first (`defaultPrevented`: a menu or an editor closing on Esc).
 */
export function useKeyboardShortcuts(registry: ShortcutRegistry): void {
  useEffect(() => {
    const listener = (capture: boolean) => (event: KeyboardEvent) => {
      if (event.defaultPrevented) return;
      const matches = matchShortcuts(event, { focus: focusOf(event.target), modalOpen: modalOpen() });
      for (const { shortcut, binding } of matches) {
        if ((binding.mod ?? false) !== capture) continue;
        if (registry.dispatch(shortcut.id, event)) {
          event.preventDefault();
          event.stopPropagation();
          return;
        }
      }
    };
    const onCapture = listener(true);
    const onBubble = listener(false);
    window.addEventListener('keydown', onCapture, true);
    window.addEventListener('keydown', onBubble);
    return () => {
      window.removeEventListener('keydown', onCapture, true);
      window.removeEventListener('keydown', onBubble);
    };
  }, [registry]);
}

/**
 * Registers handlers for shortcuts while the component is mounted. The handlers may be
 * new functions each render: the latest ones are called.
 */
export function useShortcutHandlers(registry: ShortcutRegistry | undefined, handlers: Partial<Record<ShortcutId, ShortcutHandler>>): void {
  const latest = useRef(handlers);
  useLayoutEffect(() => {
    latest.current = handlers;
  });
  const ids = (Object.keys(handlers) as ShortcutId[]).sort().join(' ');
  useEffect(() => {
    if (!registry || ids === '') return;
    const unregister = (ids.split(' ') as ShortcutId[]).map((id) => registry.register(id, (event) => latest.current[id]?.(event) ?? false));
    return () => unregister.forEach((off) => off());
  }, [registry, ids]);
}

/** `useShortcutHandlers` with the registry of the workspace around the component. */
export function useShortcuts(handlers: Partial<Record<ShortcutId, ShortcutHandler>>): void {
  useShortcutHandlers(useContext(ShortcutRegistryContext), handlers);
}
