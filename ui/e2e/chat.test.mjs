// Streaming, reload mid-stream and Stop against a real `colloquy serve` + scripted testkit.

import assert from 'node:assert/strict';
import {
  addTestkitProvider,
  assistantMessages,
  assistantText,
  byTestId,
  e2eTest,
  lastAssistant,
  newTopicAndSend,
  normalize,
  sleep,
  useStack,
  waitUntil,
  words,
} from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

e2eTest(stack, 'a sent message streams its reply into the assistant message', async () => {
  const chunks = words(40, 'alpha');
  await stack.testkit.script({ chunks, tokenDelayMs: 40 });
  const page = await stack.openApp();
  await newTopicAndSend(page, 'Say something');

  // Partial text while Stop is offered: the reply arrives incrementally, not at the end.
  await waitUntil('part of the reply is shown while it streams', async () => {
    const text = normalize(await assistantText(page));
    return text.length > 0 && text !== normalize(chunks.join('')) && (await byTestId(page, 'stop-button').isVisible());
  });
  await waitUntil('the whole reply is shown', async () => normalize(await assistantText(page)) === normalize(chunks.join('')));
  await waitUntil('the reply is stored as success', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  await byTestId(page, 'send-button').waitFor();
});

e2eTest(stack, 'reloading mid-stream shows the full reply exactly once', async () => {
  const chunks = words(120, 'beta');
  const full = normalize(chunks.join(''));
  await stack.testkit.script({ chunks, tokenDelayMs: 30 });
  const page = await stack.openApp();
  await newTopicAndSend(page, 'Write a long answer');
  await waitUntil('the reply has started', async () => (await assistantText(page)).includes('beta10'));

  await page.reload();
  await waitUntil('the reply finishes after the reload', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success', {
    timeout: 30_000,
  });
  assert.equal(await assistantMessages(page).count(), 1, 'exactly one assistant message');
  assert.equal(normalize(await assistantText(page)), full, 'the reply is complete, with no part repeated');
  assert.equal(await page.locator('[data-testid="message"][data-role="user"]').count(), 1);
});

e2eTest(stack, 'Stop keeps the partial reply, marks it stopped, and both survive a reload', async () => {
  const chunks = words(300, 'gamma');
  const full = normalize(chunks.join(''));
  await stack.testkit.script({ chunks, tokenDelayMs: 30 });
  const page = await stack.openApp();
  await newTopicAndSend(page, 'Count slowly');
  await waitUntil('the reply has started', async () => (await assistantText(page)).includes('gamma5'));

  await byTestId(page, 'stop-button').click();
  await lastAssistant(page).locator('[data-testid="message-stopped"]').waitFor();
  await byTestId(page, 'send-button').waitFor();
  assert.equal(await lastAssistant(page).getAttribute('data-status'), 'paused');
  const stopped = normalize(await assistantText(page));
  assert.ok(stopped.startsWith('gamma0 gamma1'), `partial text kept (got "${stopped.slice(0, 60)}")`);
  assert.ok(stopped.length < full.length, 'the reply did not run to its end');
  assert.ok(full.startsWith(stopped), 'the kept text is a prefix of the scripted reply');
  await sleep(500);
  assert.equal(normalize(await assistantText(page)), stopped, 'no text arrives after Stop');

  await page.reload();
  await lastAssistant(page).locator('[data-testid="message-stopped"]').waitFor();
  assert.equal(await lastAssistant(page).getAttribute('data-status'), 'paused');
  assert.equal(normalize(await assistantText(page)), stopped, 'the same partial text after a reload');
  assert.match(await lastAssistant(page).locator('[data-testid="message-stopped"]').innerText(), /Stopped/);
});
