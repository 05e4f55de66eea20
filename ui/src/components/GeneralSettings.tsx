import { useEffect, useState, type FormEvent } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { AppSettings, Theme, UpdateAppSettings } from '../protocol.gen';
import { fieldErrorsFrom, NO_ERRORS, type FieldErrors } from '../settings/fieldErrors';
import { draftFromSettings, effectiveIdleTimeout, formatDuration, settingsInputFromDraft, type GeneralDraft } from '../settings/generalForm';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';
import { applyTheme } from '../theme';
import { isTauri } from '../backend/ipc';
import { ShowShortcutSetting } from './ShowShortcutSetting';

const FIELDS = ['idleTimeoutSeconds', 'theme'] as const;

/** Settings that apply to the whole app: its colours, the desktop's show-Colloquy shortcut, and how long a silent reply may wait before it is stopped. */
export function GeneralSettings() {
  const backend = useBackend();
  const [settings, setSettings] = useState<AppSettings>();
  const [draft, setDraft] = useState<GeneralDraft>({ idleTimeoutSeconds: '' });
  const [errors, setErrors] = useState<FieldErrors>(NO_ERRORS);
  const [loadError, setLoadError] = useState<ApiFailure>();
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState(false);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let current = true;
    backend
      .call('settings_get')
      .then((loaded) => {
        if (!current) return;
        setSettings(loaded);
        setDraft(draftFromSettings(loaded));
        setLoadError(undefined);
      })
      .catch((failure: unknown) => {
        if (current) setLoadError(toApiFailure(failure, 'Could not load the settings'));
      });
    return () => {
      current = false;
    };
  }, [backend, attempt]);

  /** `announce`: say what the saved timeout means (the theme shows itself). */
  const save = async (input: UpdateAppSettings, announce: boolean) => {
    setSaving(true);
    setSaved(false);
    setErrors(NO_ERRORS);
    try {
      const updated = await backend.call('settings_update', input);
      setSettings(updated);
      setDraft(draftFromSettings(updated));
      applyTheme(updated.theme);
      setSaved(announce);
    } catch (failure) {
      setErrors(fieldErrorsFrom(toApiFailure(failure, 'Could not save the settings'), FIELDS));
    } finally {
      setSaving(false);
    }
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!settings) return;
    const result = settingsInputFromDraft(draft, settings);
    if ('errors' in result) {
      setErrors(result.errors);
      setSaved(false);
      return;
    }
    // `settings_update` takes every setting: the theme stays as it is.
    void save({ ...result.input, theme: settings.theme }, true);
  };

  const chooseTheme = (theme: Theme | undefined) => {
    if (!settings) return;
    applyTheme(theme);
    void save({ idleTimeoutSeconds: settings.idleTimeoutSeconds, theme }, false);
  };

  return (
    <>
      <h3>General</h3>
      {loadError && <ErrorNotice error={loadError} onRetry={() => setAttempt((n) => n + 1)} />}
      {!settings && !loadError && <p className="muted">Loading settings…</p>}
      {settings && (
        <form className="provider-form" data-testid="general-settings" onSubmit={submit} noValidate>
          {errors[''] && (
            <div className="form-error" data-testid="form-error" role="alert">
              {errors['']}
            </div>
          )}
          <label className="field">
            <span className="field-label">Theme</span>
            <select
              data-testid="theme-select"
              value={settings.theme ?? 'system'}
              disabled={saving}
              onChange={(event) => chooseTheme(event.target.value === 'system' ? undefined : (event.target.value as Theme))}
            >
              <option value="system">Same as the system</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
            <span className="field-help">Applies at once, in every window.</span>
          </label>
          {isTauri() && <ShowShortcutSetting settings={settings} onSaved={setSettings} />}
          <label className="field">
            <span className="field-label">Stop a reply that has gone silent after (seconds)</span>
            <input
              data-testid="idle-timeout"
              inputMode="numeric"
              value={draft.idleTimeoutSeconds}
              placeholder={`${settings.defaultIdleTimeoutSeconds} (default)`}
              onChange={(event) => {
                setDraft({ idleTimeoutSeconds: event.target.value });
                setSaved(false);
              }}
              autoComplete="off"
            />
            <span className="field-help">{idleTimeoutHelp(settings)}</span>
            {errors.idleTimeoutSeconds && (
              <div className="field-error" data-testid="form-error" data-field="idleTimeoutSeconds" role="alert">
                {errors.idleTimeoutSeconds}
              </div>
            )}
          </label>
          <div className="form-actions">
            {saved && (
              <span className="muted small" data-testid="settings-saved" role="status">
                Saved: replies now wait {formatDuration(effectiveIdleTimeout(settings))}.
              </span>
            )}
            <button type="submit" className="button primary" data-testid="general-save" disabled={saving}>
              {saving ? 'Saving…' : 'Save'}
            </button>
          </div>
        </form>
      )}
    </>
  );
}

function idleTimeoutHelp(settings: AppSettings): string {
  const { defaultIdleTimeoutSeconds: fallback, minIdleTimeoutSeconds: min, maxIdleTimeoutSeconds: max } = settings;
  return (
    'When the model sends nothing for this long, the reply is stopped and marked Stalled; its text is kept and Continue ' +
    'picks it up. Models that think for a long time before answering need more. ' +
    `Leave empty for the default (${formatDuration(fallback)}); ${min}–${max} seconds. Applies to replies started after saving.`
  );
}
