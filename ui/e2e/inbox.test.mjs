// The steering inbox: queue while a reply streams, and it runs as the next turn.

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
  typeAndEnter,
  useStack,
  waitUntil,
  words,
} from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

const userMessages = (page) => page.locator('[data-testid="message"][data-role="user"]');

e2eTest(stack, 'a message queued while a reply streams runs by itself as the next turn', async () => {
  const first = words(60, 'first');
  const second = ['The ', 'queued ', 'one.'];
  await stack.testkit.script([
    { chunks: first, tokenDelayMs: 30 },
    { chunks: second, tokenDelayMs: 20 },
  ]);
  const page = await stack.openApp();
  await newTopicAndSend(page, 'Start something long');
  await waitUntil('the reply streams', async () => (await assistantText(page)).includes('first3'));

  // While busy, Enter queues (and the composer says so).
  assert.match((await byTestId(page, 'composer-input').getAttribute('placeholder')) ?? '', /queue/i);
  await typeAndEnter(page, 'And then this');
  const item = byTestId(page, 'inbox-item');
  await item.waitFor();
  assert.equal(await item.getAttribute('data-state'), 'queued');
  assert.match(await item.innerText(), /And then this/);
  assert.equal(await userMessages(page).count(), 1, 'not sent yet');

  await waitUntil('the queued message became the next turn', async () => (await userMessages(page).count()) === 2, { timeout: 30_000 });
  assert.equal(await userMessages(page).last().locator('[data-testid="message-text"]').innerText(), 'And then this');
  await waitUntil('its reply is complete', async () => normalize(await assistantText(page)) === 'The queued one.', { timeout: 30_000 });
  await waitUntil('and stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  assert.equal(normalize(await assistantMessages(page).first().innerText()).includes('first59'), true, 'the first reply finished first');
  await waitUntil('the inbox is empty', async () => (await byTestId(page, 'inbox-item').count()) === 0);
  await byTestId(page, 'send-button').waitFor();
});

e2eTest(stack, 'queued messages can be reordered, edited and cancelled; after Stop they are held until "Send now"', async () => {
  // Long enough that the edits below finish before it does, even on a loaded machine.
  await stack.testkit.script({ chunks: words(1500, 'long'), tokenDelayMs: 30 });
  const page = await stack.openApp();
  await newTopicAndSend(page, 'Keep going');
  await waitUntil('the reply streams', async () => (await assistantText(page)).includes('long2'));

  for (const text of ['one', 'two', 'three']) {
    await typeAndEnter(page, text);
    await waitUntil(`"${text}" is queued`, async () => (await byTestId(page, 'inbox-item').allInnerTexts()).some((t) => t.includes(text)));
  }
  const order = async () => (await page.locator('[data-testid="inbox-item"] [data-testid="inbox-text"]').allInnerTexts()).map((t) => t.trim());
  assert.deepEqual(await order(), ['one', 'two', 'three']);

  await byTestId(page, 'inbox-item').nth(2).locator('[data-testid="inbox-up"]').click();
  await waitUntil('three moved up', async () => (await order()).join() === 'one,three,two');
  await byTestId(page, 'inbox-item').first().locator('[data-testid="inbox-down"]').click();
  await waitUntil('one moved down', async () => (await order()).join() === 'three,one,two');

  await byTestId(page, 'inbox-item').nth(1).locator('[data-testid="inbox-edit"]').click();
  await page.locator('[data-testid="inbox-item"] textarea').fill('one, edited');
  await page.locator('[data-testid="inbox-save"]').click();
  await waitUntil('the edit is saved', async () => (await order()).join() === 'three,one, edited,two');

  await byTestId(page, 'inbox-item').first().locator('[data-testid="inbox-cancel"]').click();
  await waitUntil('three is cancelled', async () => (await order()).join() === 'one, edited,two');

  // A stopped reply does not send what was queued behind it: it is held, with a note.
  await byTestId(page, 'stop-button').click();
  await waitUntil('the queue is held', async () =>
    (await Promise.all((await byTestId(page, 'inbox-item').all()).map((i) => i.getAttribute('data-state')))).every((s) => s === 'held'),
  );
  assert.match(await byTestId(page, 'inbox-item').first().innerText(), /Not sent/);
  assert.equal(await userMessages(page).count(), 1);

  await stack.testkit.script({ chunks: ['Released.'], tokenDelayMs: 10 });
  await byTestId(page, 'inbox-item').first().locator('[data-testid="inbox-release"]').click();
  await waitUntil('the released message runs', async () => (await userMessages(page).count()) === 2, { timeout: 30_000 });
  assert.equal(await userMessages(page).last().locator('[data-testid="message-text"]').innerText(), 'one, edited');
  await waitUntil('its reply is complete', async () => normalize(await assistantText(page)) === 'Released.');
  assert.deepEqual(await order(), ['two'], 'the other held message stays held');
});

e2eTest(stack, 'Interrupt stops the reply (kept as stopped) and sends at once', async () => {
  await stack.testkit.script([
    { chunks: words(400, 'busy'), tokenDelayMs: 30 },
    { chunks: ['Interrupted ', 'you.'], tokenDelayMs: 10 },
  ]);
  const page = await stack.openApp();
  await newTopicAndSend(page, 'Go on for a while');
  await waitUntil('the reply streams', async () => (await assistantText(page)).includes('busy3'));
  await byTestId(page, 'composer-input').fill('Stop, this instead');
  await byTestId(page, 'composer-interrupt').click();
  await waitUntil('the new turn is on screen', async () => (await userMessages(page).count()) === 2);
  await waitUntil('its reply is complete', async () => normalize(await assistantText(page)) === 'Interrupted you.');
  await waitUntil('and stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  const firstReply = assistantMessages(page).first();
  await waitUntil('the first reply is kept as stopped', async () => (await firstReply.getAttribute('data-status')) === 'paused');
  assert.ok(normalize(await firstReply.innerText()).startsWith('busy0'));
});
