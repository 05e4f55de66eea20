// Stop, then Continue: the reply keeps its text and the model goes on after it.

import assert from 'node:assert/strict';
import { addTestkitProvider, assistantMessages, assistantText, byTestId, e2eTest, lastAssistant, newTopicAndSend, normalize, useStack, waitUntil, words } from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

e2eTest(stack, 'Continue after Stop: the reply ends with the kept text followed by the continuation', async () => {
  const chunks = words(300, 'kept');
  await stack.testkit.script({ chunks, tokenDelayMs: 30 });
  const page = await stack.openApp();
  await newTopicAndSend(page, 'Count, then go on');
  await waitUntil('the reply has started', async () => (await assistantText(page)).includes('kept5'));

  await byTestId(page, 'stop-button').click();
  await lastAssistant(page).locator('[data-testid="message-stopped"]').waitFor();
  assert.equal(await lastAssistant(page).getAttribute('data-status'), 'paused');
  const kept = normalize(await assistantText(page));
  assert.ok(normalize(chunks.join('')).startsWith(kept) && kept.length > 0);

  const continuation = ['and ', 'then ', 'it ', 'went ', 'on.'];
  await stack.testkit.script({ chunks: continuation, tokenDelayMs: 30 });
  await byTestId(page, 'reply-continue').click();
  await waitUntil('the reply is stored as success', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  assert.equal(normalize(await assistantText(page)), normalize(`${kept} ${continuation.join('')}`));
  assert.equal(await assistantMessages(page).count(), 1, 'continued in place, not as a new reply');
  assert.equal(await lastAssistant(page).locator('[data-testid="message-stopped"]').count(), 0);

  // The model was asked to go on from the kept text.
  const requests = await (await fetch(new URL('/_testkit/requests', stack.testkit.url))).json();
  const last = JSON.stringify(requests.at(-1));
  assert.ok(last.includes(kept.split(' ').at(-1)), 'the continuation request carries the kept text');
});

e2eTest(stack, 'Retry while another turn of the topic runs is refused inline, saying why', async () => {
  await stack.testkit.script([
    { chunks: ['Short ', 'answer.'], tokenDelayMs: 10 },
    { chunks: words(200, 'busy'), tokenDelayMs: 30 },
  ]);
  const page = await stack.openApp();
  await newTopicAndSend(page, 'First question');
  await waitUntil('the first reply is stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  const firstTurn = page.locator('.turn').first();

  await byTestId(page, 'composer-input').fill('Second question');
  await byTestId(page, 'composer-input').press('Enter');
  await waitUntil('the second reply streams', async () => (await assistantText(page)).includes('busy3'));
  await firstTurn.locator('[data-testid="reply-retry"]').click();
  const notice = firstTurn.getByRole('alert');
  await notice.waitFor();
  assert.match(await notice.innerText(), /still streaming/i);
  assert.match(await notice.innerText(), /wait for it to finish, or stop it/i);
  assert.equal(normalize(await assistantMessages(page).first().innerText()).startsWith('Short answer.'), true, 'the first reply is untouched');
  // The running reply goes on in this window.
  const before = normalize(await assistantText(page));
  await waitUntil('the second reply keeps streaming', async () => normalize(await assistantText(page)).length > before.length);
  await byTestId(page, 'stop-button').click();
});
