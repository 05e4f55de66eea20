#!/usr/bin/env node
// A scripted ACP agent for the driver's protocol edge cases (no dependencies). What it
// does in a turn is chosen by the prompt's first word:
//   hello            a thought, then a reply in two chunks, and the turn's token usage
//   write PATH TEXT  an `edit` tool call that asks permission (allow once / allow always /
//                    reject once), then writes PATH through fs/write_text_file
//   fswrite PATH TEXT  writes through fs/write_text_file without asking first
//   read PATH        reads PATH through fs/read_text_file and says what it holds
//   plan             a plan (then the same plan, further on), its slash commands and a mode
//                    change, then a reply
//   /NAME ARGS       a slash command it offers: says which ran, with what
//   mode             says which mode it is in
//   slow             a chunk, then waits until the file `release` appears in the
//                    workspace (or session/cancel), then says so
//   malformed        a line that is not JSON, then a reply
//   unknown          a session update of a kind no client knows, then a reply
//   exit             a chunk, then exits mid-turn (status 3)
//   wait             a chunk, then waits for session/cancel; after it, asks permission
//                    anyway and writes the outcome it got to after-cancel.txt
//   terminal CMD     runs `sh -c CMD` in a terminal shown by an `execute` tool call
//   whoami           says which process it is (`process PID`)
// A prompt with files (any text) is answered "Got …", naming each block it got.
// Sessions can be loaded (session/load replays one user and one agent chunk). A new
// session offers the modes `code` and `architect` (session/set_mode switches) and, just
// after it starts, the slash commands `review` and `test`.
import { createInterface } from 'node:readline';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

let nextId = 1000;
const waiting = new Map();
const sessions = new Map();
const modes = new Map();
let cancelled = null;
// FAKE_ACP_PROMPT='image,embedded' (the default) or a shorter list: what prompts may carry.
const PROMPT_CAPABILITIES = Object.fromEntries(
  (process.env.FAKE_ACP_PROMPT ?? 'image,embedded').split(',').filter(Boolean)
    .map((name) => [name === 'embedded' ? 'embeddedContext' : name, true]),
);
const MODES = [
  { id: 'code', name: 'Code', description: 'Writes and runs code' },
  { id: 'architect', name: 'Architect', description: 'Plans without changing files' },
];
const COMMANDS = [
  { name: 'review', description: 'Review the changes' },
  { name: 'test', description: 'Run the tests', input: { hint: 'which tests to run' } },
];

function send(message) {
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
}
function request(method, params) {
  const id = nextId++;
  send({ id, method, params });
  return new Promise((resolve) => waiting.set(id, resolve));
}
function update(sessionId, update) {
  send({ method: 'session/update', params: { sessionId, update } });
}
function say(sessionId, text) {
  update(sessionId, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
}
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

async function turn(sessionId, text) {
  const [word, ...rest] = text.trim().split(/\s+/);
  const cwd = sessions.get(sessionId);
  switch (word) {
    case 'hello':
      update(sessionId, { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'Thinking.' } });
      say(sessionId, 'Hello from ');
      say(sessionId, 'the fake agent.');
      return 'end_turn';
    case 'write':
    case 'fswrite': {
      const [path, ...words] = rest;
      const content = words.join(' ') + '\n';
      const abs = path.startsWith('/') ? path : join(cwd, path);
      const toolCallId = 'call-write';
      if (word === 'write') {
        update(sessionId, {
          sessionUpdate: 'tool_call', toolCallId, title: `Write ${path}`, kind: 'edit', status: 'pending',
          locations: [{ path: abs }], rawInput: { path: abs, content },
          content: [{ type: 'diff', path: abs, oldText: null, newText: content }],
        });
        const answer = await request('session/request_permission', {
          sessionId,
          toolCall: { toolCallId },
          options: [
            { optionId: 'yes', name: 'Allow once', kind: 'allow_once' },
            { optionId: 'always', name: 'Allow always', kind: 'allow_always' },
            { optionId: 'no', name: 'Reject', kind: 'reject_once' },
          ],
        });
        const outcome = answer.result?.outcome;
        if (outcome?.outcome === 'cancelled') return 'cancelled';
        if (outcome?.optionId === 'no') {
          update(sessionId, { sessionUpdate: 'tool_call_update', toolCallId, status: 'failed',
            content: [{ type: 'content', content: { type: 'text', text: 'The user rejected the write.' } }] });
          say(sessionId, 'I did not write it.');
          return 'end_turn';
        }
      }
      const written = await request('fs/write_text_file', { sessionId, path: abs, content });
      if (written.error) {
        say(sessionId, `The write failed: ${written.error.message}`);
        return 'end_turn';
      }
      if (word === 'write') {
        update(sessionId, { sessionUpdate: 'tool_call_update', toolCallId, status: 'completed' });
      }
      say(sessionId, `Wrote ${path}.`);
      return 'end_turn';
    }
    case 'read': {
      const got = await request('fs/read_text_file', { sessionId, path: rest[0] });
      say(sessionId, got.error ? `Could not read: ${got.error.message}` : `It says: ${got.result.content}`);
      return 'end_turn';
    }
    case 'plan':
      update(sessionId, { sessionUpdate: 'plan', entries: [
        { content: 'Look around', priority: 'high', status: 'in_progress' },
        { content: 'Fix it', priority: 'medium', status: 'pending' },
      ] });
      await tick();
      update(sessionId, { sessionUpdate: 'plan', entries: [
        { content: 'Look around', priority: 'high', status: 'completed' },
        { content: 'Fix it', priority: 'medium', status: 'in_progress' },
      ] });
      update(sessionId, { sessionUpdate: 'available_commands_update', availableCommands: COMMANDS });
      modes.set(sessionId, 'architect');
      update(sessionId, { sessionUpdate: 'current_mode_update', currentModeId: 'architect' });
      say(sessionId, 'Planned.');
      return 'end_turn';
    case 'mode':
      say(sessionId, `Mode: ${modes.get(sessionId) ?? 'code'}`);
      return 'end_turn';
    case 'slow': {
      say(sessionId, 'Working slowly');
      const release = join(cwd, 'release');
      const outcome = await new Promise((resolve) => {
        const poll = setInterval(() => existsSync(release) && finish('end_turn'), 10);
        const finish = (how) => { clearInterval(poll); cancelled = null; resolve(how); };
        cancelled = () => finish('cancelled');
      });
      if (outcome === 'end_turn') say(sessionId, ' and done.');
      return outcome;
    }
    case 'malformed':
      process.stdout.write('this line is not JSON-RPC\n');
      process.stdout.write('{"jsonrpc": "2.0", "method": \n');
      say(sessionId, 'Still here.');
      return 'end_turn';
    case 'unknown':
      update(sessionId, { sessionUpdate: 'hologram_projection', beam: 42 });
      say(sessionId, 'After the unknown update.');
      return 'end_turn';
    case 'exit':
      say(sessionId, 'Going away');
      await tick();
      process.stderr.write('fake agent: exiting mid-turn on purpose\n');
      process.exit(3);
      break;
    case 'wait': {
      say(sessionId, 'Working');
      await new Promise((resolve) => { cancelled = resolve; });
      const answer = await request('session/request_permission', {
        sessionId,
        toolCall: { toolCallId: 'late', title: 'Late call', kind: 'execute' },
        options: [{ optionId: 'yes', name: 'Allow once', kind: 'allow_once' }],
      });
      writeFileSync(join(cwd, 'after-cancel.txt'), answer.result?.outcome?.outcome ?? 'no outcome');
      return 'cancelled';
    }
    case 'terminal': {
      const toolCallId = 'call-terminal';
      update(sessionId, { sessionUpdate: 'tool_call', toolCallId, title: 'Run a command', kind: 'execute',
        status: 'pending', rawInput: { command: rest.join(' ') } });
      const answer = await request('session/request_permission', {
        sessionId, toolCall: { toolCallId },
        options: [{ optionId: 'yes', name: 'Allow once', kind: 'allow_once' }, { optionId: 'no', name: 'Reject', kind: 'reject_once' }],
      });
      if (answer.result?.outcome?.optionId !== 'yes') return answer.result?.outcome?.outcome === 'cancelled' ? 'cancelled' : 'end_turn';
      const created = await request('terminal/create', { sessionId, command: 'sh', args: ['-c', rest.join(' ')] });
      if (created.error) { say(sessionId, `No terminal: ${created.error.message}`); return 'end_turn'; }
      const terminalId = created.result.terminalId;
      update(sessionId, { sessionUpdate: 'tool_call_update', toolCallId, status: 'in_progress',
        content: [{ type: 'terminal', terminalId }] });
      const exit = await request('terminal/wait_for_exit', { sessionId, terminalId });
      const output = await request('terminal/output', { sessionId, terminalId });
      update(sessionId, { sessionUpdate: 'tool_call_update', toolCallId, status: 'completed' });
      await request('terminal/release', { sessionId, terminalId });
      say(sessionId, `Exit ${exit.result?.exitCode}; output ${JSON.stringify(output.result?.output)}`);
      return 'end_turn';
    }
    case 'whoami':
      say(sessionId, `process ${process.pid}`);
      return 'end_turn';
    default:
      if (word.startsWith('/') && COMMANDS.some((c) => c.name === word.slice(1))) {
        say(sessionId, `Ran ${word}${rest.length ? ` with: ${rest.join(' ')}` : ''}`);
        return 'end_turn';
      }
      say(sessionId, `You said: ${text}`);
      return 'end_turn';
  }
}

async function handle(message) {
  const { id, method, params } = message;
  switch (method) {
    case 'initialize':
      send({ id, result: { protocolVersion: 1,
        agentCapabilities: { loadSession: true, promptCapabilities: PROMPT_CAPABILITIES },
        agentInfo: { name: 'fake-acp', version: '1.0.0' }, authMethods: [] } });
      return;
    case 'session/new': {
      const sessionId = `fake-${process.pid}-${sessions.size + 1}`;
      sessions.set(sessionId, params.cwd);
      send({ id, result: { sessionId, modes: { currentModeId: 'code', availableModes: MODES } } });
      update(sessionId, { sessionUpdate: 'available_commands_update', availableCommands: COMMANDS });
      return;
    }
    case 'session/set_mode':
      if (!MODES.some((m) => m.id === params.modeId)) {
        send({ id, error: { code: -32602, message: `no mode ${params.modeId}` } });
        return;
      }
      modes.set(params.sessionId, params.modeId);
      send({ id, result: {} });
      return;
    case 'session/load':
      sessions.set(params.sessionId, params.cwd);
      update(params.sessionId, { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'an old question' } });
      say(params.sessionId, 'an old answer');
      send({ id, result: { modes: { currentModeId: modes.get(params.sessionId) ?? 'code', availableModes: MODES } } });
      return;
    case 'session/prompt': {
      const text = params.prompt.filter((b) => b.type === 'text').map((b) => b.text).join('');
      const others = params.prompt.filter((b) => b.type !== 'text');
      if (others.length > 0) {
        // Files: say what came, each as the block it was.
        const described = others.map((b) => b.type === 'image' ? `image ${b.mimeType} ${b.data.length}`
          : b.type === 'resource' ? `resource ${b.resource.uri} ${b.resource.text ?? `blob ${b.resource.blob.length}`}`
          : `link ${b.name} ${b.uri.slice(0, 22)}`);
        say(params.sessionId, `Got ${described.join('; ')}`);
        send({ id, result: { stopReason: 'end_turn' } });
        return;
      }
      const stopReason = await turn(params.sessionId, text);
      const usage = text.trim().startsWith('hello') ? { totalTokens: 12, inputTokens: 10, outputTokens: 2 } : undefined;
      send({ id, result: { stopReason, usage } });
      return;
    }
    case 'session/cancel':
      if (cancelled) { cancelled(); cancelled = null; }
      return;
    default:
      if (id !== undefined) send({ id, error: { code: -32601, message: `no method ${method}` } });
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  if (message.method === undefined && waiting.has(message.id)) {
    const resolve = waiting.get(message.id);
    waiting.delete(message.id);
    resolve(message);
    return;
  }
  handle(message).catch((error) => {
    process.stderr.write(`fake agent error: ${error.stack}\n`);
  });
});
