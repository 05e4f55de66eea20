// The composer's edges: one model picker that says where the next message goes (and the
// topic keeps a model picked alone), the warning for an image a model cannot see, what
// Steer and Queue do in a plain chat, and "New topic" leaving no empty topic behind.

import assert from 'node:assert/strict';
import {
  addNamedTestkitProvider,
  assistantText,
  byTestId,
  currentTopicId,
  e2eTest,
  lastAssistant,
  normalize,
  openNewTopic,
  setTopicWorkspace,
  tempWorkspace,
  testkitRequests,
  topicItem,
  typeAndEnter,
  useStack,
  waitUntil,
  words,
} from './harness.mjs';

const stack = useStack({
  setup: async ({ server, testkit }) => {
    await addNamedTestkitProvider(server, testkit, 'Alpha', 'alpha');
    await addNamedTestkitProvider(server, testkit, 'Beta', 'beta');
    // A model the user marked as seeing images (the testkit answers any model).
    await server.api('provider_create', {
      name: 'Seer',
      baseUrl: testkit.url,
      models: ['seer'],
      defaultModel: 'seer',
      capabilities: { seer: { tools: true, reasoning: false, vision: true } },
    });
  },
});

// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

const picker = (page) => byTestId(page, 'model-select');
const summary = async (page) => normalize(await picker(page).locator('.model-select-summary').innerText());

/** Opens the picker and clicks a model: it alone answers the next message. */
async function pickOnly(page, model) {
  await byTestId(page, 'model-select-button').click();
  await page.locator(`[data-testid="model-option"][data-model="${model}"]`).click();
  await waitUntil(`${model} is picked`, async () => (await summary(page)) === model);
}

/** The chat requests whose last user message is `text`, with the model each went to. */
async function askedModels(text) {
  const requests = (await testkitRequests(stack.testkit)).filter((r) => JSON.stringify(r.body.messages?.at(-1) ?? '').includes(text));
  return requests.map((r) => r.body.model).sort();
}

async function replyStored(page) {
  await waitUntil('the reply is stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
}

e2eTest(stack, 'one model picker, in the composer: a model picked alone is kept by the topic, several answer side by side', async () => {
  const page = await stack.openApp();
  const topicId = await openNewTopic(page);
  // No second picker in the header that could say something else.
  assert.equal(await page.locator('.chat-header select').count(), 0);
  assert.equal(await page.locator('[data-testid="model-select"]').count(), 1);
  assert.equal(await summary(page), 'alpha', "the first provider's default");
  assert.equal(await picker(page).getAttribute('data-source'), 'default');

  // Picked alone: the topic's model, kept across a reload, and what the message goes to.
  await pickOnly(page, 'beta');
  await waitUntil('the topic keeps beta', async () => (await stack.server.api('topics_list')).topics.find((t) => t.id === topicId)?.model?.model === 'beta');
  await page.reload();
  await waitUntil('beta is still picked after a reload', async () => (await summary(page)) === 'beta');
  assert.equal(await picker(page).getAttribute('data-source'), 'topic');
  await stack.testkit.script({ chunks: ['From beta.'] });
  await typeAndEnter(page, 'Which model? (one)');
  await replyStored(page);
  assert.deepEqual(await askedModels('Which model? (one)'), ['beta']);

  // A second model ticked: both answer, and the picker says queued messages keep the topic's.
  await byTestId(page, 'model-select-button').click();
  await picker(page).locator('input[data-model="alpha"]').check();
  await waitUntil('both are picked', async () => (await summary(page)) === 'beta + alpha');
  assert.equal(await picker(page).getAttribute('data-source'), 'picked');
  assert.match(await byTestId(page, 'model-select-note').innerText(), /Queued messages and other windows use the topic's model \(beta\)/);
  await page.keyboard.press('Escape');
  await stack.testkit.script([{ chunks: ['One.'] }, { chunks: ['Two.'] }]);
  await typeAndEnter(page, 'Which model? (two)');
  await waitUntil('two replies are stored', async () => {
    const statuses = await page.locator('[data-testid="model-column"] [data-testid="message"]').evaluateAll((rows) => rows.map((r) => r.dataset.status));
    return statuses.length === 2 && statuses.every((s) => s === 'success');
  });
  assert.deepEqual(await askedModels('Which model? (two)'), ['alpha', 'beta']);
  assert.equal((await stack.server.api('topics_list')).topics.find((t) => t.id === topicId).model.model, 'beta', 'several models are not saved as the topic’s');
});

e2eTest(stack, "the topic's assistant chooses the models, and the picker says so", async () => {
  const [alpha] = (await stack.server.api('providers_list')).filter((p) => p.name === 'Alpha');
  await stack.server.api('assistant_create', { name: 'Pair', systemPrompt: '', models: [{ providerId: alpha.id, model: 'alpha' }] });
  const page = await stack.openApp();
  await openNewTopic(page);
  await pickOnly(page, 'beta');
  await byTestId(page, 'topic-settings-button').click();
  await byTestId(page, 'topic-assistant').selectOption({ label: 'Pair' });
  await byTestId(page, 'topic-assistant-name').waitFor();
  await page.keyboard.press('Escape');
  // The assistant's choice replaces the topic's model, in the one place that says it.
  await waitUntil("the assistant's model is shown", async () => (await summary(page)) === 'alpha');
  assert.equal(await picker(page).getAttribute('data-source'), 'assistant');
  await byTestId(page, 'model-select-button').click();
  assert.match(await byTestId(page, 'model-select-note').innerText(), /Chosen by the assistant Pair/);
  await page.keyboard.press('Escape');
  await stack.testkit.script({ chunks: ['Pair speaking.'] });
  await typeAndEnter(page, 'Which model? (assistant)');
  await replyStored(page);
  assert.deepEqual(await askedModels('Which model? (assistant)'), ['alpha']);
});

e2eTest(stack, 'an image for a model that cannot see images: the composer warns and says what the model gets', async () => {
  const page = await stack.openApp();
  await openNewTopic(page);
  await pickOnly(page, 'alpha');
  await byTestId(page, 'attach-input').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: PNG });
  const warning = byTestId(page, 'composer-vision-warning');
  await warning.waitFor();
  assert.ok(await warning.isVisible());
  const text = normalize(await warning.innerText());
  assert.match(text, /alpha cannot see images: instead of dot\.png, it is sent only a note such as “\[dot\.png was attached, but this model cannot see images\]”/);

  // A model that sees images: no warning; with both, the warning names only the blind one.
  await pickOnly(page, 'seer');
  await warning.waitFor({ state: 'detached' });
  await byTestId(page, 'model-select-button').click();
  await picker(page).locator('input[data-model="alpha"]').check();
  await page.keyboard.press('Escape');
  await warning.waitFor();
  assert.match(normalize(await warning.innerText()), /^alpha cannot see images.*seer gets the image\./);

  // What the warning says is what is sent.
  await stack.testkit.script([{ chunks: ['Seen.'] }, { chunks: ['Told.'] }]);
  await byTestId(page, 'composer-input').fill('What is in the picture?');
  await byTestId(page, 'send-button').click();
  await warning.waitFor({ state: 'detached' });
  const requests = await waitUntil('both models were asked', async () => {
    const asked = (await testkitRequests(stack.testkit)).filter((r) => JSON.stringify(r.body).includes('What is in the picture?'));
    return asked.length === 2 ? asked : undefined;
  });
  // A message's content is a string, or parts when it has more than text.
  const parts = (model) => {
    const content = requests.find((r) => r.body.model === model).body.messages.at(-1).content;
    return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  };
  assert.ok(parts('seer').some((part) => part.type === 'image_url'), 'seer gets the image');
  assert.ok(!parts('alpha').some((part) => part.type === 'image_url'), 'alpha gets no image');
  assert.ok(
    parts('alpha').some((part) => part.type === 'text' && part.text.includes('[dot.png was attached, but this model cannot see images]')),
    JSON.stringify(parts('alpha')),
  );
});

e2eTest(stack, 'Steer in a plain chat says it can only go after the reply, then goes first', async () => {
  const page = await stack.openApp();
  await openNewTopic(page);
  await pickOnly(page, 'alpha');
  await stack.testkit.reset();
  await stack.testkit.script([
    { chunks: words(120, 'plain'), tokenDelayMs: 30 },
    { chunks: ['Steered ', 'answer.'] },
    { chunks: ['Queued ', 'answer.'] },
  ]);
  await typeAndEnter(page, 'Talk for a while');
  await waitUntil('the reply streams', async () => (await assistantText(page)).includes('plain3'));

  // Queue first, then Steer: the steering message goes ahead of it.
  await typeAndEnter(page, 'queued one');
  await byTestId(page, 'inbox-item').waitFor();
  await byTestId(page, 'composer-input').fill('steered one');
  const hint = byTestId(page, 'composer-steer-hint');
  await hint.waitFor();
  assert.equal(await hint.getAttribute('data-steer'), 'after-reply');
  assert.match(normalize(await hint.innerText()), /Queue: .*when the reply ends.*Steer: this reply has called no tool, so it has no step to stop at/);
  assert.match(await byTestId(page, 'composer-steer').getAttribute('title'), /no step to stop at/);
  assert.match(await byTestId(page, 'composer-queue').getAttribute('title'), /when the reply ends/);
  await byTestId(page, 'composer-steer').click();
  const steering = page.locator('[data-testid="inbox-item"][data-mode="steer"]');
  await steering.waitFor();
  assert.ok(await steering.locator('[data-testid="inbox-steer-waits"]').isVisible());
  assert.match(await steering.innerText(), /Waits for the reply to end/);

  // The reply is not cut short: it ends, then the steering message runs, then the queued one.
  const first = page.locator('[data-testid="message"][data-role="assistant"]').first();
  await waitUntil('the first reply ran to its end', async () => (await first.getAttribute('data-status')) === 'success', { timeout: 30_000 });
  assert.ok(normalize(await first.innerText()).includes('plain119'));
  assert.equal(await first.locator('[data-testid="message-steered"]').count(), 0);
  const users = page.locator('[data-testid="message"][data-role="user"] [data-testid="message-text"]');
  await waitUntil('both ran', async () => (await users.count()) === 3, { timeout: 30_000 });
  assert.deepEqual((await users.allInnerTexts()).map((t) => t.trim()), ['Talk for a while', 'steered one', 'queued one']);
});

e2eTest(stack, 'Steer once the reply has called a tool: it can stop after the next one', async () => {
  const page = await stack.openApp();
  await openNewTopic(page);
  await pickOnly(page, 'alpha');
  await stack.testkit.reset();
  await stack.testkit.script([
    { chunks: [], toolCalls: [{ name: 'current_time', arguments: '{}' }] },
    { chunks: words(150, 'after'), tokenDelayMs: 30 },
  ]);
  await typeAndEnter(page, 'What time is it, at length?');
  await waitUntil('the reply streams after its tool call', async () => (await assistantText(page)).includes('after3'));
  await byTestId(page, 'composer-input').fill('a thought');
  const hint = byTestId(page, 'composer-steer-hint');
  await hint.waitFor();
  assert.equal(await hint.getAttribute('data-steer'), 'next-step');
  assert.match(normalize(await hint.innerText()), /stops after the results of its next tool call/);
  await byTestId(page, 'stop-button').click();
  await byTestId(page, 'send-button').waitFor();
});

e2eTest(stack, '"New topic" then leaving it without sending leaves no empty topic behind', async () => {
  const page = await stack.openApp();
  const empty = await openNewTopic(page);
  const next = await openNewTopic(page);
  await waitUntil('the untouched topic is gone from the list', async () => (await topicItem(page, empty).count()) === 0);
  await waitUntil('and from the backend', async () => !(await stack.server.api('topics_list')).topics.some((t) => t.id === empty));
  assert.equal(await currentTopicId(page), next, 'the new topic stays open');
  assert.equal(await topicItem(page, next).getAttribute('class').then((c) => c.includes('selected')), true);

  // A topic with a message stays.
  await stack.testkit.script({ chunks: ['Kept.'] });
  await typeAndEnter(page, 'Keep this topic');
  await replyStored(page);
  // So does one the user set up (a workspace), even with nothing sent.
  const setUp = await openNewTopic(page);
  await setTopicWorkspace(page, await tempWorkspace());
  const last = await openNewTopic(page);
  // Leaving by clicking another topic in the list removes an untouched one too.
  await topicItem(page, next).locator('button').first().click();
  await waitUntil('the last untouched topic is gone', async () => (await topicItem(page, last).count()) === 0);
  assert.equal(await currentTopicId(page), next);
  const listed = (await stack.server.api('topics_list')).topics.map((t) => t.id);
  assert.ok(listed.includes(next) && listed.includes(setUp), 'the used topics stay');
  assert.ok(!listed.includes(empty) && !listed.includes(last));
});

e2eTest(stack, 'typing right after New topic (Ctrl+Shift+O) never writes into the topic shown before it', async () => {
  const page = await stack.openApp();
  const first = await openNewTopic(page);
  const composer = byTestId(page, 'composer-input');
  await composer.click();
  // The backend answers `topic_create` late, as on a busy machine.
  let release;
  const held = new Promise((resolve) => (release = resolve));
  await page.route('**/api/topic_create', async (route) => {
    await held;
    await route.continue();
  });
  // The shortcut, so the focus stays in the composer shown (a click would move it to the button).
  await page.keyboard.press('Control+Shift+O');
  await page.keyboard.type('meant for the new topic');
  assert.equal(await composer.inputValue(), '', 'the topic shown before took no text');
  assert.equal(await currentTopicId(page), first);
  release();
  await waitUntil('the new topic is open', async () => (await currentTopicId(page)) !== first);
  await page.unroute('**/api/topic_create');
  // Its message box has the focus: typing now goes there.
  await waitUntil('the new composer has the focus', () => composer.evaluate((el) => el === el.ownerDocument.activeElement));
  await page.keyboard.type('hello');
  assert.equal(await composer.inputValue(), 'hello');
});
