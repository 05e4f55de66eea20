// MCP resources and prompts with the real `server-everything`: a resource picked in the
// composer's picker (searched) and one named by filling in a template go with a message,
// show as chips on it (also after a reload), and their text reaches the model; a server
// prompt runs as a slash command with an argument, its values suggested by the server;
// a resource link in a tool result opens through its server.

import assert from 'node:assert/strict';
import { addTestkitProvider, byTestId, e2eTest, lastAssistant, normalize, openNewTopic, testkitRequests, typeAndEnter, useStack, waitUntil } from './harness.mjs';
import { addEverything } from './mcp-helpers.mjs';

const LINKS_TOOL = 'everything__get-resource-links';
const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

async function replySettles(page, text) {
  await waitUntil(
    'the reply is stored',
    async () => {
      const reply = lastAssistant(page);
      return (await reply.getAttribute('data-status')) === 'success' && normalize(await reply.innerText()).includes(text);
    },
    { timeout: 30_000 },
  );
}

/** The user messages' text of the last chat request the testkit received. */
async function lastUserText() {
  const requests = await testkitRequests(stack.testkit);
  const chat = requests.filter((request) => request.path.endsWith('/chat/completions')).at(-1);
  return chat.body.messages
    .filter((message) => message.role === 'user')
    .map((message) => (typeof message.content === 'string' ? message.content : message.content.map((part) => part.text ?? '').join('\n')))
    .join('\n');
}

e2eTest(stack, 'a resource picked in the composer and one from a template reach the model and stay on the message', async () => {
  await addEverything(stack, { trustReadOnly: true });
  await stack.testkit.reset();
  await stack.testkit.script([{ chunks: ['Read both.'] }]);
  const page = await stack.openApp();
  await openNewTopic(page);

  await byTestId(page, 'resource-picker-button').click();
  await byTestId(page, 'resource-search').fill('architecture');
  const option = page.locator('[data-testid="resource-option"]').filter({ hasText: 'architecture.md' });
  await option.first().click();
  const pickedUri = await byTestId(page, 'pending-resource').first().getAttribute('data-uri');
  assert.match(pickedUri, /^demo:\/\/resource\/static\/document\/architecture\.md$/);

  await byTestId(page, 'resource-picker-button').click();
  await byTestId(page, 'resource-search').fill('dynamic text');
  await page.locator('[data-testid="resource-template-option"][data-template="demo://resource/dynamic/text/{resourceId}"]').click();
  assert.equal(await byTestId(page, 'resource-template-attach').isDisabled(), true, 'the template needs its value first');
  await page.locator('[data-testid="resource-template-field"][data-name="resourceId"]').fill('5');
  assert.equal(await byTestId(page, 'resource-template-uri').innerText(), 'demo://resource/dynamic/text/5');
  await byTestId(page, 'resource-template-attach').click();
  await waitUntil('both resources wait to be sent', async () => (await byTestId(page, 'pending-resource').count()) === 2);

  await typeAndEnter(page, 'Summarise the attached resources');
  await replySettles(page, 'Read both.');
  const said = await lastUserText();
  assert.ok(said.includes(`<resource uri="${pickedUri}" server="everything"`), said);
  assert.ok(said.includes('Resource 5: This is a plaintext resource'), said);

  const chips = page.locator('[data-testid="message"][data-role="user"] [data-testid="message-resource"]');
  await waitUntil('the message shows its two resources', async () => (await chips.count()) === 2);
  await page.reload();
  await waitUntil('after a reload too', async () => (await chips.count()) === 2);
  await chips.nth(1).click();
  await page.locator('[data-testid="message"][data-role="user"] [data-testid="resource-contents"]').filter({ hasText: 'Resource 5:' }).waitFor();
});

e2eTest(stack, 'a server prompt runs as a slash command with an argument, and the server suggests values', async () => {
  await addEverything(stack, { trustReadOnly: true });
  await stack.testkit.reset();
  await stack.testkit.script([{ chunks: ['Sunny.'] }]);
  const page = await stack.openApp();
  await openNewTopic(page);
  const input = byTestId(page, 'composer-input');

  // Values come from `completion/complete`, narrowed by what is typed.
  await input.fill('/completable');
  await page.locator('[data-testid="slash-option"][data-name="completable-prompt"]').waitFor();
  await input.press('Enter');
  await page.locator('[data-testid="prompt-argument"][data-name="department"]').fill('E');
  await waitUntil('the server suggests Engineering', async () =>
    page.locator('[data-testid="prompt-suggestions"][data-name="department"] option').evaluateAll((options) => options.map((o) => o.value).join(',') === 'Engineering'),
  );
  await byTestId(page, 'prompt-cancel').click();
  await byTestId(page, 'prompt-form').waitFor({ state: 'detached' });

  await input.fill('/args');
  const option = page.locator('[data-testid="slash-option"][data-name="args-prompt"]');
  assert.match(await option.innerText(), /everything/, 'the command names its server');
  await input.press('Enter');
  await page.locator('[data-testid="prompt-argument"][data-name="city"]').fill('Paris');
  await byTestId(page, 'prompt-run').click();
  await waitUntil('the prompt expands into the message box', async () => (await input.inputValue()) === "What's weather in Paris?");
  await input.press('Enter');
  await replySettles(page, 'Sunny.');
  assert.ok((await lastUserText()).includes("What's weather in Paris?"));
});

e2eTest(stack, 'a resource link in a tool result shows its URI and opens through its server', async () => {
  await addEverything(stack, { trustReadOnly: true, tools: [LINKS_TOOL] });
  await stack.testkit.reset();
  await stack.testkit.script([{ chunks: [], toolCalls: [{ name: LINKS_TOOL, arguments: '{"count":2}' }] }, { chunks: ['Two links.'] }]);
  const page = await stack.openApp();
  await openNewTopic(page);
  await typeAndEnter(page, 'links please');
  await replySettles(page, 'Two links.');

  const reply = lastAssistant(page);
  const link = reply.locator('[data-testid="resource-link"][data-uri="demo://resource/dynamic/text/2"]');
  await link.waitFor();
  assert.match(await link.innerText(), /Text Resource 2/);
  await link.locator('[data-testid="resource-link-open"]').click();
  await link.locator('[data-testid="resource-contents"]').filter({ hasText: 'Resource 2: This is a plaintext resource' }).waitFor();
});
