// A provider configured in the UI with a wrong API key: the reply shows an inline error.

import assert from 'node:assert/strict';
import { byTestId, e2eTest, lastAssistant, newTopicAndSend, useStack, waitUntil } from './harness.mjs';

const stack = useStack({ testkit: { apiKey: 'right-key' } });

e2eTest(stack, 'onboarding form + wrong key → inline "authentication failed" error', async () => {
  const page = await stack.openApp();
  await byTestId(page, 'onboarding').waitFor();
  await byTestId(page, 'add-provider-button').click();
  await byTestId(page, 'provider-name').fill('Testkit (wrong key)');
  await byTestId(page, 'provider-base-url').fill(stack.testkit.url);
  await byTestId(page, 'provider-api-key').fill('wrong-key');
  await byTestId(page, 'provider-model').fill('scripted');
  await byTestId(page, 'provider-save').click();
  await byTestId(page, 'new-topic-button').waitFor();

  await newTopicAndSend(page, 'Hello?');
  const error = lastAssistant(page).locator('[data-testid="message-error"]');
  await error.waitFor({ timeout: 30_000 });
  assert.match(await error.innerText(), /authentication failed/i);
  await waitUntil('the reply is stored as an error', async () => (await lastAssistant(page).getAttribute('data-status')) === 'error');
  await byTestId(page, 'send-button').waitFor();
});
