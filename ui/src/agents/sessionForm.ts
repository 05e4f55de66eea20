import type { AgentSession, AgentSessionInput, Provider, UpdateAgentSession } from '../protocol.gen';
import type { FieldErrors } from '../settings/fieldErrors';

/** How much the agent may do without asking, as Claude Code names its permission modes. */
export type PermissionMode = 'default' | 'acceptEdits' | 'plan' | 'dontAsk';

export const PERMISSION_MODES: readonly { id: PermissionMode; label: string; help: string }[] = [
  {
    id: 'default',
    label: 'Ask first',
    help: 'Asks you (an approval card here) before it edits files or runs commands.',
  },
  {
    id: 'acceptEdits',
    label: 'Accept edits',
    help: 'Edits files in the folder without asking; still asks before running commands.',
  },
  {
    id: 'plan',
    label: 'Plan only',
    help: 'Reads and plans but changes nothing.',
  },
  {
    id: 'dontAsk',
    label: 'Never ask',
    help: 'Never asks: whatever would need your approval is refused.',
  },
];

export function permissionModeLabel(mode: string): string {
  return PERMISSION_MODES.find((candidate) => candidate.id === mode)?.label ?? mode;
}

/** The `providerId` choice that means "no provider: the user's own Claude Code login". */
export const OWN_LOGIN = '';

/** Model names Claude Code understands on the user's own login (its aliases). */
export const OWN_LOGIN_MODELS: readonly string[] = ['sonnet', 'opus', 'haiku'];

/** Providers an agent can talk through: those speaking the Anthropic Messages format. */
export function agentProviders(providers: readonly Provider[]): Provider[] {
  return providers.filter((provider) => provider.format === 'anthropic');
}

/** Models to suggest for the chosen provider (or the own login), without duplicates. */
export function modelSuggestions(providers: readonly Provider[], providerId: string): string[] {
  if (providerId === OWN_LOGIN) return [...OWN_LOGIN_MODELS];
  const provider = providers.find((candidate) => candidate.id === providerId);
  if (!provider) return [];
  return [...new Set([provider.defaultModel, ...provider.models].filter((model) => model !== ''))];
}

/** The `agent` choice that means Claude Code (any other is an ACP agent's id). */
export const CLAUDE_CODE = 'claude_code';

/** A new agent session as its form edits it. */
export interface SessionDraft {
  /** {@link CLAUDE_CODE} or an ACP agent's id (from settings' coding agents). */
  agent: string;
  title: string;
  workspace: string;
  /** {@link OWN_LOGIN} or an Anthropic-format provider's id. */
  providerId: string;
  model: string;
  permissionMode: PermissionMode;
}

/** A fresh form: the first Anthropic-format provider and its default model, else the own login. */
export function newSessionDraft(providers: readonly Provider[]): SessionDraft {
  const provider = agentProviders(providers)[0];
  return {
    agent: CLAUDE_CODE,
    title: '',
    workspace: '',
    providerId: provider?.id ?? OWN_LOGIN,
    model: provider?.defaultModel ?? '',
    permissionMode: 'default',
  };
}

/** An absolute path on Unix (`/…`) or Windows (`C:\…`, `\\server\…`). */
export function isAbsolutePath(path: string): boolean {
  return path.startsWith('/') || /^[a-zA-Z]:[\\/]/.test(path) || path.startsWith('\\\\');
}

/** What to create, or what keeps it from being created (by the backend's field names). */
export function sessionInputFromDraft(draft: SessionDraft, providers: readonly Provider[]): { input: AgentSessionInput } | { errors: FieldErrors } {
  const errors: Record<string, string> = {};
  const workspace = draft.workspace.trim();
  const acp = draft.agent !== CLAUDE_CODE;
  if (!workspace) {
    // An ACP agent may have a folder of its own (the backend says so when it has none).
    if (!acp) errors.workspace = 'Choose the folder the agent works in.';
  } else if (!isAbsolutePath(workspace)) errors.workspace = 'Give the full path of the folder (starting with /).';
  else if (/^[\\/]+$/.test(workspace)) errors.workspace = 'Not the whole disk: choose a project folder.';
  if (!acp && draft.providerId !== OWN_LOGIN && !agentProviders(providers).some((provider) => provider.id === draft.providerId)) {
    errors.providerId = 'That provider is gone or does not speak the Anthropic format: pick another.';
  }
  if (!PERMISSION_MODES.some((mode) => mode.id === draft.permissionMode)) errors.permissionMode = 'Pick one of the modes.';
  if (Object.keys(errors).length > 0) return { errors };
  const title = draft.title.trim();
  if (acp) {
    const input: AgentSessionInput = { agent: 'acp', acpAgentId: draft.agent, workspace, model: '', permissionMode: draft.permissionMode };
    if (title) input.title = title;
    return { input };
  }
  const input: AgentSessionInput = { agent: CLAUDE_CODE, workspace, model: draft.model.trim(), permissionMode: draft.permissionMode };
  if (title) input.title = title;
  if (draft.providerId !== OWN_LOGIN) input.providerId = draft.providerId;
  return { input };
}

export const SESSION_FIELDS = ['title', 'agent', 'acpAgentId', 'workspace', 'providerId', 'model', 'permissionMode'] as const;

/** The changes a session's settings make, or undefined when nothing changed. */
export function sessionUpdate(
  session: AgentSession,
  change: { title?: string; model?: string; permissionMode?: string },
): UpdateAgentSession | undefined {
  const update: UpdateAgentSession = { id: session.id };
  const title = change.title?.trim();
  if (title !== undefined && title !== '' && title !== session.title) update.title = title;
  const model = change.model?.trim();
  if (model !== undefined && model !== session.model) update.model = model;
  if (change.permissionMode !== undefined && change.permissionMode !== session.permissionMode) update.permissionMode = change.permissionMode;
  return Object.keys(update).length > 1 ? update : undefined;
}
