import { useState, type KeyboardEvent } from 'react';
import { toApiFailure } from '../backend/backend';
import { APPLE } from '../keyboard/keyHandler';
import type { AppSettings } from '../protocol.gen';
import { acceleratorLabel, recordKeys } from '../settings/showShortcut';
import { useBackend } from './BackendContext';

/**
 * Settings → General, desktop only: a key combination that brings Colloquy forward from
 * any app. Off until the user records one; saving registers it with the system first, so
 * a combination another app holds is refused here, in words.
 */
export function ShowShortcutSetting({ settings, onSaved }: { settings: AppSettings; onSaved: (settings: AppSettings) => void }) {
  const backend = useBackend();
  const [recorded, setRecorded] = useState<string | undefined>(settings.showShortcut);
  const [hint, setHint] = useState<string>();
  const [error, setError] = useState<string>();
  const [saving, setSaving] = useState(false);
  const current = settings.showShortcut;

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'Tab' && !event.ctrlKey && !event.altKey && !event.metaKey) return;
    event.preventDefault();
    event.stopPropagation();
    const result = recordKeys(event, APPLE);
    setError(undefined);
    if (result.kind === 'combination') {
      setRecorded(result.accelerator);
      setHint(undefined);
    } else if (result.kind === 'clear') {
      setRecorded(undefined);
      setHint(undefined);
    } else {
      setHint(result.hint);
    }
  };

  const save = async (shortcut: string | undefined) => {
    setSaving(true);
    setError(undefined);
    try {
      const updated = await backend.call('show_shortcut_set', { shortcut });
      setRecorded(updated.showShortcut);
      onSaved(updated);
    } catch (failure) {
      setError(toApiFailure(failure, 'Could not set the shortcut').message);
    } finally {
      setSaving(false);
    }
  };

  return (
    <div className="field" data-testid="show-shortcut">
      <label className="field-label" htmlFor="show-shortcut-keys">
        Show Colloquy from any app
      </label>
      <div className="inline-fields">
        <input
          id="show-shortcut-keys"
          data-testid="show-shortcut-keys"
          readOnly
          value={recorded ? acceleratorLabel(recorded, APPLE) : ''}
          placeholder="Click here, then press the keys"
          onKeyDown={onKeyDown}
          aria-describedby="show-shortcut-help"
        />
        <button
          type="button"
          className="button"
          data-testid="show-shortcut-save"
          disabled={saving || !recorded || recorded === current}
          onClick={() => void save(recorded)}
        >
          {saving ? 'Saving…' : 'Use it'}
        </button>
        {current && (
          <button type="button" className="button" data-testid="show-shortcut-off" disabled={saving} onClick={() => void save(undefined)}>
            Turn off
          </button>
        )}
      </div>
      <span className="field-help" id="show-shortcut-help" data-testid="show-shortcut-status" role="status">
        {hint ??
          (current
            ? `On: ${acceleratorLabel(current, APPLE)} brings the Colloquy window forward, even when another app has focus.`
            : 'Off. Press a combination with Ctrl, Alt or Super here, then "Use it". Backspace clears it.')}
      </span>
      {error && (
        <div className="field-error" data-testid="show-shortcut-error" role="alert">
          {error}
        </div>
      )}
    </div>
  );
}
