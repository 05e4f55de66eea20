import { describe, expect, it } from 'vitest';
import { ShortcutRegistry } from '../src/keyboard/keyHandler';
import {
  isApplePlatform,
  isShortcut,
  keyLabels,
  matchShortcuts,
  shortcut,
  SHORTCUT_GROUPS,
  SHORTCUTS,
  shortcutText,
  type Focus,
  type KeyPress,
} from '../src/keyboard/shortcuts';

const press = (key: string, mods: Partial<Omit<KeyPress, 'key'>> = {}): KeyPress => ({
  key,
  ctrlKey: false,
  metaKey: false,
  shiftKey: false,
  altKey: false,
  ...mods,
});

/** The window shortcuts a key press asks for, in order. */
const asked = (key: KeyPress, focus: Focus = 'page', modalOpen = false) => matchShortcuts(key, { focus, modalOpen }).map((match) => match.shortcut.id);

describe('the shortcuts table', () => {
  it('names each shortcut once, in a listed group, with at least one binding', () => {
    const ids = SHORTCUTS.map((s) => s.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const s of SHORTCUTS) {
      expect(SHORTCUT_GROUPS).toContain(s.group);
      expect(s.bindings.length).toBeGreaterThan(0);
    }
    for (const group of SHORTCUT_GROUPS) expect(SHORTCUTS.some((s) => s.group === group)).toBe(true);
  });

  it('gives two window shortcuts the same keys only where they take turns (Esc: the overlay, then the reply)', () => {
    const seen = new Map<string, string[]>();
    for (const s of SHORTCUTS.filter((candidate) => candidate.handledBy === 'window')) {
      for (const b of s.bindings) {
        const keys = `${b.mod ? 'mod+' : ''}${b.alt ? 'alt+' : ''}${b.shift === true ? 'shift+' : ''}${b.key}`;
        seen.set(keys, [...(seen.get(keys) ?? []), s.id]);
      }
    }
    const shared = [...seen].filter(([, ids]) => ids.length > 1);
    expect(shared).toEqual([['Escape', ['close-sidebar', 'stop-reply']]]);
  });
});

describe('matching a key press', () => {
  it('Ctrl/Cmd+K and Ctrl/Cmd+Shift+F search, Ctrl/Cmd+F finds in the topic', () => {
    expect(asked(press('k', { ctrlKey: true }))).toEqual(['search']);
    expect(asked(press('k', { metaKey: true }))).toEqual(['search']);
    expect(asked(press('F', { ctrlKey: true, shiftKey: true }))).toEqual(['search']);
    expect(asked(press('f', { metaKey: true }))).toEqual(['find']);
    expect(asked(press('f'))).toEqual([]);
    expect(asked(press('k', { ctrlKey: true, altKey: true }))).toEqual([]);
    expect(asked(press('j', { ctrlKey: true }))).toEqual([]);
  });

  it('takes the rest of the table: sheet, settings, sidebar, new topic, previous and next topic', () => {
    expect(asked(press('/', { ctrlKey: true }))).toEqual(['shortcuts']);
    expect(asked(press(',', { metaKey: true }))).toEqual(['settings']);
    expect(asked(press('S', { ctrlKey: true, shiftKey: true }))).toEqual(['toggle-sidebar']);
    expect(asked(press('O', { ctrlKey: true, shiftKey: true }))).toEqual(['new-topic']);
    expect(asked(press('o', { ctrlKey: true }))).toEqual([]);
    expect(asked(press('ArrowUp', { altKey: true }))).toEqual(['previous-topic']);
    expect(asked(press('ArrowDown', { altKey: true }))).toEqual(['next-topic']);
  });

  it('with Ctrl/Cmd, works while typing anywhere; bare keys do not fire in fields', () => {
    for (const focus of ['page', 'composer', 'empty-composer', 'field'] as const) {
      expect(asked(press('k', { ctrlKey: true }), focus)).toEqual(['search']);
      expect(asked(press('/', { ctrlKey: true }), focus)).toEqual(['shortcuts']);
    }
    // A bare "/" types a slash anywhere one types.
    expect(asked(press('/'), 'page')).toEqual(['focus-composer']);
    expect(asked(press('/'), 'composer')).toEqual([]);
    expect(asked(press('/'), 'empty-composer')).toEqual([]);
    expect(asked(press('/'), 'field')).toEqual([]);
    // Esc in another field (a rename, a queued message) is that field's.
    expect(asked(press('Escape'), 'composer')).toEqual(['close-sidebar', 'stop-reply']);
    expect(asked(press('Escape'), 'field')).toEqual([]);
    expect(asked(press('Escape', { shiftKey: true }), 'composer')).toEqual(['focus-composer']);
    expect(asked(press('ArrowUp', { altKey: true }), 'composer')).toEqual(['previous-topic']);
    expect(asked(press('ArrowUp', { altKey: true }), 'field')).toEqual([]);
  });

  it('edits the last message with ↑ only from an empty message box', () => {
    expect(asked(press('ArrowUp'), 'empty-composer')).toEqual(['edit-last']);
    expect(asked(press('ArrowUp'), 'composer')).toEqual([]);
    expect(asked(press('ArrowUp'), 'page')).toEqual([]);
    expect(asked(press('ArrowUp', { shiftKey: true }), 'empty-composer')).toEqual([]);
  });

  it('leaves the keys to an open dialog, except the sheet and search, which replace it', () => {
    expect(asked(press('Escape'), 'page', true)).toEqual([]);
    expect(asked(press('O', { ctrlKey: true, shiftKey: true }), 'page', true)).toEqual([]);
    expect(asked(press('k', { ctrlKey: true }), 'field', true)).toEqual(['search']);
    expect(asked(press('/', { ctrlKey: true }), 'field', true)).toEqual(['shortcuts']);
  });

  it('ignores keys while an input method composes, and reads letters of other layouts from the key code', () => {
    expect(asked(press('k', { ctrlKey: true, isComposing: true }))).toEqual([]);
    expect(asked(press('Щ', { ctrlKey: true, shiftKey: true, code: 'KeyO' }))).toEqual(['new-topic']);
    expect(asked(press('л', { ctrlKey: true, code: 'KeyK' }))).toEqual(['search']);
    // "/" is Shift+7 on a German keyboard.
    expect(asked(press('/', { ctrlKey: true, shiftKey: true, code: 'Digit7' }))).toEqual(['shortcuts']);
  });

  it('knows the message box and editor keys, which their own elements act on', () => {
    expect(isShortcut('send', press('Enter'))).toBe(true);
    expect(isShortcut('send', press('Enter', { ctrlKey: true }))).toBe(true);
    expect(isShortcut('send', press('Enter', { shiftKey: true }))).toBe(false);
    expect(isShortcut('send', press('Enter', { isComposing: true }))).toBe(false);
    expect(isShortcut('newline', press('Enter', { shiftKey: true }))).toBe(true);
    expect(isShortcut('edit-send', press('Enter', { metaKey: true }))).toBe(true);
    expect(isShortcut('edit-send', press('Enter'))).toBe(false);
    expect(isShortcut('edit-cancel', press('Escape'))).toBe(true);
    // Not the window's: the element's own handler has them.
    expect(asked(press('Enter'), 'composer')).toEqual([]);
  });
});

describe('showing the keys', () => {
  it('writes ⌘ ⇧ ⌥ on Apple platforms and Ctrl Shift Alt elsewhere', () => {
    const newTopic = shortcut('new-topic').bindings[0]!;
    expect(keyLabels(newTopic, true)).toEqual(['⇧', '⌘', 'O']);
    expect(keyLabels(newTopic, false)).toEqual(['Ctrl', 'Shift', 'O']);
    expect(shortcutText('new-topic', true)).toBe('⇧⌘O');
    expect(shortcutText('new-topic', false)).toBe('Ctrl+Shift+O');
    expect(shortcutText('previous-topic', true)).toBe('⌥↑');
    expect(shortcutText('previous-topic', false)).toBe('Alt+↑');
    expect(shortcutText('stop-reply', false)).toBe('Esc');
    // "Either" Shift is not a key to press.
    expect(shortcutText('shortcuts', false)).toBe('Ctrl+/');
  });

  it('tells Apple platforms by their names', () => {
    expect(isApplePlatform('MacIntel')).toBe(true);
    expect(isApplePlatform('macOS')).toBe(true);
    expect(isApplePlatform('iPad')).toBe(true);
    expect(isApplePlatform('Linux x86_64')).toBe(false);
    expect(isApplePlatform('Win32')).toBe(false);
  });
});

describe('the shortcut registry', () => {
  const event = {} as KeyboardEvent;

  it('asks the newest handler first, falls through when one does not act, and forgets unregistered ones', () => {
    const registry = new ShortcutRegistry();
    const calls: string[] = [];
    registry.register('stop-reply', () => {
      calls.push('old');
      return true;
    });
    const off = registry.register('stop-reply', () => {
      calls.push('new');
      return false;
    });
    expect(registry.dispatch('stop-reply', event)).toBe(true);
    expect(calls).toEqual(['new', 'old']);
    off();
    calls.length = 0;
    expect(registry.dispatch('stop-reply', event)).toBe(true);
    expect(calls).toEqual(['old']);
    expect(registry.dispatch('find', event)).toBe(false);
  });
});
