import type { ApiError } from '../protocol.gen';

/** Headings for a provider's failure, by `ApiError.code`. */
const PROVIDER_TITLES: Record<string, string> = {
  rate_limit: 'The provider is rate-limiting requests',
  auth: 'The provider did not accept the API key',
  overloaded: 'The provider is overloaded',
  context_too_long: 'The conversation is too long for this model',
  content_filtered: "The provider's content filter stopped the reply",
  network: 'The connection to the provider failed',
  server: 'The provider had a server error',
  bad_response: 'The provider sent an answer Colloquy could not read',
  invalid_request: 'The provider refused the request',
  timeout: 'The provider took too long to answer',
};

/** Headings for an agent session's failure (Claude Code), by `ApiError.code`. */
const AGENT_TITLES: Record<string, string> = {
  agent_not_installed: 'Claude Code is not installed',
  resume_failed: 'Claude Code could not resume its session',
  agent: 'Claude Code stopped with an error',
};

/** Whether an error is an agent session's (the agent program, not a model provider). */
export function isAgentError(error: ApiError): boolean {
  return error.code !== undefined && Object.hasOwn(AGENT_TITLES, error.code);
}

/** A one-line heading for an error, in the user's terms. */
export function errorTitle(error: ApiError): string {
  if (error.code !== undefined && isAgentError(error)) return AGENT_TITLES[error.code] as string;
  switch (error.kind) {
    case 'provider':
      return (error.code !== undefined ? PROVIDER_TITLES[error.code] : undefined) ?? 'The model provider returned an error';
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
  switch (error.code) {
    case 'agent_not_installed':
      return 'Install it as the message says (or set COLLOQUY_CLAUDE_PATH to where it is), then send your message again.';
    case 'resume_failed':
      return 'Start a fresh Claude Code session: the conversation shown here is kept, but the agent will not remember it.';
    case 'agent':
      return 'Send your message again; if it keeps failing, check the session’s folder, provider and model.';
    default:
      break;
  }
  switch (error.kind) {
    case 'provider':
      switch (error.code) {
        case 'context_too_long':
          return 'Start a new topic, or retry with a model that takes longer conversations.';
        case 'content_filtered':
          return 'Rephrase your message, or retry with another model.';
        case 'auth':
          return "Check the provider's API key in Settings, then retry.";
        default:
          return error.retryable
            ? 'This may be temporary: retry in a moment.'
            : "Check the provider's API key, base URL and model in Settings, then retry.";
      }
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
