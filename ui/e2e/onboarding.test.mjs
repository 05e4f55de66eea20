// First run in a browser: the token page takes a pasted token (checked against the
// server, remembered like the printed link's), and saving the first provider lands the
// user in a new topic with the cursor in the composer.

/* global window, document, getComputedStyle -- used in functions that run in the page */

import assert from 'node:assert/strict';
import { byTestId, currentTopicId, e2eTest, lastAssistant, TOKEN, topicItem, useStack, waitUntil } from './harness.mjs';

const stack = useStack();

const storedToken = (page) => page.evaluate(() => window.localStorage.getItem('colloquy.token'));

e2eTest(stack, 'the token page takes a pasted token: a wrong one is refused in words, the right one is remembered', async () => {
  const page = await stack.openApp(`${stack.server.origin}/`);
  await byTestId(page, 'token-screen').waitFor();
  const input = byTestId(page, 'token-input');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'token-input', 'ready to paste');

  await input.fill('not-the-token');
  await byTestId(page, 'token-submit').click();
  const error = byTestId(page, 'token-error');
  await error.waitFor();
  assert.match(await error.innerText(), /The server did not accept this token/);
  assert.equal(await storedToken(page), null, 'a refused token is not kept');

  // The whole printed link works as well as the token alone.
  await input.fill(`${stack.server.origin}/#token=${TOKEN}`);
  await byTestId(page, 'token-submit').click();
  await byTestId(page, 'onboarding').waitFor();
  assert.equal(await storedToken(page), TOKEN);
  assert.ok(!page.url().includes(TOKEN), 'the token is not left in the address');

  // Remembered: a new visit without the token goes straight in.
  await page.goto(`${stack.server.origin}/`);
  await byTestId(page, 'onboarding').waitFor();
  assert.equal(await byTestId(page, 'token-screen').count(), 0);
});

e2eTest(stack, 'saving the first provider lands in a new topic with the composer focused', async () => {
  const page = await stack.openApp();
  await byTestId(page, 'onboarding').waitFor();
  await byTestId(page, 'add-provider-button').click();
  await byTestId(page, 'provider-name').fill('Testkit');
  await byTestId(page, 'provider-base-url').fill(stack.testkit.url);
  await byTestId(page, 'provider-model').fill('scripted');
  await byTestId(page, 'provider-save').click();

  await byTestId(page, 'composer-input').waitFor();
  const topicId = await currentTopicId(page);
  await topicItem(page, topicId).waitFor();
  assert.match((await topicItem(page, topicId).getAttribute('class')) ?? '', /selected/);
  await waitUntil('the composer has the focus', async () => (await page.evaluate(() => document.activeElement?.dataset.testid)) === 'composer-input');
  const border = () => page.locator('form.composer').evaluate((form) => getComputedStyle(form).borderTopColor);
  const focusedBorder = await border();

  // Typing goes straight into it.
  await stack.testkit.script({ chunks: ['Welcome.'] });
  await page.keyboard.type('Hello there');
  await page.keyboard.press('Enter');
  await waitUntil('the reply is stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  assert.equal((await stack.server.api('topics_list')).topics.length, 1, 'one topic, the one the user landed in');
  // The accent border the user saw was the composer's focus.
  await page.evaluate(() => document.activeElement?.blur());
  assert.notEqual(await border(), focusedBorder);
});
