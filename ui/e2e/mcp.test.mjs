// MCP servers set up in Settings: the real filesystem server added as a stdio program,
// its live status and tools, a model's call of one of its tools answered on an approval
// card, a read-only tool let through, and a broken server that shows its error while
// everything else keeps working.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  addTestkitProvider,
  byTestId,
  e2eTest,
  lastAssistant,
  normalize,
  openNewTopic,
  REPO,
  tempWorkspace,
  testkitRequests,
  typeAndEnter,
  useStack,
  waitUntil,
} from './harness.mjs';

const FILESYSTEM_SERVER = path.join(REPO, 'tests/mcp-servers/node_modules/.bin/mcp-server-filesystem');
const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

/** What the tests share: the folder the filesystem server may use, and its tools' names. */
const files = { folder: '', writeTool: '', readTool: '' };

function serverItem(page, name) {
  return page.locator(`[data-testid="mcp-server"][data-name="${name}"]`);
}

async function openMcpSettings(page) {
  await byTestId(page, 'settings-button').click();
  await page.locator('[data-testid="settings-tab"][data-section="mcp"]').click();
  await byTestId(page, 'mcp-add').waitFor();
}

async function closeSettings(page) {
  await byTestId(page, 'settings-close').click();
  await byTestId(page, 'settings').waitFor({ state: 'detached' });
}

/** The server's namespaced tool whose name ends in `__<tool>`. */
async function toolNamed(item, tool) {
  const names = await item.locator('[data-testid="mcp-tool"]').evaluateAll((chips) => chips.map((chip) => chip.dataset.tool));
  const name = names.find((candidate) => candidate.endsWith(`__${tool}`));
  assert.ok(name, `the server lists a ${tool} tool (it lists ${names.join(', ')})`);
  return name;
}

async function replySettles(page, text) {
  await waitUntil(
    'the reply goes on and is stored',
    async () => {
      const reply = lastAssistant(page);
      return (await reply.getAttribute('data-status')) === 'success' && normalize(await reply.innerText()).includes(text);
    },
    { timeout: 30_000 },
  );
}

/** The chat requests that carry `marker` (the user's message of one test), oldest first. */
async function chatRequestsWith(marker) {
  const requests = await testkitRequests(stack.testkit);
  return requests.filter((request) => request.path.endsWith('/chat/completions') && JSON.stringify(request.body).includes(marker));
}

e2eTest(stack, 'the filesystem server added in Settings gets ready with its tools; its write waits for approval and runs once', async () => {
  files.folder = await tempWorkspace();
  const page = await stack.openApp();
  await openMcpSettings(page);
  await byTestId(page, 'mcp-add').click();
  const form = byTestId(page, 'mcp-form');

  // Checked in the form first: a stdio server needs its program.
  await byTestId(page, 'mcp-name').fill('files');
  await byTestId(page, 'mcp-save').click();
  await form.locator('[data-testid="form-error"][data-field="transport.command"]').waitFor();

  // The backend's refusal shows under the field it names.
  await byTestId(page, 'mcp-command').fill(FILESYSTEM_SERVER);
  await byTestId(page, 'mcp-args').fill(files.folder);
  await byTestId(page, 'mcp-cwd-input').fill('/nonexistent/working-folder');
  await byTestId(page, 'mcp-save').click();
  await byTestId(page, 'mcp-cwd-error').waitFor();
  assert.match(await byTestId(page, 'mcp-cwd-error').innerText(), /not a folder/);

  await byTestId(page, 'mcp-cwd-clear').click();
  await byTestId(page, 'mcp-save').click();
  await form.waitFor({ state: 'detached' });

  // The list follows its status until it is ready, with the tools named <server>__<tool>.
  const item = serverItem(page, 'files');
  await page.locator('[data-testid="mcp-server"][data-name="files"][data-state="ready"]').waitFor({ timeout: 30_000 });
  await item.locator('[data-testid="mcp-tool"]').first().waitFor();
  assert.equal(await item.locator('[data-testid="mcp-state"]').innerText(), 'Ready');
  files.writeTool = await toolNamed(item, 'write_file');
  files.readTool = await toolNamed(item, 'read_text_file');
  assert.equal(files.writeTool, 'files__write_file');
  assert.match(await item.locator('[data-testid="mcp-tool-count"]').innerText(), /^\d+ tools$/);

  // Tools lists them with the server, asking first.
  await page.locator('[data-testid="settings-tab"][data-section="tools"]').click();
  const writeItem = page.locator(`[data-testid="tool-item"][data-tool="${files.writeTool}"]`);
  await writeItem.waitFor();
  assert.equal(await writeItem.locator('[data-testid="tool-default"]').innerText(), 'asks first');
  await closeSettings(page);

  // A model calls the write tool: the card asks, Allow once writes the file once.
  const note = path.join(files.folder, 'note.md');
  await stack.testkit.reset();
  await stack.testkit.script([
    { chunks: [], toolCalls: [{ name: files.writeTool, arguments: JSON.stringify({ path: note, content: 'hello' }) }] },
    { chunks: ['Saved ', 'the note.'] },
  ]);
  const topicId = await openNewTopic(page);
  await typeAndEnter(page, 'Save a note through MCP');
  const card = page.locator('[data-testid="approval-card"]');
  await card.waitFor();
  assert.match(await card.innerText(), new RegExp(files.writeTool));
  assert.equal(await readFile(note, 'utf8').catch(() => undefined), undefined, 'nothing is written before the answer');

  await card.locator('[data-testid="approval-allow-once"]').click();
  await replySettles(page, 'Saved the note.');
  assert.equal(await readFile(note, 'utf8'), 'hello');
  const tool = lastAssistant(page).locator('[data-testid="tool-card"]');
  assert.equal(await tool.getAttribute('data-tool-name'), files.writeTool);
  assert.equal(await tool.getAttribute('data-phase'), 'done');

  const audit = await stack.server.api('tool_audit_list', { topicId });
  assert.deepEqual(
    audit.filter((entry) => entry.actor === 'user').map((entry) => [entry.toolName, entry.decision]),
    [[files.writeTool, 'allow']],
    'one approval by the user',
  );
  const chats = await chatRequestsWith('Save a note through MCP');
  assert.equal(chats.length, 2, 'one model call for the question, one after the result');
  assert.equal(chats[1].body.messages.filter((message) => message.role === 'tool').length, 1, 'the model got one result');
});

e2eTest(stack, 'a broken server shows its error while the filesystem server and the chat keep working', async () => {
  assert.ok(files.writeTool, 'the filesystem server was added by the test before');
  const page = await stack.openApp();
  await openMcpSettings(page);
  await byTestId(page, 'mcp-add').click();
  await byTestId(page, 'mcp-name').fill('broken');
  await byTestId(page, 'mcp-command').fill('/nonexistent/server');
  await byTestId(page, 'mcp-env-add').click();
  await byTestId(page, 'mcp-env-key').fill('TOKEN');
  await byTestId(page, 'mcp-env-value').fill('secret');
  await byTestId(page, 'mcp-save').click();
  await byTestId(page, 'mcp-form').waitFor({ state: 'detached' });

  const broken = serverItem(page, 'broken');
  await page.locator('[data-testid="mcp-server"][data-name="broken"][data-state="error"]').waitFor({ timeout: 30_000 });
  assert.match(await broken.locator('[data-testid="mcp-error-message"]').innerText(), /\/nonexistent\/server/);
  assert.equal(await broken.locator('[data-testid="mcp-tool"]').count(), 0);
  const stored = (await stack.server.api('mcp_servers_list')).find((server) => server.name === 'broken');
  assert.deepEqual(stored.transport.env, { TOKEN: 'secret' }, 'the variable row was saved');
  assert.equal(await serverItem(page, 'files').getAttribute('data-state'), 'ready');

  // Read-only tools of the filesystem server may run without asking from now on.
  await serverItem(page, 'files').locator('[data-testid="mcp-edit"]').click();
  await byTestId(page, 'mcp-trust-read-only').check();
  await byTestId(page, 'mcp-save').click();
  await byTestId(page, 'mcp-form').waitFor({ state: 'detached' });
  await waitUntil('the filesystem server is ready again', async () => (await serverItem(page, 'files').getAttribute('data-state')) === 'ready', {
    timeout: 30_000,
  });
  await closeSettings(page);

  const note = path.join(files.folder, 'note.md');
  await stack.testkit.reset();
  await stack.testkit.script([
    { chunks: [], toolCalls: [{ name: files.readTool, arguments: JSON.stringify({ path: note }) }] },
    { chunks: ['The note ', 'says hello.'] },
  ]);
  await openNewTopic(page);
  await typeAndEnter(page, 'Read the note through MCP');
  await replySettles(page, 'The note says hello.');
  assert.equal(await byTestId(page, 'approval-card').count(), 0, 'a read-only tool of a trusted server did not ask');
  const tool = lastAssistant(page).locator('[data-testid="tool-card"]');
  assert.equal(await tool.getAttribute('data-phase'), 'done');
  assert.match(await tool.locator('[data-testid="tool-output"]').innerText(), /hello/);

  // The broken server stays listed with its error; deleting it takes it away.
  await openMcpSettings(page);
  await broken.locator('[data-testid="mcp-delete"]').click();
  await broken.locator('[data-testid="mcp-delete-confirm"]').click();
  await broken.waitFor({ state: 'detached' });
  assert.equal(await serverItem(page, 'files').getAttribute('data-state'), 'ready');
});
