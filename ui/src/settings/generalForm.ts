import type { AppSettings, UpdateAppSettings } from '../protocol.gen';
import type { FieldErrors } from './fieldErrors';

/** The General settings form as typed: the idle timeout in seconds, `''` for the default. */
export interface GeneralDraft {
  idleTimeoutSeconds: string;
}

export function draftFromSettings(settings: AppSettings): GeneralDraft {
  return { idleTimeoutSeconds: settings.idleTimeoutSeconds === undefined ? '' : String(settings.idleTimeoutSeconds) };
}

/**
 * What `settings_update` takes for this draft, or the fields it cannot take (by the
 * backend's field names). Empty means the default; the bounds are the backend's.
 */
export function settingsInputFromDraft(draft: GeneralDraft, settings: AppSettings): { input: UpdateAppSettings } | { errors: FieldErrors } {
  const text = draft.idleTimeoutSeconds.trim();
  if (text === '') return { input: {} };
  const { minIdleTimeoutSeconds: min, maxIdleTimeoutSeconds: max } = settings;
  if (!/^\d+$/.test(text)) {
    return { errors: { idleTimeoutSeconds: 'Enter a whole number of seconds, or leave it empty for the default.' } };
  }
  const seconds = Number(text);
  if (seconds < min || seconds > max) {
    return { errors: { idleTimeoutSeconds: `Choose between ${min} and ${max} seconds (${formatDuration(min)} to ${formatDuration(max)}).` } };
  }
  return { input: { idleTimeoutSeconds: seconds } };
}

/** The idle timeout a reply starting now gets, in seconds. */
export function effectiveIdleTimeout(settings: AppSettings): number {
  return settings.idleTimeoutSeconds ?? settings.defaultIdleTimeoutSeconds;
}

/** `45 s`, `2 min`, `1 min 30 s`, `1 h`. */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
}
