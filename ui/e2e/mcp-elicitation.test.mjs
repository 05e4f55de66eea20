// MCP elicitation and sampling with the real `server-everything`: its elicitation and
// sampling tools are offered (it registers them only for a client that declares the
// capabilities). The form it asks for during the call shows as a card in the reply, built
// from its schema: an answer that does not fit is refused under the form and the card stays
// open; the card survives a reload; Submit sends the form and the server's result says
// what it got; Decline and Stop answer the question too. Its sampling request shows what it
// would send and to which model; Deny tells it no, Always allow lets the testkit model
// answer, now and from then on without asking.

import assert from 'node:assert/strict';
import {
  addTestkitProvider,
  byTestId,
  e2eTest,
  lastAssistant,
  normalize,
  openNewTopic,
  testkitRequests,
  typeAndEnter,
  useStack,
  waitUntil,
} from './harness.mjs';
import { addEverything } from './mcp-helpers.mjs';

const TOOL = 'everything__trigger-elicitation-request';
const SAMPLING_TOOL = 'everything__trigger-sampling-request';
const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

/** Adds server-everything once per stack, and waits until it offers its elicitation and sampling tools. */
const everything = () => addEverything(stack, { tools: [TOOL, SAMPLING_TOOL] });

/** A new topic whose reply calls the elicitation tool (allowed on its approval card), then says `after`. */
async function askForm(page, message, after) {
  await everything();
  await stack.testkit.reset();
  await stack.testkit.script([{ chunks: [], toolCalls: [{ name: TOOL, arguments: '{}' }] }, { chunks: [after] }]);
  await openNewTopic(page);
  await typeAndEnter(page, message);
  await page.locator('[data-testid="approval-card"] [data-testid="approval-allow-once"]').click();
  const card = page.locator('[data-testid="elicitation-card"][data-state="pending"]');
  await card.locator('[data-testid="elicitation-accept"]').waitFor();
  return card;
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

async function toolResultOf(marker) {
  const requests = await testkitRequests(stack.testkit);
  const chats = requests.filter((request) => request.path.endsWith('/chat/completions') && JSON.stringify(request.body).includes(marker));
  return chats.at(-1).body.messages.filter((message) => message.role === 'tool').map((message) => String(message.content)).join('\n');
}

e2eTest(
  stack,
  'the elicitation tool is offered; its form is a card that refuses a bad answer, survives a reload and sends a good one',
  async () => {
    const page = await stack.openApp();
    const card = await askForm(page, 'Ask me for my details', 'Thanks for the details.');
    const requests = await testkitRequests(stack.testkit);
    const first = requests.find((request) => JSON.stringify(request.body).includes('Ask me for my details'));
    assert.ok(first.body.tools.some((tool) => tool.function.name === TOOL), 'the model was offered the elicitation tool');

    // The card: the server's message, its fields with their defaults, and it stands out.
    assert.match(await card.locator('[data-testid="elicitation-message"]').innerText(), /Please provide inputs/);
    assert.match(await card.locator('.elicitation-server').innerText(), /everything/);
    assert.notEqual(await card.evaluate((el) => el.ownerDocument.defaultView.getComputedStyle(el).boxShadow), 'none', 'an open question is highlighted');
    assert.equal(await card.locator('[data-testid="elicitation-field-integer"]').inputValue(), '42');
    assert.equal(await card.locator('[data-testid="elicitation-field-legacyTitledEnum"] option:checked').innerText(), 'Cats');
    assert.equal(await card.locator('[data-testid="elicitation-field-email"]').getAttribute('type'), 'email');

    // A required field left empty is caught in the form; a bad email by the backend.
    await card.locator('[data-testid="elicitation-accept"]').click();
    await card.locator('.field-error', { hasText: 'Required.' }).waitFor();
    await card.locator('[data-testid="elicitation-field-name"]').fill('Ada Lovelace');
    await card.locator('[data-testid="elicitation-field-email"]').fill('not-an-email');
    await card.locator('[data-testid="elicitation-accept"]').click();
    const error = card.locator('[data-testid="elicitation-error"]');
    await error.waitFor();
    assert.match(await error.innerText(), /must be an email address/);

    // A reload: the question is still there, and still open.
    await page.reload();
    const reloaded = page.locator('[data-testid="elicitation-card"][data-state="pending"]');
    await reloaded.locator('[data-testid="elicitation-accept"]').waitFor();
    await reloaded.locator('[data-testid="elicitation-field-name"]').fill('Ada Lovelace');
    await reloaded.locator('[data-testid="elicitation-field-email"]').fill('ada@example.com');
    await reloaded.locator('[data-testid="elicitation-field-integer"]').fill('7');
    await reloaded.locator('[data-testid="elicitation-accept"]').click();

    const answered = page.locator('[data-testid="elicitation-card"][data-state="accepted"]');
    await answered.waitFor();
    assert.match(await answered.locator('[data-testid="elicitation-content"]').innerText(), /Ada Lovelace/);
    assert.equal(await answered.locator('input').count(), 0, 'an answered card has no form');
    await replySettles(page, 'Thanks for the details.');
    const result = await toolResultOf('Ask me for my details');
    assert.match(result, /Name: Ada Lovelace/);
    assert.match(result, /Email: ada@example.com/);
    assert.match(result, /Favorite Integer: 7/);
    assert.equal(await lastAssistant(page).locator('[data-testid="tool-card"]').getAttribute('data-phase'), 'done');
  },
  { timeout: 120_000 },
);

e2eTest(
  stack,
  'Decline tells the server no; Stop on the reply cancels an open question',
  async () => {
    const page = await stack.openApp();
    const card = await askForm(page, 'Ask and I decline', 'Understood.');
    await card.locator('[data-testid="elicitation-decline"]').click();
    await page.locator('[data-testid="elicitation-card"][data-state="declined"]').waitFor();
    await replySettles(page, 'Understood.');
    assert.match(await toolResultOf('Ask and I decline'), /User declined/);

    const open = await askForm(page, 'Ask and I stop', 'Never said.');
    await byTestId(page, 'stop-button').click();
    const cancelled = page.locator('[data-testid="elicitation-card"][data-state="cancelled"]');
    await cancelled.waitFor();
    assert.match(await cancelled.locator('[data-testid="elicitation-outcome"]').innerText(), /Cancelled/);
    assert.equal(await open.count(), 0, 'no open question is left');
  },
  { timeout: 120_000 },
);

/** A new topic whose reply calls the sampling tool (allowed on its approval card); `scripts` follow. */
async function askSample(page, message, prompt, scripts) {
  await everything();
  await stack.testkit.reset();
  await stack.testkit.script([{ chunks: [], toolCalls: [{ name: SAMPLING_TOOL, arguments: JSON.stringify({ prompt, maxTokens: 40 }) }] }, ...scripts]);
  await openNewTopic(page);
  await typeAndEnter(page, message);
  await page.locator('[data-testid="approval-card"] [data-testid="approval-allow-once"]').click();
}

e2eTest(
  stack,
  'a sampling request shows what it sends and to which model; Deny says no, Always allow lets the model answer from then on',
  async () => {
    const page = await stack.openApp();
    await askSample(page, 'Sample and I deny', 'Name a colour', [{ chunks: ['No sample then.'] }]);
    const card = page.locator('[data-testid="sampling-card"][data-state="pending"]');
    await card.locator('[data-testid="sampling-allow"]').waitFor();
    assert.match(await card.locator('[data-testid="sampling-messages"]').innerText(), /You are a helpful test server\.[\s\S]*Name a colour/);
    assert.ok((await card.locator('[data-testid="sampling-model"]').innerText()).length > 0, 'the card names the model that answers');
    assert.notEqual(await card.evaluate((el) => el.ownerDocument.defaultView.getComputedStyle(el).boxShadow), 'none', 'an open request is highlighted');
    await card.locator('[data-testid="sampling-deny"]').click();
    await page.locator('[data-testid="sampling-card"][data-state="denied"]').waitFor();
    await replySettles(page, 'No sample then.');
    assert.match(await toolResultOf('Sample and I deny'), /declined/);

    await askSample(page, 'Sample and I allow', 'Name a fruit', [{ chunks: ['Quince.'] }, { chunks: ['The server heard back.'] }]);
    const asking = page.locator('[data-testid="sampling-card"][data-state="pending"]');
    await asking.locator('[data-testid="sampling-allow-always"]').click();
    const done = page.locator('[data-testid="sampling-card"][data-state="done"]');
    await done.waitFor();
    assert.equal(await done.locator('[data-testid="sampling-result"]').innerText(), 'Quince.');
    await replySettles(page, 'The server heard back.');
    assert.match(await toolResultOf('Sample and I allow'), /Quince\./);
    const servers = await stack.server.api('mcp_servers_list');
    assert.ok(servers.find((server) => server.name === 'everything').samplingAllowed, 'the server may sample from now on');

    // From now on it does not ask: the card shows the answer at once.
    await askSample(page, 'Sample without asking', 'Name a tree', [{ chunks: ['Oak.'] }, { chunks: ['Heard again.'] }]);
    const ruled = page.locator('[data-testid="sampling-card"][data-state="done"]');
    await ruled.waitFor();
    assert.match(await ruled.locator('[data-testid="sampling-outcome"]').innerText(), /Allowed by your setting/);
    assert.equal(await page.locator('[data-testid="sampling-allow"]').count(), 0, 'nothing to answer');
    await replySettles(page, 'Heard again.');
  },
  { timeout: 120_000 },
);
