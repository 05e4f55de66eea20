import { describe, expect, it } from 'vitest';
import type { McpServer } from '../src/protocol.gen';
import { fieldErrorsFrom } from '../src/settings/fieldErrors';
import {
  argsFromText,
  draftFromServer,
  keyValueRow,
  mcpFields,
  mcpInputFromDraft,
  readyWithProblems,
  recordFromRows,
  stateLabel,
  storedRow,
  toolCountText,
  transportInputFromServer,
  toolPrefix,
  transportSummary,
  type McpDraft,
} from '../src/settings/mcpForm';

const server = (patch: Partial<McpServer> = {}): McpServer => ({
  id: 's1',
  name: 'files',
  transport: { kind: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/notes'], env: [{ name: 'DEBUG', set: true }], cwd: '/home/me' },
  namespace: 'files',
  enabled: true,
  trustReadOnly: false,
  samplingAllowed: false,
  timeoutSecs: 60,
  status: { state: 'ready', toolCount: 2, problems: [] },
  tools: ['files__read_file', 'files__write_file'],
  createdAt: '2025-01-01T00:00:00Z',
  ...patch,
});

const draft = (patch: Partial<McpDraft> = {}): McpDraft => ({ ...draftFromServer(), name: 'files', command: 'npx', ...patch });

describe('MCP server form', () => {
  it('edits a stdio server: arguments one per line, saved variables by name only, kept unless retyped', () => {
    const edited = draftFromServer(server());
    expect(edited.args).toBe('-y\n@modelcontextprotocol/server-filesystem\n/home/me/notes');
    expect(edited.env.map(({ key, value, stored }) => [key, value, stored])).toEqual([['DEBUG', '', { set: true }]]);
    const input = {
      name: 'files',
      transport: {
        kind: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/notes'],
        env: { DEBUG: null },
        cwd: '/home/me',
      },
      enabled: true,
      trustReadOnly: false,
      samplingAllowed: false,
      timeoutSecs: 60,
    };
    expect(mcpInputFromDraft(edited)).toEqual({ input });
    // The on/off switch saves the server as it is: every stored value kept.
    expect(transportInputFromServer(server().transport)).toEqual(input.transport);
    // A retyped value replaces the stored one.
    const retyped = { ...edited, env: [{ ...edited.env[0], value: '2' }] };
    expect(mcpInputFromDraft(retyped)).toEqual({ input: { ...input, transport: { ...input.transport, env: { DEBUG: '2' } } } });
  });

  it('edits an HTTP server with its headers, and sends the switches and timeout as set', () => {
    const http = server({
      transport: { kind: 'http', url: 'https://mcp.example.com/mcp', headers: [{ name: 'Authorization', set: true }] },
      trustReadOnly: true,
    });
    const edited = { ...draftFromServer(http), enabled: false, timeoutSecs: '120' };
    expect(mcpInputFromDraft(edited)).toEqual({
      input: {
        name: 'files',
        transport: { kind: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: null } },
        enabled: false,
        trustReadOnly: true,
        samplingAllowed: false,
        timeoutSecs: 120,
      },
    });
  });

  it('asks for a value the backend lost, and refuses a header twice in another case', () => {
    expect(recordFromRows([storedRow({ name: 'TOKEN', set: false })], 'variable')).toEqual({ error: expect.stringContaining('type it again') });
    expect(recordFromRows([{ ...storedRow({ name: 'TOKEN', set: false }), value: 'new' }], 'variable')).toEqual({ record: { TOKEN: 'new' } });
    expect(recordFromRows([keyValueRow('X-Key', '1'), keyValueRow('x-key', '2')], 'header')).toEqual({ error: expect.stringContaining('twice') });
    expect(recordFromRows([keyValueRow('A', '1'), keyValueRow('a', '2')], 'variable')).toEqual({ record: { A: '1', a: '2' } });
  });

  it('says when a ready server has a problem', () => {
    expect(stateLabel({ state: 'ready', toolCount: 2, problems: [] })).toBe('Ready');
    expect(stateLabel({ state: 'ready', toolCount: 1, problems: ['broken: bad schema'] })).toBe('Ready · 1 tool left out');
    expect(stateLabel({ state: 'ready', toolCount: 2, problems: [], message: '`tools/list` failed' })).toBe('Ready · last listing failed');
    expect(readyWithProblems({ state: 'ready', toolCount: 2, problems: [] })).toBe(false);
    expect(readyWithProblems({ state: 'error', toolCount: 0, problems: [], message: 'down' })).toBe(false);
    expect(stateLabel({ state: 'error', toolCount: 0, problems: [], message: 'down' })).toBe('Error');
  });

  it('drops blank argument lines and trims the rest; empty rows and an empty folder are left out', () => {
    expect(argsFromText(' -y \n\n  pkg\r\n/tmp/a b  \n')).toEqual(['-y', 'pkg', '/tmp/a b']);
    const result = mcpInputFromDraft(draft({ args: '\n', env: [keyValueRow('', ''), keyValueRow('A', '')], cwd: '  ' }));
    expect(result).toEqual({
      input: expect.objectContaining({ transport: { kind: 'stdio', command: 'npx', args: [], env: { A: '' } } }),
    });
  });

  it('keeps the other transport’s fields while the kind switches, and sends only the chosen one', () => {
    const result = mcpInputFromDraft(draft({ kind: 'http', url: ' http://localhost:3000/mcp ', headers: [keyValueRow('X-Key', 'k')] }));
    expect(result).toEqual({
      input: expect.objectContaining({ transport: { kind: 'http', url: 'http://localhost:3000/mcp', headers: { 'X-Key': 'k' } } }),
    });
  });

  it('names the fields it refuses with the paths the backend uses', () => {
    expect(mcpInputFromDraft(draft({ name: ' ', command: '', timeoutSecs: '0' }))).toEqual({
      errors: { name: expect.any(String), 'transport.command': expect.any(String), timeoutSecs: expect.stringContaining('3600') },
    });
    expect(mcpInputFromDraft(draft({ timeoutSecs: '3601' }))).toEqual({ errors: { timeoutSecs: expect.any(String) } });
    expect(mcpInputFromDraft(draft({ timeoutSecs: '1.5' }))).toEqual({ errors: { timeoutSecs: expect.any(String) } });
    expect(mcpInputFromDraft(draft({ kind: 'http', url: '' }))).toEqual({ errors: { 'transport.url': expect.any(String) } });
    expect(mcpInputFromDraft(draft({ kind: 'http', url: 'ftp://x' }))).toEqual({ errors: { 'transport.url': expect.stringContaining('http') } });
  });

  it('refuses variable and header rows without a name, twice the same name, or a bad name', () => {
    expect(recordFromRows([keyValueRow('', 'value')], 'variable')).toEqual({ error: expect.stringContaining('no name') });
    expect(recordFromRows([keyValueRow('A', '1'), keyValueRow(' A ', '2')], 'variable')).toEqual({ error: expect.stringContaining('twice') });
    expect(recordFromRows([keyValueRow('A=B', '1')], 'variable')).toEqual({ error: expect.stringContaining('A=B') });
    expect(recordFromRows([keyValueRow('Bad Header', '1')], 'header')).toEqual({ error: expect.stringContaining('Bad Header') });
    // An inherited property name is an ordinary variable name.
    expect(recordFromRows([keyValueRow('constructor', '1')], 'variable')).toEqual({ record: { constructor: '1' } });
    expect(mcpInputFromDraft(draft({ env: [keyValueRow('', 'x')] }))).toEqual({ errors: { 'transport.env': expect.any(String) } });
    expect(mcpInputFromDraft(draft({ kind: 'http', url: 'https://x', headers: [keyValueRow('', 'x')] }))).toEqual({
      errors: { 'transport.headers': expect.any(String) },
    });
  });

  it("shows the backend's field errors under the transport's fields, else on top", () => {
    const bad = (field: string) => ({ kind: 'bad_request' as const, message: `${field}: is wrong`, retryable: false, field });
    expect(fieldErrorsFrom(bad('transport.cwd'), mcpFields('stdio'))).toEqual({ 'transport.cwd': 'is wrong' });
    expect(fieldErrorsFrom(bad('transport.env'), mcpFields('stdio'))).toEqual({ 'transport.env': 'is wrong' });
    expect(fieldErrorsFrom(bad('transport.headers'), mcpFields('http'))).toEqual({ 'transport.headers': 'is wrong' });
    expect(fieldErrorsFrom(bad('timeoutSecs'), mcpFields('http'))).toEqual({ timeoutSecs: 'is wrong' });
    // The URL field is not shown for a stdio server: the error goes on top.
    expect(fieldErrorsFrom(bad('transport.url'), mcpFields('stdio'))).toEqual({ '': 'transport.url: is wrong' });
  });

  it('previews the tool prefix as the backend makes it', () => {
    expect(toolPrefix('files')).toBe('files');
    expect(toolPrefix('  My  Docs! ')).toBe('my_docs');
    expect(toolPrefix('---')).toBe('mcp');
    expect(toolPrefix('a'.repeat(30))).toHaveLength(24);
    expect(toolPrefix('a very long server name that goes on')).toBe('a_very_long_server_name');
  });

  it('describes how a server runs and what its tool count means', () => {
    expect(transportSummary(server().transport)).toBe('npx -y @modelcontextprotocol/server-filesystem /home/me/notes');
    expect(transportSummary({ kind: 'stdio', command: 'sh', args: ['-c', "echo 'hi'"], env: [] })).toBe(`sh -c 'echo '\\''hi'\\'''`);
    expect(toolCountText(server())).toBe('2 tools');
    expect(toolCountText(server({ status: { state: 'connecting', toolCount: 0, problems: [] } }))).toBe('listing tools…');
    expect(toolCountText(server({ enabled: false, status: { state: 'disabled', toolCount: 3, problems: [] } }))).toMatch(/not offered/);
  });
});
