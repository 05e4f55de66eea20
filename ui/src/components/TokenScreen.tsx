import { useState, type FormEvent } from 'react';
import { toApiFailure } from '../backend/backend';
import { HttpBackend } from '../backend/http';
import { rememberToken, tokenFromPaste } from '../backend/token';

interface TokenScreenProps {
  /** The server rejected a token we had (as opposed to never having one). */
  rejected: boolean;
}

/**
 * Shown in a browser that has no (valid) access token for `colloquy serve`: open the
 * printed link, or paste the token (or the whole link) here. A pasted token is tried
 * against the server first, and kept in this browser as the link's token is.
 */
export function TokenScreen({ rejected }: TokenScreenProps) {
  const [pasted, setPasted] = useState('');
  const [checking, setChecking] = useState(false);
  const [error, setError] = useState<string>();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const token = tokenFromPaste(pasted);
    if (!token) {
      setError('Paste the token, or the whole link that ends in #token=…');
      return;
    }
    setError(undefined);
    setChecking(true);
    try {
      await new HttpBackend({ token }).call('app_info');
    } catch (failure) {
      setChecking(false);
      const why = toApiFailure(failure, 'Could not reach the Colloquy server');
      setError(
        why.kind === 'unauthorized'
          ? 'The server did not accept this token. Copy it again from the line colloquy serve printed when it started; a restarted server has a new token unless it was given one with --token.'
          : `The token could not be checked: ${why.message}`,
      );
      return;
    }
    if (!rememberToken(token)) {
      // This browser keeps nothing: the token goes in the address for this visit, as the link's does.
      window.location.hash = new URLSearchParams({ token }).toString();
    }
    window.location.reload();
  };

  return (
    <main className="center-screen" data-testid="token-screen">
      <div className="card narrow">
        <h1>{rejected ? 'Your access token was not accepted' : 'Open Colloquy from its link'}</h1>
        <p>
          {rejected
            ? 'The server did not accept the token this browser had stored. It may have been restarted with a new token.'
            : 'This page needs the access token that the Colloquy server prints when it starts.'}
        </p>
        <p>
          Open the URL printed by <code>colloquy serve</code> — it looks like <code>http://127.0.0.1:8787/#token=…</code> — or paste the
          token (or that whole URL) here. It is then remembered in this browser.
        </p>
        <form className="token-form" onSubmit={(event) => void submit(event)} noValidate>
          <label className="field">
            <span className="field-label">Access token</span>
            <input
              type="password"
              data-testid="token-input"
              value={pasted}
              onChange={(event) => setPasted(event.target.value)}
              placeholder="Paste the token or the link"
              autoComplete="off"
              spellCheck={false}
              autoFocus
              aria-invalid={error !== undefined}
            />
          </label>
          {error && (
            <div className="field-error" data-testid="token-error" role="alert">
              {error}
            </div>
          )}
          <div className="form-actions">
            <button type="submit" className="button primary" data-testid="token-submit" disabled={checking || pasted.trim() === ''}>
              {checking ? 'Checking…' : 'Use token'}
            </button>
          </div>
        </form>
      </div>
    </main>
  );
}
