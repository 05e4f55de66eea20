import type { McpSecretName, McpServer, McpServerInput, McpState, McpStatus, McpTransport, McpTransportInput } from '../protocol.gen';
import type { FieldErrors } from './fieldErrors';

export const DEFAULT_TIMEOUT_SECS = 60;
export const MAX_TIMEOUT_SECS = 3600;

/** One `KEY = value` row of the environment or headers editor. */
export interface KeyValueRow {
  /** Keeps a row's inputs in place while rows above it are removed. */
  id: number;
  key: string;
  /** What the user typed; never a stored value (those stay in the backend). */
  value: string;
  /**
   * The row of a saved variable or header: its name is fixed, and an empty value keeps
   * the stored one (`set` false: the backend has lost it, a value must be typed).
   */
  stored?: { set: boolean };
}

/** An MCP server as its form edits it: both transports' fields, kept while the kind switches. */
export interface McpDraft {
  name: string;
  kind: McpTransport['kind'];
  command: string;
  /** One argument per line, as typed. */
  args: string;
  env: KeyValueRow[];
  cwd: string;
  url: string;
  headers: KeyValueRow[];
  enabled: boolean;
  trustReadOnly: boolean;
  samplingAllowed: boolean;
  /** Text, as typed. */
  timeoutSecs: string;
}

let rowCounter = 0;

export function keyValueRow(key = '', value = ''): KeyValueRow {
  rowCounter += 1;
  return { id: rowCounter, key, value };
}

/** The row of a saved variable or header: its name, no value. */
export function storedRow(secret: McpSecretName): KeyValueRow {
  return { ...keyValueRow(secret.name), stored: { set: secret.set } };
}

function rowsFrom(secrets: readonly McpSecretName[] | undefined): KeyValueRow[] {
  return (secrets ?? []).map(storedRow);
}

export function draftFromServer(server?: McpServer): McpDraft {
  const transport = server?.transport;
  return {
    name: server?.name ?? '',
    kind: transport?.kind ?? 'stdio',
    command: transport?.kind === 'stdio' ? transport.command : '',
    args: transport?.kind === 'stdio' ? transport.args.join('\n') : '',
    env: transport?.kind === 'stdio' ? rowsFrom(transport.env) : [],
    cwd: transport?.kind === 'stdio' ? (transport.cwd ?? '') : '',
    url: transport?.kind === 'http' ? transport.url : '',
    headers: transport?.kind === 'http' ? rowsFrom(transport.headers) : [],
    enabled: server?.enabled ?? true,
    trustReadOnly: server?.trustReadOnly ?? false,
    samplingAllowed: server?.samplingAllowed ?? false,
    timeoutSecs: String(server?.timeoutSecs ?? DEFAULT_TIMEOUT_SECS),
  };
}

/** The arguments typed one per line: blank lines dropped, each line trimmed. */
export function argsFromText(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/**
 * Rows as the map the backend takes: a saved row left empty is `null` (keep the stored
 * value), any other row sends what was typed; a row left completely empty is ignored.
 * Returns the problem instead when a row has a value but no name, a name twice (header
 * names ignore case), a bad name, or is a saved row whose value is lost and not retyped.
 */
export function recordFromRows(
  rows: readonly KeyValueRow[],
  what: 'variable' | 'header',
): { record: Record<string, string | null> } | { error: string } {
  const record: Record<string, string | null> = {};
  const seen = new Set<string>();
  for (const row of rows) {
    const key = row.key.trim();
    if (key === '' && row.value === '') continue;
    if (key === '') return { error: `A ${what} has a value but no name.` };
    if (what === 'variable' && key.includes('=')) return { error: `\`${key}\` is not a valid variable name (no “=”).` };
    if (what === 'header' && /[\s:]/.test(key)) return { error: `\`${key}\` is not a valid header name.` };
    const same = what === 'header' ? key.toLowerCase() : key;
    if (seen.has(same)) return { error: `\`${key}\` is set twice.` };
    seen.add(same);
    if (row.stored && row.value === '') {
      if (!row.stored.set) return { error: `No value is stored for \`${key}\` any more: type it again.` };
      record[key] = null;
    } else {
      record[key] = row.value;
    }
  }
  return { record };
}

/** What to save, or what keeps it from being saved (by the backend's field names). */
export function mcpInputFromDraft(draft: McpDraft): { input: McpServerInput } | { errors: FieldErrors } {
  const errors: Record<string, string> = {};
  const name = draft.name.trim();
  if (!name) errors.name = 'Give the server a name; its tools are called <name>__<tool>.';
  const timeout = draft.timeoutSecs.trim();
  const seconds = Number(timeout);
  if (!/^\d+$/.test(timeout) || seconds < 1 || seconds > MAX_TIMEOUT_SECS) {
    errors.timeoutSecs = `A whole number of seconds from 1 to ${MAX_TIMEOUT_SECS}.`;
  }

  let transport: McpTransportInput | undefined;
  if (draft.kind === 'stdio') {
    const command = draft.command.trim();
    if (!command) errors['transport.command'] = 'Name the program that starts the server, e.g. npx or a full path.';
    const env = recordFromRows(draft.env, 'variable');
    if ('error' in env) errors['transport.env'] = env.error;
    else if (command) {
      transport = { kind: 'stdio', command, args: argsFromText(draft.args), env: env.record };
      const cwd = draft.cwd.trim();
      if (cwd) transport.cwd = cwd;
    }
  } else {
    const url = draft.url.trim();
    if (!url) errors['transport.url'] = 'The server’s address, e.g. https://example.com/mcp.';
    else if (!/^https?:\/\//i.test(url)) errors['transport.url'] = 'The address must start with http:// or https://.';
    const headers = recordFromRows(draft.headers, 'header');
    if ('error' in headers) errors['transport.headers'] = headers.error;
    else if (!errors['transport.url']) transport = { kind: 'http', url, headers: headers.record };
  }

  if (Object.keys(errors).length > 0 || !transport) return { errors };
  return {
    input: { name, transport, enabled: draft.enabled, trustReadOnly: draft.trustReadOnly, samplingAllowed: draft.samplingAllowed, timeoutSecs: seconds },
  };
}

/** A saved server's transport as an edit that keeps every stored value. */
export function transportInputFromServer(transport: McpTransport): McpTransportInput {
  const keep = (secrets: readonly McpSecretName[]) => Object.fromEntries(secrets.map((secret) => [secret.name, null]));
  if (transport.kind === 'http') return { kind: 'http', url: transport.url, headers: keep(transport.headers) };
  const input: McpTransportInput = { kind: 'stdio', command: transport.command, args: transport.args, env: keep(transport.env) };
  if (transport.cwd !== undefined) input.cwd = transport.cwd;
  return input;
}

/** The fields the form shows errors under, for `fieldErrorsFrom`. */
export function mcpFields(kind: McpTransport['kind']): readonly string[] {
  const transport =
    kind === 'stdio'
      ? ['transport.command', 'transport.args', 'transport.env', 'transport.cwd']
      : ['transport.url', 'transport.headers'];
  return ['name', ...transport, 'timeoutSecs'];
}

export const STATE_LABEL: Record<McpState, string> = {
  disabled: 'Off',
  connecting: 'Connecting…',
  ready: 'Ready',
  error: 'Error',
};

/**
 * The state badge's words. A ready server can still have something to say: its last
 * listing failed (its earlier tools are still offered), or some tools were left out.
 */
export function stateLabel(status: McpStatus): string {
  if (status.state === 'ready' && status.message) return 'Ready · last listing failed';
  if (status.state === 'ready' && status.problems.length > 0) {
    return `Ready · ${status.problems.length === 1 ? '1 tool' : `${status.problems.length} tools`} left out`;
  }
  return STATE_LABEL[status.state];
}

/** Whether a ready server has a problem worth a warning. */
export function readyWithProblems(status: McpStatus): boolean {
  return status.state === 'ready' && (status.message !== undefined || status.problems.length > 0);
}

/** A one-line description of how the server is started or reached. */
export function transportSummary(transport: McpTransport): string {
  if (transport.kind === 'http') return transport.url;
  return [transport.command, ...transport.args.map(quoteArg)].join(' ');
}

function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** What the server's tools count says, in words. */
export function toolCountText(server: McpServer): string {
  const count = server.status.toolCount;
  if (server.status.state === 'disabled') return count > 0 ? `${count} tools (not offered while off)` : 'no tools while off';
  if (server.status.state === 'connecting' && count === 0) return 'listing tools…';
  return count === 1 ? '1 tool' : `${count} tools`;
}

/**
 * The prefix a new server's tools will get, as a preview while the name is typed: the
 * name in lowercase letters, digits and `_` (the backend's rule; a clash gets `_2`). It
 * is fixed when the server is added: a saved server keeps its `namespace` when renamed.
 */
export function toolPrefix(name: string): string {
  const slug = name
    .trim()
    .replace(/[^a-zA-Z0-9]/g, '_')
    .toLowerCase()
    .replace(/_{2,}/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 24)
    .replace(/_+$/, '');
  return slug === '' ? 'mcp' : slug;
}
