import { describe, expect, it } from 'vitest';
import { acceleratorLabel, recordKeys, type PressedKeys } from '../src/settings/showShortcut';

const press = (code: string, mods: Partial<PressedKeys> = {}): PressedKeys => ({
  code,
  ctrlKey: false,
  altKey: false,
  shiftKey: false,
  metaKey: false,
  ...mods,
});

describe('the show-Colloquy shortcut recorder', () => {
  it('makes an accelerator the backend parses from a key press', () => {
    expect(recordKeys(press('Space', { ctrlKey: true, shiftKey: true }), false)).toEqual({
      kind: 'combination',
      accelerator: 'CommandOrControl+Shift+Space',
    });
    expect(recordKeys(press('KeyK', { altKey: true, metaKey: true }), false)).toEqual({
      kind: 'combination',
      accelerator: 'Super+Alt+KeyK',
    });
    // On a Mac ⌘ is the primary modifier.
    expect(recordKeys(press('KeyK', { metaKey: true }), true)).toEqual({ kind: 'combination', accelerator: 'CommandOrControl+KeyK' });
  });

  it('waits for a key after modifiers, and refuses a key that would be taken from typing', () => {
    expect(recordKeys(press('ControlLeft', { ctrlKey: true }), false).kind).toBe('incomplete');
    expect(recordKeys(press('KeyA', { shiftKey: true }), false)).toMatchObject({ kind: 'incomplete', hint: expect.stringContaining('Ctrl') });
    expect(recordKeys(press('KeyA'), false).kind).toBe('incomplete');
    expect(recordKeys(press('IntlRo', { ctrlKey: true }), false).kind).toBe('incomplete');
    expect(recordKeys(press('Backspace'), false)).toEqual({ kind: 'clear' });
  });

  it('reads as the keys are labelled', () => {
    expect(acceleratorLabel('CommandOrControl+Shift+Space', false)).toBe('Ctrl+Shift+Space');
    expect(acceleratorLabel('Super+Alt+KeyK', false)).toBe('Super+Alt+K');
    expect(acceleratorLabel('CommandOrControl+Shift+Digit1', true)).toBe('⌘⇧1');
    expect(acceleratorLabel('Alt+ArrowUp', false)).toBe('Alt+Up');
  });
});
