/**
 * The desktop's "show Colloquy" shortcut, as the user presses it in Settings → General.
 * The backend (`show_shortcut_set`) takes an accelerator: modifiers and one key joined by
 * `+`, the key named by its `KeyboardEvent.code` (`KeyK`, `Digit1`, `Space`, `F5`).
 */

/** The parts of a key press this reads. */
export interface PressedKeys {
  code: string;
  ctrlKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
  metaKey: boolean;
}

/** What a key press in the recorder means. */
export type Recorded =
  | { kind: 'combination'; accelerator: string }
  /** Only modifiers so far, or a key the system cannot register. */
  | { kind: 'incomplete'; hint: string }
  | { kind: 'clear' };

const MODIFIER_CODES = /^(Control|Shift|Alt|Meta|OS)(Left|Right)?$/;
const REGISTRABLE = /^(Key[A-Z]|Digit[0-9]|F([1-9]|1[0-9]|2[0-4])|Numpad([0-9]|Add|Decimal|Divide|Enter|Equal|Multiply|Subtract)|Arrow(Up|Down|Left|Right)|Space|Enter|Tab|Backspace|Delete|Insert|Home|End|PageUp|PageDown|Backquote|Backslash|BracketLeft|BracketRight|Comma|Equal|Minus|Period|Quote|Semicolon|Slash|Pause|PrintScreen|ScrollLock)$/;

/**
 * The accelerator a key press makes. Ctrl (⌘ on a Mac) becomes `CommandOrControl`, so
 * the stored choice means the same on every system. A combination needs Ctrl, Alt or
 * Super besides Shift: a bare key would be taken from typing in every app.
 */
export function recordKeys(press: PressedKeys, apple: boolean): Recorded {
  const bare = !press.ctrlKey && !press.altKey && !press.metaKey && !press.shiftKey;
  if (bare && (press.code === 'Backspace' || press.code === 'Delete')) return { kind: 'clear' };
  if (MODIFIER_CODES.test(press.code)) return { kind: 'incomplete', hint: 'Now press a key with them.' };
  if (!REGISTRABLE.test(press.code)) return { kind: 'incomplete', hint: 'That key cannot be a global shortcut; try a letter, digit or F-key.' };
  const primary = apple ? press.metaKey : press.ctrlKey;
  const secondary = apple ? press.ctrlKey : press.metaKey;
  if (!primary && !secondary && !press.altKey) {
    return { kind: 'incomplete', hint: `Hold ${apple ? '⌘' : 'Ctrl'}, Alt or ${apple ? 'Control' : 'Super'} as well.` };
  }
  const parts: string[] = [];
  if (primary) parts.push('CommandOrControl');
  if (secondary) parts.push(apple ? 'Control' : 'Super');
  if (press.altKey) parts.push('Alt');
  if (press.shiftKey) parts.push('Shift');
  parts.push(press.code);
  return { kind: 'combination', accelerator: parts.join('+') };
}

/** How an accelerator reads on this system: `Ctrl+Shift+Space`, `⌘⇧K`-style names spelled out. */
export function acceleratorLabel(accelerator: string, apple: boolean): string {
  return accelerator
    .split('+')
    .map((part) => {
      switch (part.toLowerCase()) {
        case 'commandorcontrol':
        case 'cmdorctrl':
          return apple ? '⌘' : 'Ctrl';
        case 'control':
        case 'ctrl':
          return apple ? '⌃' : 'Ctrl';
        case 'super':
        case 'command':
        case 'cmd':
          return apple ? '⌘' : 'Super';
        case 'alt':
        case 'option':
          return apple ? '⌥' : 'Alt';
        case 'shift':
          return apple ? '⇧' : 'Shift';
        default:
          return part.replace(/^Key(?=[A-Z]$)/, '').replace(/^Digit(?=[0-9]$)/, '').replace(/^Arrow/, '');
      }
    })
    .join(apple ? '' : '+');
}
