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
  const requests = await stack.testkit.requests();
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

e2eTest(stack, 'A reply cut at the length limit says so, and Continue finishes it in place', async () => {
  const first = ['The ', 'first ', 'half'];
  await stack.testkit.script({ chunks: first, finish: 'length' });
  const page = await stack.openApp();
  await newTopicAndSend(page, 'A long answer, please');
  const marker = lastAssistant(page).locator('[data-testid="message-stopped"]');
  await marker.waitFor();
  assert.equal(await marker.getAttribute('data-reason'), 'length');
  assert.match(await marker.innerText(), /length limit/i);
  assert.match(await marker.innerText(), /Continue/);
  assert.equal(await lastAssistant(page).getAttribute('data-status'), 'success', 'done as far as it went, not an error');
  assert.equal(normalize(await assistantText(page)), normalize(first.join('')));
  // Still marked after a reload: the reason is stored, not a live-only notice.
  await page.reload();
  await marker.waitFor();

  const rest = [' and ', 'the second.'];
  await stack.testkit.script({ chunks: rest });
  await byTestId(page, 'reply-continue').click();
  await waitUntil('the continued reply ends normally', async () => (await marker.count()) === 0 && (await assistantText(page)).includes('second'));
  assert.equal(normalize(await assistantText(page)), normalize(`${first.join('')}${rest.join('')}`));
  assert.equal(await assistantMessages(page).count(), 1, 'continued in place, not as a new reply');
});

e2eTest(stack, "A reply the provider's content filter stopped keeps its text and says to rephrase", async () => {
  await stack.testkit.script({ chunks: ['Here is how ', 'you'], finish: 'contentFilter' });
  const page = await stack.openApp();
  await newTopicAndSend(page, 'Something borderline');
  const error = lastAssistant(page).locator('[data-testid="message-error"]');
  await error.waitFor();
  assert.equal(await error.getAttribute('data-code'), 'content_filtered');
  assert.match(await error.innerText(), /content filter/i);
  assert.match(await error.innerText(), /rephrase/i);
  await waitUntil('the reply is stored as an error', async () => (await lastAssistant(page).getAttribute('data-status')) === 'error');
  assert.equal(normalize(await assistantText(page)), 'Here is how you');
  assert.equal(await byTestId(page, 'reply-continue').count(), 0, 'nothing to continue: the filter would stop it again');
});
