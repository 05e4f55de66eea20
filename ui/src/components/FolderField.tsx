import { invoke } from '@tauri-apps/api/core';
import { useState } from 'react';
import { isTauri } from '../backend/ipc';

interface FolderFieldProps {
  /** The folder shown (absolute path), or '' for none. */
  value: string;
  /** A folder was chosen (desktop) or typed and confirmed (browser). */
  onChoose: (path: string) => void;
  onClear?: () => void;
  busy?: boolean;
  /** Shown next to the field, e.g. the backend's reason for refusing the folder. */
  error?: string | undefined;
  /** Prefix of the test ids: `<prefix>-input`, `-pick`, `-save`, `-clear`, `-error`. */
  testId: string;
  /** Confirming the typed path (browser); a form that saves everything at once hides it. */
  confirmLabel?: string | undefined;
  dialogTitle: string;
}

/**
 * A folder on this computer. The desktop app opens the system's folder picker; in a
 * browser (against `colloquy serve`, maybe on another machine) the path is typed.
 */
export function FolderField({ value, onChoose, onClear, busy, error, testId, confirmLabel, dialogTitle }: FolderFieldProps) {
  const desktop = isTauri();
  const [typed, setTyped] = useState(value);
  const [shown, setShown] = useState(value);
  if (value !== shown) {
    // The saved value changed (saved, cleared, or changed elsewhere): show it.
    setShown(value);
    setTyped(value);
  }

  const pick = async () => {
    const chosen = await invoke<string | null>('plugin:dialog|open', { options: { directory: true, title: dialogTitle } });
    if (typeof chosen === 'string' && chosen !== '') onChoose(chosen);
  };

  return (
    <div className="folder-field">
      <div className="field-row">
        {desktop ? (
          <>
            <input data-testid={`${testId}-input`} value={value} readOnly placeholder="No folder chosen" aria-label="Folder" />
            <button type="button" className="button" data-testid={`${testId}-pick`} disabled={busy} onClick={() => void pick()}>
              Choose folder…
            </button>
          </>
        ) : (
          <>
            <input
              data-testid={`${testId}-input`}
              value={typed}
              onChange={(event) => {
                setTyped(event.target.value);
                if (!confirmLabel) onChoose(event.target.value);
              }}
              onKeyDown={(event) => {
                if (event.key === 'Enter' && confirmLabel) {
                  event.preventDefault();
                  onChoose(typed.trim());
                }
              }}
              placeholder="/home/you/projects/example"
              aria-label="Folder path"
              spellCheck={false}
              autoComplete="off"
            />
            {confirmLabel && (
              <button
                type="button"
                className="button"
                data-testid={`${testId}-save`}
                disabled={busy || typed.trim() === '' || typed.trim() === value}
                onClick={() => onChoose(typed.trim())}
              >
                {confirmLabel}
              </button>
            )}
          </>
        )}
        {onClear && value !== '' && (
          <button type="button" className="button ghost" data-testid={`${testId}-clear`} disabled={busy} onClick={onClear}>
            Clear
          </button>
        )}
      </div>
      {error && (
        <div className="field-error" data-testid={`${testId}-error`} role="alert">
          {error}
        </div>
      )}
    </div>
  );
}
