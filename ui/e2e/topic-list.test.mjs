// Opening the app reads the topic list and the agent sessions once: the status feed's
// first snapshot, which lists every finished topic, does not make them read again. Each
// list is read again when another window changes it (a topic created or deleted, a session
// deleted, a first message naming a topic), and only then.

import assert from 'node:assert/strict';
import { addTestkitProvider, e2eTest, openNewTopic, tempWorkspace, topicItem, typeAndEnter, useStack, waitUntil } from './harness.mjs';
import { seedTopic } from './seed.mjs';

const FINISHED_TOPICS = 4;

let seeded = [];
let session;
const stack = useStack({
  setup: async (stack) => {
    const provider = await addTestkitProvider(stack.server, stack.testkit);
    const model = { providerId: provider.id, model: 'scripted' };
    for (let i = 0; i < FINISHED_TOPICS; i += 1) seeded.push(await seedTopic(stack.server, { title: `Finished ${i}`, turns: 2, model }));
    session = await stack.server.api('agent_session_create', { workspace: await tempWorkspace(), title: 'Kept session' });
    // Started again, the backend knows every topic's last turn as finished: the feed's
    // first snapshot lists them all (what used to make a window read its lists twice).
    await stack.restartServer();
  },
});

/**
 * Counts the page's reads of `topics_list` and `agent_sessions_list`, keeps the newest
 * list version a topics answer carried, and sees the status feed answer.
 */
function watchReads(page) {
  const reads = { topics: 0, sessions: 0, topicsVersion: -1, feedAnswered: false };
  page.on('request', (request) => {
    if (request.url().endsWith('/api/topics_list')) reads.topics += 1;
    if (request.url().endsWith('/api/agent_sessions_list')) reads.sessions += 1;
  });
  page.on('response', async (response) => {
    if (response.url().endsWith('/api/status_subscribe')) reads.feedAnswered = true;
    if (response.url().endsWith('/api/topics_list')) {
      const { version } = await response.json();
      reads.topicsVersion = Math.max(reads.topicsVersion, version.version);
    }
  });
  return reads;
}

e2eTest(stack, 'the lists are read once on opening, and again only when another window changes them', async () => {
  const context = await stack.browser.newContext({ viewport: { width: 1200, height: 800 } });
  const page = await context.newPage();
  stack.track(page);
  const reads = watchReads(page);
  await page.goto(stack.server.appUrl);
  await waitUntil('every finished topic is listed', async () => (await page.locator('[data-testid="topic-item"]').count()) === FINISHED_TOPICS);
  await waitUntil('the status feed answered', () => reads.feedAnswered);
  await waitUntil('the finished topics show their status', async () => (await page.locator('[data-testid="topic-item"] [data-testid="topic-status"][data-status="done"]').count()) === FINISHED_TOPICS);
  assert.deepEqual([reads.topics, reads.sessions], [1, 1], 'each list read once on opening');

  // Another window makes a topic: it appears here after one more read of the topics alone.
  const other = await stack.openApp();
  const made = await openNewTopic(other);
  await topicItem(page, made).waitFor();
  // The snapshot came before this change on the same feed: a read it caused would have happened by now.
  assert.deepEqual([reads.topics, reads.sessions], [2, 1], 'one more read of the topics for the topic made elsewhere');

  // Another window deletes a topic: gone here after one more read.
  await stack.server.api('topic_delete', { topicId: seeded[0] });
  await waitUntil('the deleted topic is gone', async () => (await topicItem(page, seeded[0]).count()) === 0);
  assert.deepEqual([reads.topics, reads.sessions], [3, 1], 'one more read of the topics for the deletion');

  // The other window's first message names its topic: the title shows here too.
  await typeAndEnter(other, 'Plan the trip to the coast');
  await waitUntil('the first message names the topic here', async () => (await topicItem(page, made).textContent())?.includes('Plan the trip to the coast'));
  assert.equal(reads.sessions, 1, 'a chat topic changing reads no agent session');
  // Its turn, stored once the reply is on its way, moved it up too (a second change):
  // wait for the read that saw the last one.
  await other.locator('[data-testid="message"][data-role="assistant"]').first().waitFor();
  const { version } = await stack.server.api('topics_list');
  await waitUntil('the topics read saw every change', () => reads.topicsVersion >= version.version);

  // A session deleted elsewhere leaves the Agents list after one read of the sessions.
  await page.locator('[data-testid="sidebar-tab"][data-section="agents"]').click();
  const item = page.locator(`[data-testid="agent-session-item"][data-session-id="${session.id}"]`);
  await item.waitFor();
  const topicReads = reads.topics;
  await stack.server.api('agent_session_delete', { id: session.id });
  await waitUntil('the deleted session is gone', async () => (await item.count()) === 0);
  assert.equal(reads.sessions, 2, 'one more read of the sessions for the deletion');
  assert.equal(reads.topics, topicReads, 'a session changing reads no topic list');
});
