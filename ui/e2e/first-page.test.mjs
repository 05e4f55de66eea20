// Opening a topic by its address reads its history once: the status feed's first
// snapshot does not make the open topic read its first page again, while a real change of
// its path (here a reply deleted through the API, as another window would) still does.

import assert from 'node:assert/strict';
import { TOKEN, addTestkitProvider, byTestId, e2eTest, useStack, waitUntil } from './harness.mjs';
import { seedTopic } from './seed.mjs';

const TURNS = 30;

let topicId;
const stack = useStack({
  setup: async ({ server, testkit }) => {
    const provider = await addTestkitProvider(server, testkit);
    topicId = await seedTopic(server, { title: 'Read once', turns: TURNS, model: { providerId: provider.id, model: 'scripted' } });
  },
});

e2eTest(stack, 'a topic opened by its address reads its first page once, and again only when its path changes', async () => {
  const context = await stack.browser.newContext({ viewport: { width: 1200, height: 800 } });
  const page = await context.newPage();
  stack.track(page);
  const firstPageReads = [];
  let feedAnswered = false;
  page.on('request', (request) => {
    if (!request.url().endsWith('/api/messages_page')) return;
    const body = JSON.parse(request.postData() ?? '{}');
    if (body.topicId === topicId && body.before === undefined) firstPageReads.push(body);
  });
  page.on('response', (response) => {
    if (response.url().endsWith('/api/status_subscribe')) feedAnswered = true;
  });
  await page.goto(`${stack.server.origin}/#token=${TOKEN}&topic=${topicId}`);

  const lastReply = page.locator('[data-testid="message"][data-role="assistant"]').last();
  await waitUntil('the last reply is on screen', async () => (await lastReply.textContent())?.includes(`Answer ${TURNS - 1}`));
  await byTestId(page, 'composer-input').waitFor();
  // The feed's snapshot is its first event; the change below arrives after it on the same feed.
  await waitUntil('the status feed answered', () => feedAnswered);
  assert.equal(firstPageReads.length, 1, `first-page reads: ${JSON.stringify(firstPageReads)}`);

  // Another window deletes the last reply: the path changed, the open topic reads again.
  const { messages } = await stack.server.api('messages_page', { topicId });
  const last = messages.at(-1);
  assert.equal(last.message.role, 'assistant');
  await stack.server.api('message_delete', { topicId, messageId: last.id });
  await waitUntil('the deleted reply is gone from the view', async () => {
    const text = (await lastReply.textContent()) ?? '';
    return !text.includes(`Answer ${TURNS - 1}`) && text.includes(`Answer ${TURNS - 2}`);
  });

  // Once as the page loaded, once for the change: not a third time for the feed's snapshot.
  assert.equal(firstPageReads.length, 2, `first-page reads: ${JSON.stringify(firstPageReads)}`);
});
