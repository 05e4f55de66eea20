import type { ApiError } from '../protocol.gen';

/** A one-line heading for an error, in the user's terms. */
export function errorTitle(error: ApiError): string {
  switch (error.kind) {
    case 'provider':
      return 'The model provider returned an error';
    case 'unauthorized':
      return 'Not authorized';
    case 'not_found':
      return 'Not found';
    case 'conflict':
      return 'That cannot be done right now';
    case 'bad_request':
      return 'Something in the request is not valid';
    case 'internal':
      return 'Something went wrong';
  }
}

/** What the user can do about an error. */
export function errorHint(error: ApiError): string {
  switch (error.kind) {
    case 'provider':
      return error.retryable
        ? 'This may be temporary: retry in a moment.'
        : "Check the provider's API key, base URL and model in Settings, then retry.";
    case 'unauthorized':
      return 'Open the URL printed by `colloquy serve` again to sign in.';
    case 'not_found':
      return 'It may have been deleted in another window. Pick another item or reload.';
    case 'conflict':
      return 'Wait for the current reply to finish (or stop it), then try again.';
    case 'bad_request':
      return 'Correct the highlighted value and try again.';
    case 'internal':
      return error.retryable ? 'Try again; if it keeps happening, restart Colloquy.' : 'Restart Colloquy; if it keeps happening, check its log.';
  }
}
