/**
 * Every keyboard shortcut of the app, declared once: the window's one key handler
 * (`useKeyboardShortcuts`), the message box and the message editor match key presses
 * against this table, and the shortcuts sheet (Ctrl/Cmd+/) lists it. Pure: no DOM.
 */

/** Where the focus is when a key is pressed. */
export type Focus =
  /** Nowhere one types (the page, a button, a list). */
  | 'page'
  /** The message box, with text in it. */
  | 'composer'
  /** The message box, empty. */
  | 'empty-composer'
  /** Any other place one types: an input, a text area, a select, an editor. */
  | 'field';

/** Where a key binding works. */
export type Where =
  | 'anywhere'
  /** Not while typing in another field (the message box is fine). */
  | 'outside-fields'
  /** Only where a bare key types nothing (`/`). */
  | 'page'
  | 'composer'
  | 'empty-composer';

export interface KeyBinding {
  /** `KeyboardEvent.key`, letters in lower case: `o`, `/`, `,`, `Escape`, `ArrowUp`, `Enter`. */
  key: string;
  /** Ctrl, or Cmd on macOS (either is taken on every platform). */
  mod?: boolean;
  /** Shift pressed; `either` for a key some layouts type with Shift (`/` is Shift+7 on a German keyboard). */
  shift?: boolean | 'either';
  alt?: boolean;
  where: Where;
}

export type ShortcutGroup = 'General' | 'Topics' | 'Conversation' | 'Message box' | 'Editing a sent message';

export type ShortcutId =
  | 'shortcuts'
  | 'search'
  | 'settings'
  | 'toggle-sidebar'
  | 'new-topic'
  | 'previous-topic'
  | 'next-topic'
  | 'close-sidebar'
  | 'find'
  | 'focus-composer'
  | 'stop-reply'
  | 'edit-last'
  | 'send'
  | 'newline'
  | 'edit-send'
  | 'edit-cancel';

export interface Shortcut {
  id: ShortcutId;
  group: ShortcutGroup;
  /** What it does, as the sheet says it. */
  label: string;
  /** Alternatives; the first is the one shown in button tooltips. */
  bindings: readonly KeyBinding[];
  /**
   * Who acts on it: the window's key handler, or the element that owns the key (the
   * message box's Enter, the editor's Esc) — listed here so the sheet cannot miss them.
   */
  handledBy: 'window' | 'composer' | 'editor';
  /** Works while a modal dialog is open (it replaces that dialog). */
  overDialogs?: boolean;
}

/**
 * The table. Order matters where two shortcuts share a key: the first whose handler
 * acts takes it (Esc closes the sidebar overlay before it stops a reply).
 *
 * Keys are chosen to stay clear of what a browser keeps for itself (the UI also runs in
 * a browser tab): Ctrl+N/T/W and Ctrl+Tab cannot be taken, and Cmd+Shift+[ ] switch tabs
 * on macOS. New topic is Ctrl/Cmd+Shift+O and the sidebar Ctrl/Cmd+Shift+S as in
 * ChatGPT; previous/next topic is Alt+↑/↓ as in Slack and Discord; Shift+Esc goes to the
 * message box as in ChatGPT.
 */
export const SHORTCUTS: readonly Shortcut[] = [
  {
    id: 'shortcuts',
    group: 'General',
    label: 'Show keyboard shortcuts',
    bindings: [{ key: '/', mod: true, shift: 'either', where: 'anywhere' }],
    handledBy: 'window',
    overDialogs: true,
  },
  {
    id: 'search',
    group: 'General',
    label: 'Search all messages',
    bindings: [
      { key: 'k', mod: true, where: 'anywhere' },
      { key: 'f', mod: true, shift: true, where: 'anywhere' },
    ],
    handledBy: 'window',
    overDialogs: true,
  },
  { id: 'settings', group: 'General', label: 'Open settings', bindings: [{ key: ',', mod: true, where: 'anywhere' }], handledBy: 'window' },
  {
    id: 'toggle-sidebar',
    group: 'General',
    label: 'Show or hide the sidebar',
    bindings: [{ key: 's', mod: true, shift: true, where: 'anywhere' }],
    handledBy: 'window',
  },
  { id: 'new-topic', group: 'Topics', label: 'New topic', bindings: [{ key: 'o', mod: true, shift: true, where: 'anywhere' }], handledBy: 'window' },
  {
    id: 'previous-topic',
    group: 'Topics',
    label: 'Previous topic in the sidebar',
    bindings: [{ key: 'ArrowUp', alt: true, where: 'outside-fields' }],
    handledBy: 'window',
  },
  {
    id: 'next-topic',
    group: 'Topics',
    label: 'Next topic in the sidebar',
    bindings: [{ key: 'ArrowDown', alt: true, where: 'outside-fields' }],
    handledBy: 'window',
  },
  {
    id: 'close-sidebar',
    group: 'Topics',
    label: 'Close the sidebar over the conversation (narrow window)',
    bindings: [{ key: 'Escape', where: 'outside-fields' }],
    handledBy: 'window',
  },
  { id: 'find', group: 'Conversation', label: 'Find in this conversation', bindings: [{ key: 'f', mod: true, where: 'anywhere' }], handledBy: 'window' },
  {
    id: 'focus-composer',
    group: 'Conversation',
    label: 'Go to the message box',
    bindings: [
      { key: 'Escape', shift: true, where: 'outside-fields' },
      { key: '/', shift: 'either', where: 'page' },
    ],
    handledBy: 'window',
  },
  {
    id: 'stop-reply',
    group: 'Conversation',
    label: 'Stop the reply being written',
    bindings: [{ key: 'Escape', where: 'outside-fields' }],
    handledBy: 'window',
  },
  {
    id: 'edit-last',
    group: 'Conversation',
    label: 'Edit your last message (from an empty message box)',
    bindings: [{ key: 'ArrowUp', where: 'empty-composer' }],
    handledBy: 'window',
  },
  {
    id: 'send',
    group: 'Message box',
    label: 'Send (while a reply is written: queue it to run next)',
    bindings: [
      { key: 'Enter', where: 'composer' },
      { key: 'Enter', mod: true, where: 'composer' },
    ],
    handledBy: 'composer',
  },
  { id: 'newline', group: 'Message box', label: 'New line', bindings: [{ key: 'Enter', shift: true, where: 'composer' }], handledBy: 'composer' },
  {
    id: 'edit-send',
    group: 'Editing a sent message',
    label: 'Send the new version',
    bindings: [{ key: 'Enter', mod: true, where: 'anywhere' }],
    handledBy: 'editor',
  },
  { id: 'edit-cancel', group: 'Editing a sent message', label: 'Cancel the edit', bindings: [{ key: 'Escape', where: 'anywhere' }], handledBy: 'editor' },
];

export const SHORTCUT_GROUPS: readonly ShortcutGroup[] = ['General', 'Topics', 'Conversation', 'Message box', 'Editing a sent message'];

/** What a matcher reads of a key press (a DOM `KeyboardEvent` has it all). */
export interface KeyPress {
  key: string;
  /** `KeyboardEvent.code`, for letters on layouts that do not type Latin ones. */
  code?: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
  /** An input method is composing: its keys are not shortcuts. */
  isComposing?: boolean;
}

/** The key as the table spells it: letters in lower case, Latin ones from `code` on other layouts. */
function keyOf(press: KeyPress): string {
  const key = press.key.length === 1 ? press.key.toLowerCase() : press.key;
  if (key.length === 1 && key > '\u007f') {
    const letter = /^Key([A-Z])$/.exec(press.code ?? '');
    if (letter?.[1]) return letter[1].toLowerCase();
  }
  return key;
}

function focusAllowed(where: Where, focus: Focus): boolean {
  switch (where) {
    case 'anywhere':
      return true;
    case 'outside-fields':
      return focus !== 'field';
    case 'page':
      return focus === 'page';
    case 'composer':
      return focus === 'composer' || focus === 'empty-composer';
    case 'empty-composer':
      return focus === 'empty-composer';
  }
}

/** Whether the key press is this binding's keys (where the focus is aside). */
export function bindingMatches(binding: KeyBinding, press: KeyPress): boolean {
  if (press.isComposing) return false;
  if (keyOf(press) !== binding.key) return false;
  if ((press.ctrlKey || press.metaKey) !== (binding.mod ?? false)) return false;
  if (press.altKey !== (binding.alt ?? false)) return false;
  return binding.shift === 'either' || press.shiftKey === (binding.shift ?? false);
}

export function shortcut(id: ShortcutId): Shortcut {
  const found = SHORTCUTS.find((candidate) => candidate.id === id);
  if (!found) throw new Error(`no shortcut ${id}`);
  return found;
}

/** Whether the key press is one of the shortcut's bindings, for the element that owns it (the composer, the editor). */
export function isShortcut(id: ShortcutId, press: KeyPress): boolean {
  return shortcut(id).bindings.some((binding) => bindingMatches(binding, press));
}

export interface Match {
  shortcut: Shortcut;
  binding: KeyBinding;
}

export interface KeyContext {
  focus: Focus;
  /** A modal dialog is open (search, the shortcuts sheet, an image): it keeps the keys. */
  modalOpen: boolean;
}

/**
 * The window-handled shortcuts this key press asks for here, in the table's order (the
 * first whose handler acts takes it).
 */
export function matchShortcuts(press: KeyPress, context: KeyContext): Match[] {
  const matches: Match[] = [];
  for (const candidate of SHORTCUTS) {
    if (candidate.handledBy !== 'window' || (context.modalOpen && !candidate.overDialogs)) continue;
    const binding = candidate.bindings.find((b) => focusAllowed(b.where, context.focus) && bindingMatches(b, press));
    if (binding) matches.push({ shortcut: candidate, binding });
  }
  return matches;
}

/** Apple platforms show ⌘ ⇧ ⌥ (and take Cmd as the modifier). */
export function isApplePlatform(platform: string): boolean {
  return /mac|iphone|ipad|ipod/i.test(platform);
}

/** This machine's platform name, as the browser tells it. */
export function currentPlatform(): string {
  const nav = globalThis.navigator as (Navigator & { userAgentData?: { platform?: string } }) | undefined;
  return nav?.platform || nav?.userAgentData?.platform || '';
}

const KEY_NAMES: Record<string, [apple: string, other: string]> = {
  Escape: ['Esc', 'Esc'],
  Enter: ['↩', 'Enter'],
  ArrowUp: ['↑', '↑'],
  ArrowDown: ['↓', '↓'],
};

/** The keys of a binding as printed on the keyboard, in order: `['Ctrl', 'Shift', 'O']` or `['⌘', '⇧', 'O']`. */
export function keyLabels(binding: KeyBinding, apple: boolean): string[] {
  const labels: string[] = [];
  // macOS orders modifiers ⌃⌥⇧⌘; others write Ctrl+Alt+Shift.
  if (apple) {
    if (binding.alt) labels.push('⌥');
    if (binding.shift === true) labels.push('⇧');
    if (binding.mod) labels.push('⌘');
  } else {
    if (binding.mod) labels.push('Ctrl');
    if (binding.alt) labels.push('Alt');
    if (binding.shift === true) labels.push('Shift');
  }
  const named = KEY_NAMES[binding.key];
  labels.push(named ? named[apple ? 0 : 1] : binding.key.toUpperCase());
  return labels;
}

/** A shortcut's first binding as text for a tooltip: `Ctrl+Shift+O`, `⌘⇧O`. */
export function shortcutText(id: ShortcutId, apple: boolean): string {
  const first = shortcut(id).bindings[0];
  if (!first) return '';
  return keyLabels(first, apple).join(apple ? '' : '+');
}
