import type { ApiError } from '../protocol.gen';
import { errorHint, errorTitle } from '../backend/describe';

interface ErrorNoticeProps {
  error: ApiError;
  /** What the user can do, when the caller knows better than the error kind alone. */
  hint?: string | undefined;
  /** Shown as a button when the failed action can simply be repeated. */
  onRetry?: () => void;
  onDismiss?: () => void;
}

/** A banner for an error outside a message: what happened and what to do. */
export function ErrorNotice({ error, hint, onRetry, onDismiss }: ErrorNoticeProps) {
  return (
    <div className="error-notice" role="alert">
      <div className="error-notice-text">
        <strong>{errorTitle(error)}.</strong> {error.message}
        <div className="error-notice-hint">{hint ?? errorHint(error)}</div>
      </div>
      <div className="error-notice-actions">
        {onRetry && (
          <button type="button" className="button" onClick={onRetry}>
            Try again
          </button>
        )}
        {onDismiss && (
          <button type="button" className="button ghost" onClick={onDismiss} aria-label="Dismiss">
            Dismiss
          </button>
        )}
      </div>
    </div>
  );
}
