import type { AcpAgent, AcpAgentInput, AcpVariableInput } from '../protocol.gen';
import type { FieldErrors } from './fieldErrors';
import { argsFromText, keyValueRow, recordFromRows, type KeyValueRow } from './mcpForm';

/** An ACP agent as its form edits it. */
export interface AcpDraft {
  name: string;
  command: string;
  /** One argument per line, as typed. */
  args: string;
  /** Variables shown in settings: `NAME=value`, one per line. */
  plain: string;
  /** Secret variables: typed blind, kept in the secret store. */
  secrets: KeyValueRow[];
  workspace: string;
}

export function draftFromAgent(agent?: AcpAgent | AcpAgentInput): AcpDraft {
  const variables = agent?.variables ?? [];
  return {
    name: agent?.name ?? '',
    command: agent?.command ?? '',
    args: (agent?.args ?? []).join('\n'),
    plain: variables
      .filter((v) => !v.secret)
      .map((v) => `${v.name}=${v.value ?? ''}`)
      .join('\n'),
    secrets: variables
      .filter((v) => v.secret)
      .map((v) => ('set' in v ? { ...keyValueRow(v.name), stored: { set: v.set } } : keyValueRow(v.name))),
    workspace: agent?.workspace ?? '',
  };
}

/** `NAME=value` lines as variables, or the first line that is not one. */
function plainVariables(text: string): { variables: AcpVariableInput[] } | { error: string } {
  const variables: AcpVariableInput[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') continue;
    const at = line.indexOf('=');
    if (at <= 0) return { error: `\`${line.trim()}\` is not NAME=value.` };
    variables.push({ name: line.slice(0, at).trim(), secret: false, value: line.slice(at + 1) });
  }
  return { variables };
}

/** What to save, or what keeps it from being saved (by the backend's field names). */
export function acpInputFromDraft(draft: AcpDraft): { input: AcpAgentInput } | { errors: FieldErrors } {
  const errors: Record<string, string> = {};
  const name = draft.name.trim();
  if (!name) errors.name = 'Give the agent a name.';
  const command = draft.command.trim();
  if (!command) errors.command = 'Name the program that starts the agent, e.g. npx, qwen or a full path.';
  const plain = plainVariables(draft.plain);
  const secrets = recordFromRows(draft.secrets, 'variable');
  if ('error' in plain) errors.variables = plain.error;
  else if ('error' in secrets) errors.variables = secrets.error;
  if (Object.keys(errors).length > 0 || 'error' in plain || 'error' in secrets) return { errors };
  const variables: AcpVariableInput[] = [
    ...plain.variables,
    ...Object.entries(secrets.record).map(([key, value]) => ({ name: key, secret: true, value })),
  ];
  const input: AcpAgentInput = { name, command, args: argsFromText(draft.args), variables };
  const workspace = draft.workspace.trim();
  if (workspace) input.workspace = workspace;
  return { input };
}

export const ACP_FIELDS = ['name', 'command', 'variables', 'workspace'] as const;

/** How the agent is started, in one line. */
export function commandLine(agent: { command: string; args: readonly string[] }): string {
  return [agent.command, ...agent.args].join(' ');
}
