// One message, two models: replies side by side (columns when wide, tabs when narrow);
// a reply keeps streaming while another tab is selected; retry one model in place.

import assert from 'node:assert/strict';
import { addNamedTestkitProvider, byTestId, e2eTest, normalize, openNewTopic, replyText, sleep, typeAndEnter, useStack, waitUntil, words } from './harness.mjs';

const stack = useStack({
  setup: async ({ server, testkit }) => {
    await addNamedTestkitProvider(server, testkit, 'Alpha', 'alpha');
    await addNamedTestkitProvider(server, testkit, 'Beta', 'beta');
  },
});

/** Selects `beta` in the composer's model picker, next to the default `alpha`. */
async function alsoAskBeta(page) {
  const picker = byTestId(page, 'model-select');
  await picker.locator('button').first().click();
  await picker.locator('input[data-model="beta"]').check();
  await page.keyboard.press('Escape');
  await waitUntil('both models are chosen', async () => (await picker.innerText()).includes('alpha + beta'));
}

const column = (page, model) => page.locator(`[data-testid="model-column"][data-model="${model}"]`);
const tab = (page, model) => page.locator(`[data-testid="model-tab"][data-model="${model}"]`);

e2eTest(stack, 'narrow window: a tab that is not selected keeps streaming, and both replies end complete', async () => {
  // The two executions ask the testkit at about the same time, so either may get either
  // script: both are long enough to switch tabs while they stream.
  const scripts = [words(80, 'left'), words(80, 'right')];
  await stack.testkit.script(scripts.map((chunks) => ({ chunks, tokenDelayMs: 30 })));
  const expected = scripts.map((chunks) => normalize(chunks.join(''))).sort();

  const page = await stack.openApp(undefined, { viewport: { width: 760, height: 900 } });
  await openNewTopic(page);
  await alsoAskBeta(page);
  await typeAndEnter(page, 'Answer side by side');

  await waitUntil('two tabs', async () => (await byTestId(page, 'model-tab').count()) === 2);
  await tab(page, 'alpha').click();
  assert.equal(await tab(page, 'alpha').getAttribute('aria-selected'), 'true');
  assert.equal(await tab(page, 'beta').getAttribute('aria-selected'), 'false');
  assert.ok(await column(page, 'alpha').isVisible());
  assert.ok(!(await column(page, 'beta').isVisible()), 'narrow: one reply at a time');

  // Beta's reply, hidden behind its tab, grows while alpha's is shown.
  await waitUntil('beta has started', async () => (await replyText(column(page, 'beta'))).length > 0);
  const before = await replyText(column(page, 'beta'));
  await sleep(600);
  const hiddenGrowth = await replyText(column(page, 'beta'));
  assert.ok(hiddenGrowth.length > before.length, `beta kept streaming while hidden ("${before}" → "${hiddenGrowth}")`);
  assert.ok(!expected.includes(hiddenGrowth), 'beta is still streaming when we switch');

  await tab(page, 'beta').click();
  assert.ok(await column(page, 'beta').isVisible());
  assert.ok(!(await column(page, 'alpha').isVisible()));
  const shown = normalize(await column(page, 'beta').locator('[data-testid="message-text"]').innerText());
  assert.ok(shown.startsWith(hiddenGrowth), 'what streamed while hidden is all there');
  await waitUntil('beta grows on screen', async () => normalize(await column(page, 'beta').innerText()).length > shown.length);

  for (const model of ['alpha', 'beta']) {
    await waitUntil(`${model} is stored as success`, async () => (await column(page, model).locator('[data-testid="message"]').getAttribute('data-status')) === 'success', {
      timeout: 30_000,
    });
  }
  const finals = [await replyText(column(page, 'alpha')), await replyText(column(page, 'beta'))].sort();
  assert.deepEqual(finals, expected, 'each reply is exactly one full script');
  assert.ok((await column(page, 'alpha').getAttribute('data-execution-id')) !== (await column(page, 'beta').getAttribute('data-execution-id')));
});

e2eTest(stack, 'wide window: replies as columns side by side; retrying one model rewrites only its column', async () => {
  await stack.testkit.script([
    { chunks: ['First ', 'answer.'], tokenDelayMs: 10 },
    { chunks: ['Second ', 'answer.'], tokenDelayMs: 10 },
  ]);
  const page = await stack.openApp();
  await openNewTopic(page);
  await alsoAskBeta(page);
  await typeAndEnter(page, 'Both of you');
  for (const model of ['alpha', 'beta']) {
    await waitUntil(`${model} done`, async () => (await column(page, model).locator('[data-testid="message"]').getAttribute('data-status')) === 'success');
  }
  assert.ok(!(await byTestId(page, 'model-tab').first().isVisible()), 'no tabs on a wide window');
  // Measured until it holds: under load the columns can be caught mid-layout, in the
  // frame after the second status lands.
  await waitUntil('columns side by side', async () => {
    const [a, b] = [await column(page, 'alpha').boundingBox(), await column(page, 'beta').boundingBox()];
    return a && b && Math.abs(a.y - b.y) < 2 && b.x >= a.x + a.width;
  }, { timeout: 5_000 });
  const betaBefore = await replyText(column(page, 'beta'));

  await stack.testkit.script({ chunks: ['Retried ', 'alpha.'], tokenDelayMs: 10 });
  await column(page, 'alpha').locator('[data-testid="reply-retry"]').click();
  await waitUntil('alpha is rewritten', async () => (await replyText(column(page, 'alpha'))) === 'Retried alpha.');
  await waitUntil('alpha is stored', async () => (await column(page, 'alpha').locator('[data-testid="message"]').getAttribute('data-status')) === 'success');
  assert.equal(await replyText(column(page, 'beta')), betaBefore, 'beta is untouched');
  assert.equal(await byTestId(page, 'model-column').count(), 2);

  // Every model already answers: asking one of them again is not offered.
  await byTestId(page, 'add-model-button').click();
  assert.equal(await page.locator('[data-testid="add-model-option"]:not([disabled])').count(), 0);
});

e2eTest(stack, "Stop on one model's column stops that reply only; Retry all writes both again", async () => {
  // Whichever execution gets which script, both are long enough to stop one mid-way.
  await stack.testkit.script([{ chunks: words(60, 'first'), tokenDelayMs: 40 }, { chunks: words(60, 'second'), tokenDelayMs: 40 }]);
  const page = await stack.openApp();
  await openNewTopic(page);
  await alsoAskBeta(page);
  await typeAndEnter(page, 'Two answers, one stopped');

  await waitUntil('beta is writing', async () => (await replyText(column(page, 'beta'))).length > 0);
  await column(page, 'beta').locator('[data-testid="model-column-stop"]').click();
  await waitUntil('beta is stopped', async () => (await column(page, 'beta').locator('[data-testid="message"]').getAttribute('data-status')) === 'paused');
  // The stored state follows the stream's terminal: wait for the column to settle, not read it once.
  await column(page, 'beta').locator('[data-testid="model-column-stop"]').waitFor({ state: 'detached' });
  await column(page, 'beta').locator('[data-testid="reply-continue"]').waitFor(); // the stopped reply can go on
  // Alpha goes on to its end.
  await waitUntil('alpha finishes', async () => (await column(page, 'alpha').locator('[data-testid="message"]').getAttribute('data-status')) === 'success', {
    timeout: 30_000,
  });
  const alphaText = await replyText(column(page, 'alpha'));
  assert.ok(alphaText.split(' ').length >= 60, `alpha wrote its whole reply (${alphaText.length} characters)`);

  // Click once both columns show their stored state (the history is read again after the
  // turn ends, and the turn is drawn again with it).
  for (const model of ['alpha', 'beta']) await column(page, model).locator('[data-testid="reply-retry"]').waitFor();
  await stack.testkit.script([{ chunks: ['again one'] }, { chunks: ['again two'] }]);
  await byTestId(page, 'turn-retry-all').click();
  for (const model of ['alpha', 'beta']) {
    await waitUntil(`${model} has a second version`, async () => {
      const versions = column(page, model).locator('[data-testid="version-switcher"]');
      return (await versions.count()) > 0 && normalize(await versions.innerText()).includes('2/2');
    });
    await waitUntil(`${model} is written again`, async () => (await replyText(column(page, model))).startsWith('again'));
  }
});

e2eTest(stack, 'a message queued while a reply streams keeps the models picked for it and runs side by side', async () => {
  await stack.testkit.script([{ chunks: words(60, 'long'), tokenDelayMs: 30 }]);
  const page = await stack.openApp();
  await openNewTopic(page);
  await typeAndEnter(page, 'One answer first');
  const replies = page.locator('[data-testid="message"][data-role="assistant"]');
  await waitUntil('the first reply streams', async () => (await replyText(replies.first())).includes('long3'));

  // Picked while the reply streams: the queued message goes to both, the running one is untouched.
  await alsoAskBeta(page);
  await stack.testkit.script([{ chunks: ['queued ', 'one'] }, { chunks: ['queued ', 'two'] }]);
  await typeAndEnter(page, 'Then both of you');
  const item = byTestId(page, 'inbox-item');
  await item.waitFor();
  assert.equal(normalize(await item.locator('[data-testid="inbox-models"]').innerText()), '→ alpha + beta');

  await waitUntil('the queued message ran with two columns', async () => (await byTestId(page, 'model-column').count()) === 2, { timeout: 30_000 });
  for (const model of ['alpha', 'beta']) {
    await waitUntil(`${model} answered the queued message`, async () => (await column(page, model).locator('[data-testid="message"]').getAttribute('data-status')) === 'success', {
      timeout: 30_000,
    });
    assert.match(await replyText(column(page, model)), /^queued (one|two)$/);
  }
  await waitUntil('the inbox is empty', async () => (await byTestId(page, 'inbox-item').count()) === 0);
});
