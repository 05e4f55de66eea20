// Anthropic- and Gemini-format providers configured through the UI (onboarding, then
// Settings), a chat with each, and the transient "retrying in N s" notice.

import assert from 'node:assert/strict';
import { assistantText, byTestId, e2eTest, lastAssistant, normalize, openNewTopic, typeAndEnter, useStack, waitUntil } from './harness.mjs';

const API_KEY = 'K-formats';
const stack = useStack({ testkit: { apiKey: API_KEY } });

const origin = () => new URL(stack.testkit.url).origin;

/** Fills the open provider form from a preset, pointed at the testkit, and saves it. */
async function addProvider(page, { preset, format, name, baseUrl }) {
  await byTestId(page, 'provider-preset').selectOption(preset);
  // The preset fills in the service's name, base URL and wire format.
  assert.equal(await byTestId(page, 'provider-format').inputValue(), format);
  assert.notEqual(await byTestId(page, 'provider-base-url').inputValue(), '');
  await byTestId(page, 'provider-name').fill(name);
  await byTestId(page, 'provider-base-url').fill(baseUrl);
  await byTestId(page, 'provider-api-key').fill(API_KEY);
  await byTestId(page, 'provider-model').fill('scripted');
  assert.equal(await byTestId(page, 'provider-format').inputValue(), format, 'editing the URL keeps the format');
  await byTestId(page, 'provider-save').click();
}

/** Opens a new topic, picks `providerName`'s model in the composer's model picker, sends `text`. */
async function chatWith(page, providerName, text) {
  const topicId = await openNewTopic(page);
  await byTestId(page, 'model-select-button').click();
  const option = page.locator('[data-testid="model-option"]', { hasText: providerName });
  const providerId = await option.getAttribute('data-provider-id');
  assert.ok(providerId, `the model picker offers ${providerName}`);
  await option.click();
  // Picked alone, it becomes the topic's model.
  await waitUntil('the topic keeps the picked model', async () => (await stack.server.api('topics_list')).topics.find((t) => t.id === topicId)?.model?.providerId === providerId);
  await typeAndEnter(page, text);
  await page.locator('[data-testid="message"][data-role="user"]').last().waitFor();
}

async function expectReply(page, chunks) {
  const expected = normalize(chunks.join(''));
  await waitUntil('the scripted reply is shown', async () => normalize(await assistantText(page)) === expected);
  await waitUntil('the reply is stored as success', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
}

e2eTest(stack, 'Anthropic- and Gemini-format providers are added in the UI and answer chats', async () => {
  const page = await stack.openApp();

  // First provider from onboarding.
  await byTestId(page, 'onboarding').waitFor();
  await byTestId(page, 'add-provider-button').click();
  await addProvider(page, { preset: 'anthropic', format: 'anthropic', name: 'Claude testkit', baseUrl: `${origin()}/v1` });
  await byTestId(page, 'composer-input').or(byTestId(page, 'new-topic-button')).first().waitFor();

  // Second provider from Settings.
  await byTestId(page, 'settings-button').click();
  await byTestId(page, 'settings').waitFor();
  await byTestId(page, 'add-provider-button').click();
  await addProvider(page, { preset: 'gemini', format: 'gemini', name: 'Gemini testkit', baseUrl: `${origin()}/v1beta` });
  await waitUntil('both providers are listed', async () => (await byTestId(page, 'provider-item').count()) === 2);
  const formats = await byTestId(page, 'provider-item-format').evaluateAll((items) => items.map((item) => item.dataset.format));
  assert.deepEqual(formats.sort(), ['anthropic', 'gemini']);
  const listed = normalize(await byTestId(page, 'settings').innerText());
  assert.match(listed, /Anthropic/);
  assert.match(listed, /Gemini/);

  // What the backend stored, not only what the page shows: both formats, both keys kept
  // (in the secret store), and no key ever sent back.
  const stored = await stack.server.api('providers_list');
  assert.ok(Array.isArray(stored), `providers_list answers a list: ${JSON.stringify(stored)}`);
  assert.deepEqual(stored.map((p) => p.format).sort(), ['anthropic', 'gemini']);
  assert.ok(stored.every((p) => p.hasApiKey), 'both keys are stored');
  assert.ok(!JSON.stringify(stored).includes(API_KEY), 'the API key never comes back from the backend');
  await byTestId(page, 'settings-close').click();

  const claude = ['Hello ', 'from ', 'the ', 'Anthropic ', 'format.'];
  await stack.testkit.script({ chunks: claude });
  await chatWith(page, 'Claude testkit', 'Hi Claude');
  await expectReply(page, claude);

  const gemini = ['Hello ', 'from ', 'the ', 'Gemini ', 'format.'];
  await stack.testkit.script({ chunks: gemini });
  await chatWith(page, 'Gemini testkit', 'Hi Gemini');
  await expectReply(page, gemini);

  // The testkit saw each format on its own route.
  const requests = await stack.testkit.requests();
  const paths = JSON.stringify(requests);
  assert.match(paths, /\/v1\/messages/);
  assert.match(paths, /streamGenerateContent/);
});

e2eTest(stack, 'a rate-limited reply shows "retrying in N s" until its text arrives', async () => {
  const page = await stack.openApp();
  const chunks = ['Answer ', 'after ', 'a ', 'retry.'];
  await stack.testkit.script([{ fault: { kind: 'status', status: 429 }, retryAfter: '2' }, { chunks }]);
  await chatWith(page, 'Claude testkit', 'Try again please');
  const notice = lastAssistant(page).locator('[data-testid="reply-retrying"]');
  await notice.waitFor();
  assert.match(await notice.innerText(), /Retrying (in \d+ s|now)/);
  await expectReply(page, chunks);
  assert.equal(await notice.count(), 0, 'the notice is gone once the text arrives');
  // Transient: not part of the stored message after a reload either.
  await page.reload();
  await waitUntil('the reply is shown after a reload', async () => normalize(await assistantText(page)) === normalize(chunks.join('')));
  assert.equal(await byTestId(page, 'reply-retrying').count(), 0);
});
