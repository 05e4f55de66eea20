// MCP servers set up in Settings: the real filesystem server added as a stdio program,
// its live status and tools, a model's edit through one of its tools answered on an
// approval card and applied exactly once, a read-only tool let through, the server's
// on/off switch, and a broken server that shows its error while everything else keeps
// working; its variable's value never comes back from the backend.

import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
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
const files = { folder: '', editTool: '', readTool: '' };

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

/** The value of the broken server's variable: it must never come back from the backend. */
const SECRET = 'tok-e2e-5b1d';

async function assertSecretKept() {
  const list = await stack.server.api('mcp_servers_list');
  const stored = list.find((server) => server.name === 'broken');
  assert.deepEqual(stored.transport.env, [{ name: 'TOKEN', set: true }], 'the variable is listed by name, its value set');
  assert.ok(!JSON.stringify(list).includes(SECRET), 'and its value is not sent');
}

/** The chat requests that carry `marker` (the user's message of one test), oldest first. */
async function chatRequestsWith(marker) {
  const requests = await testkitRequests(stack.testkit);
  return requests.filter((request) => request.path.endsWith('/chat/completions') && JSON.stringify(request.body).includes(marker));
}

e2eTest(stack, 'the filesystem server added in Settings gets ready with its tools; its edit waits for approval and runs once', async () => {
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
  files.editTool = await toolNamed(item, 'edit_file');
  files.readTool = await toolNamed(item, 'read_text_file');
  assert.equal(files.editTool, 'files__edit_file');
  assert.match(await item.locator('[data-testid="mcp-tool-count"]').innerText(), /^\d+ tools$/);

  // Tools lists them with the server, asking first.
  await page.locator('[data-testid="settings-tab"][data-section="tools"]').click();
  const editItem = page.locator(`[data-testid="tool-item"][data-tool="${files.editTool}"]`);
  await editItem.waitFor();
  assert.equal(await editItem.locator('[data-testid="tool-default"]').innerText(), 'asks first');
  await closeSettings(page);

  // A model edits a note through the server: the card asks, Allow once edits it once.
  // The edit doubles its word, so a second run would show (`hello hello hello`).
  const note = path.join(files.folder, 'note.md');
  await writeFile(note, 'hello');
  await stack.testkit.reset();
  await stack.testkit.script([
    {
      chunks: [],
      toolCalls: [{ name: files.editTool, arguments: JSON.stringify({ path: note, edits: [{ oldText: 'hello', newText: 'hello hello' }] }) }],
    },
    { chunks: ['Edited ', 'the note.'] },
  ]);
  const topicId = await openNewTopic(page);
  await typeAndEnter(page, 'Edit a note through MCP');
  const card = page.locator('[data-testid="approval-card"]');
  await card.waitFor();
  assert.match(await card.innerText(), new RegExp(files.editTool));
  assert.equal(await readFile(note, 'utf8'), 'hello', 'nothing is changed before the answer');

  await card.locator('[data-testid="approval-allow-once"]').click();
  await replySettles(page, 'Edited the note.');
  assert.equal(await readFile(note, 'utf8'), 'hello hello', 'the edit ran exactly once');
  const tool = lastAssistant(page).locator('[data-testid="tool-card"]');
  assert.equal(await tool.count(), 1);
  assert.equal(await tool.getAttribute('data-tool-name'), files.editTool);
  assert.equal(await tool.getAttribute('data-phase'), 'done');

  const audit = await stack.server.api('tool_audit_list', { topicId });
  assert.deepEqual(
    audit.filter((entry) => entry.actor === 'user').map((entry) => [entry.toolName, entry.decision]),
    [[files.editTool, 'allow']],
    'one approval by the user',
  );
  const stored = await stack.server.api('messages_list', { topicId });
  const calls = stored.flatMap((message) => message.message.parts).filter((part) => part.type === 'dynamic-tool');
  assert.deepEqual(
    calls.map((part) => [part.toolName, part.state]),
    [[files.editTool, 'output-available']],
    'the stored reply holds one call, with its result',
  );
  const chats = await chatRequestsWith('Edit a note through MCP');
  assert.equal(chats.length, 2, 'one model call for the question, one after the result');
  assert.equal(chats[1].body.messages.filter((message) => message.role === 'tool').length, 1, 'the model got one result');
});

e2eTest(stack, 'a broken server shows its error while the filesystem server and the chat keep working', async () => {
  assert.ok(files.editTool, 'the filesystem server was added by the test before');
  const page = await stack.openApp();
  await openMcpSettings(page);
  await byTestId(page, 'mcp-add').click();
  await byTestId(page, 'mcp-name').fill('broken');
  await byTestId(page, 'mcp-command').fill('/nonexistent/server');
  await byTestId(page, 'mcp-env-add').click();
  await byTestId(page, 'mcp-env-key').fill('TOKEN');
  await byTestId(page, 'mcp-env-value').fill(SECRET);
  await byTestId(page, 'mcp-save').click();
  await byTestId(page, 'mcp-form').waitFor({ state: 'detached' });

  const broken = serverItem(page, 'broken');
  await page.locator('[data-testid="mcp-server"][data-name="broken"][data-state="error"]').waitFor({ timeout: 30_000 });
  assert.match(await broken.locator('[data-testid="mcp-error-message"]').innerText(), /\/nonexistent\/server/);
  assert.equal(await broken.locator('[data-testid="mcp-tool"]').count(), 0);
  await assertSecretKept();

  // Editing shows the variable by name with its value set; left empty, the value stays.
  await broken.locator('[data-testid="mcp-edit"]').click();
  const value = byTestId(page, 'mcp-env-value');
  assert.equal(await value.getAttribute('data-stored'), 'set');
  assert.equal(await value.inputValue(), '', 'the value never comes back');
  assert.match((await value.getAttribute('placeholder')) ?? '', /leave empty to keep/);
  await byTestId(page, 'mcp-save').click();
  await byTestId(page, 'mcp-form').waitFor({ state: 'detached' });
  await assertSecretKept();
  assert.equal(await serverItem(page, 'files').getAttribute('data-state'), 'ready');

  // Read-only tools of the filesystem server may run without asking from now on.
  await serverItem(page, 'files').locator('[data-testid="mcp-edit"]').click();
  await byTestId(page, 'mcp-trust-read-only').check();
  await byTestId(page, 'mcp-save').click();
  await byTestId(page, 'mcp-form').waitFor({ state: 'detached' });
  await waitUntil('the filesystem server is ready again', async () => (await serverItem(page, 'files').getAttribute('data-state')) === 'ready', {
    timeout: 30_000,
  });
  // Switched off, its tools are gone from Tools; switched on, they are back.
  const filesItem = serverItem(page, 'files');
  // (The switch follows the saved state, so it is clicked, not "unchecked".)
  await filesItem.locator('[data-testid="mcp-enabled-switch"]').click();
  await page.locator('[data-testid="mcp-server"][data-name="files"][data-state="disabled"]').waitFor();
  await page.locator('[data-testid="settings-tab"][data-section="tools"]').click();
  await byTestId(page, 'tool-item').first().waitFor();
  assert.equal(await page.locator(`[data-testid="tool-item"][data-tool="${files.readTool}"]`).count(), 0, 'not offered while off');
  await page.locator('[data-testid="settings-tab"][data-section="mcp"]').click();
  await serverItem(page, 'files').locator('[data-testid="mcp-enabled-switch"]').click();
  await page.locator('[data-testid="mcp-server"][data-name="files"][data-state="ready"]').waitFor({ timeout: 30_000 });
  await page.locator('[data-testid="settings-tab"][data-section="tools"]').click();
  await page.locator(`[data-testid="tool-item"][data-tool="${files.readTool}"]`).waitFor();
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

e2eTest(stack, 'Settings → MCP lists the workspace folders offered to servers as roots', async () => {
  const folder = await tempWorkspace();
  const topic = await stack.server.api('topic_create', {});
  await stack.server.api('topic_update', { id: topic.id, workspace: folder });
  const page = await stack.openApp();
  await openMcpSettings(page);
  await page.locator('[data-testid="mcp-root"]', { hasText: folder }).waitFor();
  assert.ok((await stack.server.api('mcp_roots_list')).includes(folder), 'the operation lists it too');
});
