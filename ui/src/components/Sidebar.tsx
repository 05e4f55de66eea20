import { useEffect, useRef, type ReactNode } from 'react';
import { APPLE, useShortcuts } from '../keyboard/keyHandler';
import { keyLabels, shortcut, shortcutText, type ShortcutId } from '../keyboard/shortcuts';
import { KeyboardIcon, PlusIcon, SearchIcon, SettingsIcon, SidebarIcon } from './Icons';
import type { SidebarLayout } from './useSidebarLayout';

interface SidebarProps {
  layout: SidebarLayout;
  settingsOpen: boolean;
  creating: boolean;
  onNewTopic: () => void;
  onSearch: () => void;
  onSettings: () => void;
  onShortcuts: () => void;
  /** The lists: approvals, topics or agent sessions. */
  children: ReactNode;
}

/** A button's tooltip: what it does and its shortcut. */
const hint = (label: string, id: ShortcutId) => `${label} (${shortcutText(id, APPLE)})`;

/**
 * The sidebar: beside the conversation on a wide window (collapsible to a rail of
 * buttons), over it on a narrow one, where it closes on Esc, a click outside or a
 * topic picked (the workspace closes it then).
 */
export function Sidebar({ layout, settingsOpen, creating, onNewTopic, onSearch, onSettings, onShortcuts, children }: SidebarProps) {
  const { narrow, shown, toggle, closeOverlay } = layout;
  const hideButton = useRef<HTMLButtonElement>(null);
  const showButton = useRef<HTMLButtonElement>(null);

  useShortcuts({
    'toggle-sidebar': () => {
      toggle();
      return true;
    },
    'close-sidebar': () => {
      if (!narrow || !shown) return false;
      closeOverlay();
      return true;
    },
  });

  useEffect(() => {
    // The overlay takes the focus when it opens; a button that hid itself hands the
    // focus to the one that shows it again (the keyboard stays somewhere).
    if (shown && narrow) hideButton.current?.focus();
    else if (!shown && (document.activeElement === document.body || document.activeElement === null)) showButton.current?.focus();
  }, [shown, narrow]);

  const rail = (
    <nav className="sidebar-rail" aria-label="Sidebar (hidden)" data-testid="sidebar-rail">
      <button
        ref={showButton}
        type="button"
        className="icon-button rail-button"
        data-testid="sidebar-show"
        aria-label="Show the sidebar"
        aria-expanded={shown}
        title={hint('Show the sidebar', 'toggle-sidebar')}
        onClick={toggle}
      >
        <SidebarIcon />
      </button>
      <button type="button" className="icon-button rail-button" data-testid="rail-new-topic" aria-label="New topic" title={hint('New topic', 'new-topic')} disabled={creating} onClick={onNewTopic}>
        <PlusIcon />
      </button>
      <button type="button" className="icon-button rail-button" data-testid="rail-search" aria-label="Search all messages" title={hint('Search all messages', 'search')} onClick={onSearch}>
        <SearchIcon />
      </button>
      <span className="rail-spacer" />
      <button type="button" className="icon-button rail-button" aria-label="Keyboard shortcuts" title={hint('Keyboard shortcuts', 'shortcuts')} onClick={onShortcuts}>
        <KeyboardIcon />
      </button>
      <button
        type="button"
        className={`icon-button rail-button${settingsOpen ? ' active' : ''}`}
        data-testid="rail-settings"
        aria-label="Settings"
        title={hint('Settings', 'settings')}
        onClick={onSettings}
      >
        <SettingsIcon />
      </button>
    </nav>
  );
  if (!shown) return rail;

  const searchKeys = shortcut('search').bindings[0];
  const sidebar = (
    <aside className={`sidebar${narrow ? ' overlay' : ''}`} data-testid="sidebar" aria-label="Sidebar">
      <div className="sidebar-head">
        <div className="brand">Colloquy</div>
        <button
          ref={hideButton}
          type="button"
          className="icon-button"
          data-testid="sidebar-hide"
          aria-label="Hide the sidebar"
          aria-expanded={true}
          title={hint('Hide the sidebar', 'toggle-sidebar')}
          onClick={toggle}
        >
          <SidebarIcon />
        </button>
      </div>
      <button type="button" className="button ghost search-button" data-testid="search-button" title={hint('Search all messages', 'search')} onClick={onSearch}>
        Search… {searchKeys && <kbd className="small muted">{keyLabels(searchKeys, APPLE).join(APPLE ? '' : ' ')}</kbd>}
      </button>
      {children}
      <div className="sidebar-foot">
        <button
          type="button"
          className={`button ghost settings-button${settingsOpen ? ' active' : ''}`}
          data-testid="settings-button"
          title={hint('Settings', 'settings')}
          onClick={onSettings}
        >
          ⚙ Settings
        </button>
        <button type="button" className="icon-button" data-testid="shortcuts-button" aria-label="Keyboard shortcuts" title={hint('Keyboard shortcuts', 'shortcuts')} onClick={onShortcuts}>
          <KeyboardIcon />
        </button>
      </div>
    </aside>
  );
  if (!narrow) return sidebar;
  return (
    <>
      {rail}
      <div className="sidebar-backdrop" data-testid="sidebar-backdrop" onMouseDown={closeOverlay} />
      {sidebar}
    </>
  );
}
