import type { McpServer, McpServerInput, McpState, McpTransport } from '../protocol.gen';
import type { FieldErrors } from './fieldErrors';

export const DEFAULT_TIMEOUT_SECS = 60;
export const MAX_TIMEOUT_SECS = 3600;

/** One `KEY = value` row of the environment or headers editor. */
export interface KeyValueRow {
  /** Keeps a row's inputs in place while rows above it are removed. */
  id: number;
  key: string;
  value: string;
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
  /** Text, as typed. */
  timeoutSecs: string;
}

let rowCounter = 0;

export function keyValueRow(key = '', value = ''): KeyValueRow {
  rowCounter += 1;
  return { id: rowCounter, key, value };
}

function rowsFrom(record: Readonly<Record<string, string>> | undefined): KeyValueRow[] {
  return Object.entries(record ?? {}).map(([key, value]) => keyValueRow(key, value));
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
 * Rows as the map the backend takes; a row left completely empty is ignored. Returns the
 * problem instead when a row has a value but no name, a name twice, or (for variables) an
 * `=` in its name.
 */
export function recordFromRows(rows: readonly KeyValueRow[], what: 'variable' | 'header'): { record: Record<string, string> } | { error: string } {
  const record: Record<string, string> = {};
  for (const row of rows) {
    const key = row.key.trim();
    if (key === '' && row.value === '') continue;
    if (key === '') return { error: `A ${what} has a value but no name.` };
    if (what === 'variable' && key.includes('=')) return { error: `\`${key}\` is not a valid variable name (no “=”).` };
    if (what === 'header' && /[\s:]/.test(key)) return { error: `\`${key}\` is not a valid header name.` };
    if (Object.hasOwn(record, key)) return { error: `\`${key}\` is set twice.` };
    record[key] = row.value;
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

  let transport: McpTransport | undefined;
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
    input: { name, transport, enabled: draft.enabled, trustReadOnly: draft.trustReadOnly, timeoutSecs: seconds },
  };
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
 * The prefix the server's tools will get, as a preview while the name is typed: the name
 * in lowercase letters, digits and `_` (the backend's rule; a clash gets `_2`, so the
 * listed tool names are the truth).
 */
export function toolPrefix(name: string): string {
  const slug = name
    .trim()
    .replace(/[^a-zA-Z0-9]/g, '_')
    .toLowerCase()
    .replace(/_{2,}/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 24);
  return slug === '' ? 'mcp' : slug;
}
