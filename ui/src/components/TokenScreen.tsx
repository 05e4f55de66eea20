interface TokenScreenProps {
  /** The server rejected a token we had (as opposed to never having one). */
  rejected: boolean;
}

/** Shown in a browser that has no (valid) access token for `colloquy serve`. */
export function TokenScreen({ rejected }: TokenScreenProps) {
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
          Open the URL printed by <code>colloquy serve</code> — it looks like{' '}
          <code>http://127.0.0.1:8787/#token=…</code>. The token is then remembered in this browser.
        </p>
      </div>
    </main>
  );
}
