import { useEffect, useRef, type KeyboardEvent } from 'react';
import { APPLE } from '../keyboard/keyHandler';
import { keyLabels, SHORTCUT_GROUPS, SHORTCUTS, type KeyBinding } from '../keyboard/shortcuts';
import '../keyboard/keyboard.css';

interface ShortcutsSheetProps {
  onClose: () => void;
}

/**
 * Every keyboard shortcut, grouped, with this platform's keys (⌘ on macOS, Ctrl
 * elsewhere), read from the one table the key handlers use. Esc, a click outside or
 * Close closes it, and the focus goes back where it was.
 */
export function ShortcutsSheet({ onClose }: ShortcutsSheetProps) {
  const closeButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : undefined;
    closeButton.current?.focus();
    return () => before?.focus();
  }, []);

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    onClose();
  };

  return (
    <div className="shortcuts-backdrop" onMouseDown={(event) => event.target === event.currentTarget && onClose()}>
      <div className="shortcuts-sheet" data-testid="shortcuts-sheet" role="dialog" aria-modal="true" aria-labelledby="shortcuts-title" onKeyDown={onKeyDown}>
        <div className="shortcuts-head">
          <h2 id="shortcuts-title">Keyboard shortcuts</h2>
          <button ref={closeButton} type="button" className="button ghost small" data-testid="shortcuts-close" onClick={onClose}>
            Close
          </button>
        </div>
        <div className="shortcuts-groups">
          {SHORTCUT_GROUPS.map((group) => (
            <section key={group} className="shortcuts-group" data-testid="shortcuts-group" data-group={group}>
              <h3>{group}</h3>
              <dl>
                {SHORTCUTS.filter((shortcut) => shortcut.group === group).map((shortcut) => (
                  <div key={shortcut.id} className="shortcut-row" data-testid="shortcut-row" data-shortcut={shortcut.id}>
                    <dt>{shortcut.label}</dt>
                    <dd>
                      {shortcut.bindings.map((binding, index) => (
                        <span key={index}>
                          {index > 0 && <span className="muted small"> or </span>}
                          <Keys binding={binding} />
                        </span>
                      ))}
                    </dd>
                  </div>
                ))}
              </dl>
            </section>
          ))}
        </div>
      </div>
    </div>
  );
}

/** One binding as keycaps: `Ctrl` `Shift` `O`. */
function Keys({ binding }: { binding: KeyBinding }) {
  return (
    <span className="keys" data-testid="shortcut-keys">
      {keyLabels(binding, APPLE).map((label) => (
        <kbd key={label}>{label}</kbd>
      ))}
    </span>
  );
}
