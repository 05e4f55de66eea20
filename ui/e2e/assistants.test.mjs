// Settings for tool use: an assistant with a tool-call allowance (and the reply that
// reaches it), approval rules with errors next to their field, the tool switches, and a
// reply that yields to a steering message.

import assert from 'node:assert/strict';
import {
  addTestkitProvider,
  byTestId,
  e2eTest,
  lastAssistant,
  normalize,
  openNewTopic,
  tempWorkspace,
  testkitRequests,
  topicItem,
  typeAndEnter,
  useStack,
  waitUntil,
} from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

async function openSettings(page, section) {
  await byTestId(page, 'settings-button').click();
  await page.locator(`[data-testid="settings-tab"][data-section="${section}"]`).click();
}

const clock = (tokenDelayMs) => ({ chunks: [], toolCalls: [{ name: 'current_time', arguments: '{}' }], ...(tokenDelayMs ? { tokenDelayMs } : {}) });

e2eTest(stack, 'an assistant with one tool call per reply: the reply stops at the limit and Continue goes on', async () => {
  const page = await stack.openApp();
  await openSettings(page, 'assistants');
  await byTestId(page, 'assistant-add').click();
  await byTestId(page, 'assistant-max-tool-calls').fill('0');
  await byTestId(page, 'assistant-save').click();
  await page.locator('[data-testid="form-error"][data-field="name"]').waitFor();
  await page.locator('[data-testid="form-error"][data-field="maxToolCalls"]').waitFor();
  await byTestId(page, 'assistant-name').fill('Careful');
  await byTestId(page, 'assistant-prompt').fill('Be careful.');
  await byTestId(page, 'assistant-max-tool-calls').fill('1');
  await byTestId(page, 'assistant-save').click();
  await page.locator('[data-testid="assistant-item"]', { hasText: 'Careful' }).waitFor();
  const [assistant] = await stack.server.api('assistants_list');
  assert.equal(assistant.maxToolCalls, 1);
  assert.equal(assistant.tools, undefined, 'all enabled tools');

  await byTestId(page, 'settings-close').click();
  const topicId = await openNewTopic(page);
  await byTestId(page, 'topic-settings-button').click();
  await byTestId(page, 'topic-assistant').selectOption({ label: 'Careful' });
  await byTestId(page, 'topic-assistant-name').waitFor();
  await page.keyboard.press('Escape');
  const [topic] = (await stack.server.api('topics_list')).topics.filter((t) => t.id === topicId);
  assert.equal(topic.assistantId, assistant.id);

  await stack.testkit.reset();
  await stack.testkit.script([clock(), clock(), { chunks: ['It is ', 'late.'] }]);
  await typeAndEnter(page, 'What time is it? (limit)');
  const stopped = lastAssistant(page).locator('[data-testid="message-stopped"]');
  await stopped.waitFor();
  assert.equal(await stopped.getAttribute('data-reason'), 'tool_limit');
  assert.match(await stopped.innerText(), /Tool-call limit reached — continue\?/);
  assert.equal(await lastAssistant(page).locator('[data-testid="tool-card"][data-phase="done"]').count(), 1);

  await byTestId(page, 'reply-continue').click();
  await waitUntil('the continued reply is stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  assert.ok(normalize(await lastAssistant(page).innerText()).includes('It is late.'));
  assert.equal(await lastAssistant(page).locator('[data-testid="tool-card"][data-phase="done"]').count(), 2);
  assert.equal(await topicItem(page, topicId).count(), 1);
});

e2eTest(stack, 'approval rules: a bad regex is refused next to its field; a good rule is listed, edited and deleted', async () => {
  const page = await stack.openApp();
  await openSettings(page, 'rules');
  await byTestId(page, 'rule-add').click();
  await byTestId(page, 'rule-tool').fill('write_file');
  await byTestId(page, 'rule-add-condition').click();
  await byTestId(page, 'rule-condition-op').selectOption('regex');
  await byTestId(page, 'rule-condition-value').fill('(');
  await byTestId(page, 'rule-save').click();
  const error = page.locator('[data-testid="form-error"][data-field="conditions.0.value"]');
  await error.waitFor();
  assert.match(await error.innerText(), /regular expression/);
  assert.deepEqual(await stack.server.api('tool_rules_list'), []);

  await byTestId(page, 'rule-condition-value').fill('^docs/');
  await byTestId(page, 'rule-decision').selectOption('allow');
  await byTestId(page, 'rule-save').click();
  const item = byTestId(page, 'rule-item');
  await item.waitFor();
  assert.match(await item.innerText(), /write_file when \/path matches regex "\^docs\/" → allow, everywhere/);
  const [rule] = await stack.server.api('tool_rules_list');
  assert.deepEqual(rule.conditions, [{ pointer: '/path', op: 'regex', value: '^docs/' }]);

  await item.locator('[data-testid="rule-edit"]').click();
  await byTestId(page, 'rule-decision').selectOption('deny');
  await byTestId(page, 'rule-save').click();
  await page.locator('[data-testid="rule-item"]', { hasText: '→ deny' }).waitFor();
  assert.equal((await stack.server.api('tool_rules_list'))[0].decision, 'deny');

  await byTestId(page, 'rule-item').locator('[data-testid="rule-delete"]').click();
  await byTestId(page, 'rule-delete-confirm').click();
  await byTestId(page, 'rule-item').waitFor({ state: 'detached' });
  assert.deepEqual(await stack.server.api('tool_rules_list'), []);
});

e2eTest(stack, 'a tool switched off in Settings is not offered to the model, and can be switched back on', async () => {
  const page = await stack.openApp();
  await openSettings(page, 'tools');
  const clockItem = page.locator('[data-testid="tool-item"][data-tool="current_time"]');
  assert.equal(await clockItem.locator('[data-testid="tool-default"]').innerText(), 'runs without asking');
  assert.equal(await page.locator('[data-testid="tool-item"][data-tool="write_file"] [data-testid="tool-default"]').innerText(), 'asks first');
  await clockItem.locator('[data-testid="tool-enabled"]').uncheck();
  await waitUntil('the tool is off', async () => (await stack.server.api('tools_list')).find((t) => t.name === 'current_time').enabled === false);

  // The model is not offered it any more.
  await byTestId(page, 'settings-close').click();
  await openNewTopic(page);
  await stack.testkit.reset();
  await stack.testkit.script({ chunks: ['No clock.'] });
  await typeAndEnter(page, 'Which tools? (switched off)');
  await waitUntil('the reply is stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  const [request] = (await testkitRequests(stack.testkit)).filter((r) => JSON.stringify(r.body).includes('Which tools? (switched off)'));
  const offered = (request.body.tools ?? []).map((tool) => tool.function.name);
  assert.ok(!offered.includes('current_time'), `current_time is not offered (offered: ${offered.join(', ')})`);

  await openSettings(page, 'tools');
  await clockItem.locator('[data-testid="tool-enabled"]').check();
  await waitUntil('the tool is on again', async () => (await stack.server.api('tools_list')).find((t) => t.name === 'current_time').enabled === true);
});

e2eTest(stack, 'a reply that yields to a steering message says so', async () => {
  const page = await stack.openApp();
  const topicId = await openNewTopic(page);
  // The tool call streams slowly, so the steer arrives while its step runs.
  await stack.testkit.reset();
  await stack.testkit.script([clock(1500), { chunks: ['Switching ', 'to your new question.'] }]);
  await typeAndEnter(page, 'First question (steer)');
  // Steer once the reply is being written (the status feed says so), not while it is being opened.
  await topicItem(page, topicId).locator('[data-testid="topic-status"][data-status="streaming"]').waitFor();
  await byTestId(page, 'composer-input').fill('actually, this');
  await byTestId(page, 'composer-steer').click();
  const first = page.locator('[data-testid="message"][data-role="assistant"]').first();
  await first.locator('[data-testid="message-steered"]').waitFor();
  await waitUntil('the steering message is answered', async () => normalize(await lastAssistant(page).innerText()).includes('Switching to your new question.'));
});

e2eTest(stack, "topic settings refuse a folder that does not exist, next to the field, and clear the topic's folder", async () => {
  const page = await stack.openApp();
  const topicId = await openNewTopic(page);
  await byTestId(page, 'topic-settings-button').click();
  await byTestId(page, 'topic-workspace-input').fill('/no/such/folder/here');
  await byTestId(page, 'topic-workspace-save').click();
  const error = byTestId(page, 'topic-workspace-error');
  await error.waitFor();
  assert.match(await error.innerText(), /\/no\/such\/folder\/here/);
  await byTestId(page, 'topic-workspace-input').fill('/');
  await byTestId(page, 'topic-workspace-save').click();
  await waitUntil('the root folder is refused', async () => /whole file system/.test(await error.innerText()));

  const folder = await tempWorkspace();
  await byTestId(page, 'topic-workspace-input').fill(folder);
  await byTestId(page, 'topic-workspace-save').click();
  await byTestId(page, 'topic-workspace').waitFor();
  assert.equal(await error.count(), 0);
  assert.equal((await stack.server.api('topics_list')).topics.find((t) => t.id === topicId).workspace, folder);

  await byTestId(page, 'topic-workspace-clear').click();
  await byTestId(page, 'topic-workspace').waitFor({ state: 'detached' });
  assert.equal((await stack.server.api('topics_list')).topics.find((t) => t.id === topicId).workspace, undefined);
});
