// Several windows on one topic: a reply sent in one shows in the other (it attaches when
// the status feed says the topic is busy); topic statuses, the unseen badge, and
// "Open in new window".

import assert from 'node:assert/strict';
import {
  addTestkitProvider,
  assistantMessages,
  assistantText,
  byTestId,
  currentTopicId,
  e2eTest,
  lastAssistant,
  newTopicAndSend,
  normalize,
  openNewTopic,
  topicItem,
  typeAndEnter,
  useStack,
  waitUntil,
  words,
} from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

e2eTest(stack, 'two pages on one topic both see the full reply; the watching one follows it via the status feed', async () => {
  const topic = await stack.server.api('topic_create', { title: 'Shared topic' });
  const url = `${stack.server.appUrl}&topic=${topic.id}`;
  const sender = await stack.openApp(url);
  const watcher = await stack.openApp(url);
  for (const page of [sender, watcher]) {
    await byTestId(page, 'composer-input').waitFor();
    assert.equal(await currentTopicId(page), topic.id);
  }

  const chunks = words(60, 'shared');
  const full = normalize(chunks.join(''));
  await stack.testkit.script({ chunks, tokenDelayMs: 30 });
  await typeAndEnter(sender, 'Tell both windows');

  // The watcher learns of the turn from the status feed and attaches while it streams.
  await waitUntil('the watcher shows the reply while it streams', async () => {
    const text = normalize(await assistantText(watcher));
    return text.startsWith('shared0') && text !== full;
  });
  await watcher.locator('[data-testid="message"][data-role="user"]', { hasText: 'Tell both windows' }).waitFor();
  await byTestId(watcher, 'stop-button').waitFor();
  const status = topicItem(watcher, topic.id).locator('[data-testid="topic-status"]');
  assert.match((await status.getAttribute('data-status')) ?? '', /pending|streaming/);

  for (const page of [sender, watcher]) {
    await waitUntil('the reply is complete and stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
    assert.equal(normalize(await assistantText(page)), full, 'the whole reply, nothing repeated or missing');
    assert.equal(await assistantMessages(page).count(), 1);
    assert.equal(await page.locator('[data-testid="message"][data-role="user"]').count(), 1);
  }
  await waitUntil('the topic shows as done', async () => (await status.getAttribute('data-status')) === 'done');
  // Both windows were looking at the topic: nothing is left unseen.
  await waitUntil('no unseen badge', async () => (await byTestId(watcher, 'topic-unseen').count()) === 0);
});

e2eTest(stack, 'a reply that finishes while nobody looks leaves an unseen badge until the topic is opened', async () => {
  const page = await stack.openApp();
  const other = await stack.openApp();
  await stack.testkit.script({ chunks: words(40, 'later'), tokenDelayMs: 25 });
  await newTopicAndSend(page, 'Work on this in the background');
  const topicId = await currentTopicId(page);
  await waitUntil('the reply has started', async () => (await assistantText(page)).includes('later3'));

  // Look elsewhere while it finishes.
  await openNewTopic(page);

  await topicItem(other, topicId).waitFor();
  for (const view of [page, other]) {
    await topicItem(view, topicId).locator('[data-testid="topic-unseen"]').waitFor({ timeout: 20_000 });
    assert.equal(await topicItem(view, topicId).locator('[data-testid="topic-status"]').getAttribute('data-status'), 'done');
  }

  await topicItem(other, topicId).locator('button').first().click();
  await waitUntil('the reply is shown', async () => (await lastAssistant(other).getAttribute('data-status')) === 'success');
  for (const view of [other, page]) {
    await waitUntil('the badge clears in every window', async () => (await topicItem(view, topicId).locator('[data-testid="topic-unseen"]').count()) === 0);
  }
});

e2eTest(stack, '"Open in new window" opens the topic in a new tab, signed in', async () => {
  await stack.testkit.script({ chunks: ['Seen ', 'in ', 'a ', 'new ', 'tab.'], tokenDelayMs: 10 });
  const page = await stack.openApp();
  await newTopicAndSend(page, 'Open me elsewhere');
  await waitUntil('the reply is stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  const topicId = await currentTopicId(page);
  // Another topic in front, so the new tab has to pick the right one.
  await openNewTopic(page);

  const item = topicItem(page, topicId);
  await item.hover();
  const [tab] = await Promise.all([page.context().waitForEvent('page'), item.locator('[data-testid="open-in-window"]').click()]);
  stack.track(tab);
  await tab.waitForLoadState();
  assert.match(tab.url(), new RegExp(`#topic=${topicId}$`));
  assert.ok(!tab.url().includes('token='), 'the token is not in the new tab’s address');
  await tab.locator('[data-testid="message"][data-role="user"]', { hasText: 'Open me elsewhere' }).waitFor();
  await waitUntil('the reply is shown', async () => normalize(await assistantText(tab)) === 'Seen in a new tab.');
  assert.equal(await currentTopicId(tab), topicId);
});
