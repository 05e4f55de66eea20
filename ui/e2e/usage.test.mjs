// Usage and cost: a price set in Settings → Usage prices the reply footer and the topic
// total; "Details" on a tool turn's reply lists its steps (model call, tool call, model
// call); the usage report adds up and exports as CSV.

import assert from 'node:assert/strict';
import { addTestkitProvider, byTestId, e2eTest, lastAssistant, normalize, openNewTopic, typeAndEnter, useStack, waitUntil } from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

async function openUsageSettings(page) {
  await byTestId(page, 'settings-button').click();
  await page.locator('[data-testid="settings-tab"][data-section="usage"]').click();
  await byTestId(page, 'usage-report').waitFor();
}

async function replyFinished(page) {
  await waitUntil('the reply is done', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
}

e2eTest(stack, 'a price set in Settings → Usage shows as the cost in the reply footer and the topic total', async () => {
  const page = await stack.openApp();
  await openUsageSettings(page);
  // A price the form refuses says why, next to its field.
  await byTestId(page, 'price-model').fill('scripted');
  await byTestId(page, 'price-inputUsd').fill('lots');
  await byTestId(page, 'price-save').click();
  await page.locator('[data-testid="form-error"][data-field="inputUsd"]').waitFor();
  // $1000 and $2000 per million tokens: 1000 in and 500 out cost $1 + $1.
  await byTestId(page, 'price-inputUsd').fill('1000');
  await byTestId(page, 'price-outputUsd').fill('2000');
  await byTestId(page, 'price-save').click();
  await page.locator('[data-testid="price-table"] tr[data-model="scripted"][data-source="custom"]').waitFor();
  await byTestId(page, 'settings-close').click();

  await openNewTopic(page);
  await stack.testkit.reset();
  await stack.testkit.script({ chunks: ['Paris ', 'is the capital.'], usage: { promptTokens: 1000, completionTokens: 500 } });
  await typeAndEnter(page, 'What is the capital of France?');
  await replyFinished(page);

  const footer = lastAssistant(page).locator('[data-testid="reply-usage"]');
  await footer.locator('[data-testid="reply-usage-cost"]').waitFor();
  await waitUntil('the footer counts the reply', async () => normalize(await footer.locator('[data-testid="reply-usage-tokens"]').innerText()) === '1.5k tokens');
  assert.equal(normalize(await footer.locator('[data-testid="reply-usage-cost"]').innerText()), '$2.00');
  assert.match(await footer.locator('[data-testid="reply-usage-ttft"]').innerText(), /to first token/);
  // The reply's time is shown once, beside its model, not again in the usage footer.
  await lastAssistant(page).locator('[data-testid="message-time"]').waitFor();
  assert.equal(await lastAssistant(page).locator('[data-testid="message-time"]').count(), 1);
  assert.equal(await footer.locator('[data-testid="reply-usage-time"]').count(), 0);
  assert.equal(normalize(await byTestId(page, 'topic-usage').innerText()), '1.5k tokens · $2.00');

  // A second reply adds to the topic total.
  await stack.testkit.script({ chunks: ['Berlin.'], usage: { promptTokens: 500, completionTokens: 0 } });
  await typeAndEnter(page, 'And of Germany?');
  await waitUntil('the topic total counts both replies', async () => normalize(await byTestId(page, 'topic-usage').innerText()) === '2k tokens · $2.50');
});

e2eTest(stack, 'the inspector of a tool turn lists each step: model call, tool call, model call', async () => {
  const page = await stack.openApp();
  await openNewTopic(page);
  await stack.testkit.reset();
  await stack.testkit.script([
    { chunks: [], toolCalls: [{ name: 'current_time', arguments: '{}' }], usage: { promptTokens: 100, completionTokens: 10 } },
    { chunks: ['It is ', 'late.'], usage: { promptTokens: 200, completionTokens: 20, cachedTokens: 100 } },
  ]);
  await typeAndEnter(page, 'What time is it?');
  await replyFinished(page);

  // The footer adds up both model calls: 330 tokens, 300 in (100 cached) at $1000/M
  // (cached at the input price) and 30 out at $2000/M.
  // The usage is read again as the reply settles: a read during the turn may show the
  // first call alone for a moment.
  const footer = lastAssistant(page).locator('[data-testid="reply-usage"]');
  const tokens = footer.locator('[data-testid="reply-usage-tokens"]');
  await waitUntil('the footer counts both model calls', async () => (await tokens.count()) > 0 && normalize(await tokens.innerText()) === '330 tokens');
  assert.equal(normalize(await footer.locator('[data-testid="reply-usage-cost"]').innerText()), '$0.360');

  await footer.locator('[data-testid="reply-details"]').click();
  const inspector = lastAssistant(page).locator('[data-testid="reply-inspector"]');
  const entries = inspector.locator('[data-testid="timeline-entry"]');
  await waitUntil('the inspector shows three steps', async () => (await entries.count()) === 3);
  const kinds = await entries.evaluateAll((items) => items.map((item) => item.dataset.kind));
  assert.deepEqual(kinds, ['modelCall', 'toolCall', 'modelCall']);
  assert.equal(await entries.nth(0).getAttribute('data-finish'), 'tool_calls');
  assert.equal(await entries.nth(2).getAttribute('data-finish'), 'stop');
  const first = normalize(await entries.nth(0).innerText());
  assert.match(first, /Step 1 · model call · scripted/);
  assert.match(first, /Tokens 100 in, 10 out/);
  const tool = normalize(await entries.nth(1).innerText());
  assert.match(tool, /Tool call · current_time/);
  assert.match(tool, /Allowed by the tool’s default/);
  assert.match(tool, /Output \d+ characters/);
  assert.match(normalize(await entries.nth(2).innerText()), /Tokens 200 in \(100 cached\), 20 out/);

  await footer.locator('[data-testid="reply-details"]').click();
  assert.equal(await inspector.count(), 0, 'Hide details closes the inspector');
});

e2eTest(stack, 'the usage report adds up by model and provider and exports as CSV', async () => {
  const page = await stack.openApp();
  await openUsageSettings(page);
  const report = await stack.server.api('usage_report', {});
  // The two tests before: four model calls of the testkit's `scripted` model.
  assert.equal(report.total.calls, 4);
  await waitUntil('the total shows every call', async () => normalize(await byTestId(page, 'usage-total').innerText()).includes('4 model calls'));
  await page.locator('[data-testid="usage-by-model"] tr[data-key="scripted"]').waitFor();
  await page.locator('[data-testid="usage-by-provider"] tr[data-key="Testkit"]').waitFor();
  // Days without usage draw an empty bar; today's has height.
  await page.locator('[data-testid="usage-chart"] rect.usage-chart-bar:not([height="0"])').first().waitFor();

  const link = byTestId(page, 'usage-export-csv');
  assert.match((await link.getAttribute('download')) ?? '', /^colloquy-usage-.*\.csv$/);
  const csv = decodeURIComponent(((await link.getAttribute('href')) ?? '').replace(/^data:text\/csv;charset=utf-8,/, ''));
  const lines = csv.trim().split(/\r\n/);
  assert.equal(lines[0], 'group,key,calls,input_tokens,cached_tokens,output_tokens,reasoning_tokens,cost_usd,unpriced_calls,duration_ms');
  assert.ok(lines.some((line) => line.startsWith('model,scripted,4,1800,100,530,0,2.860000,0,')), csv);
  assert.ok(lines.at(-1)?.startsWith('total,total,4,'), csv);

  // A bad period from the API is refused with the field named.
  const refused = await fetch(`${stack.server.origin}/api/usage_report`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: 'Bearer test-token-0123456789' },
    body: JSON.stringify({ from: '2026-13-01' }),
  });
  assert.equal(refused.status, 400);
  assert.equal((await refused.json()).field, 'from');
});
