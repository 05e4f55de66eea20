// Everything a user sees is stored: a new server process on the same data dir shows it.

import assert from 'node:assert/strict';
import { addTestkitProvider, assistantText, byTestId, e2eTest, lastAssistant, newTopicAndSend, normalize, useStack, waitUntil } from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

e2eTest(stack, 'after a server restart the topic and its messages are shown', async () => {
  const chunks = ['Stored ', 'across ', 'restarts.'];
  await stack.testkit.script({ chunks, tokenDelayMs: 20 });
  const page = await stack.openApp();
  await newTopicAndSend(page, 'Remember this');
  await waitUntil('the reply is stored as success', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  const topicId = await page.locator('[data-testid="topic-item"]').first().getAttribute('data-topic-id');
  assert.ok(topicId);
  await page.context().close();

  const server = await stack.restartServer();
  const fresh = await stack.openApp(server.appUrl);
  const topic = fresh.locator(`[data-testid="topic-item"][data-topic-id="${topicId}"]`);
  await topic.waitFor();
  await topic.locator('button').first().click();
  await fresh.locator('[data-testid="message"][data-role="user"]', { hasText: 'Remember this' }).waitFor();
  await waitUntil('the stored reply is shown', async () => normalize(await assistantText(fresh)) === normalize(chunks.join('')));
  assert.equal(await lastAssistant(fresh).getAttribute('data-status'), 'success');
  await byTestId(fresh, 'composer-input').waitFor();
});
