// The sidebar: collapsed and expanded by its button and Ctrl+Shift+S (remembered across
// reloads); over the conversation on a narrow window, closing on a topic picked, Esc or a
// click outside; and at 800×600 the messages keep most of the height.

import assert from 'node:assert/strict';
import { addTestkitProvider, byTestId, currentTopicId, e2eTest, lastAssistant, newTopicAndSend, useStack, waitUntil } from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

const box = (locator) => locator.evaluate((element) => element.getBoundingClientRect().toJSON());
const mainLeft = async (page) => (await box(page.locator('main.main'))).left;

e2eTest(stack, 'the sidebar button and Ctrl+Shift+S collapse and expand the sidebar, remembered across reloads', async () => {
  const page = await stack.openApp();
  const sidebar = byTestId(page, 'sidebar');
  await sidebar.waitFor();
  assert.equal(Math.round((await box(sidebar)).width), 260);
  assert.equal(Math.round(await mainLeft(page)), 260, 'the conversation starts beside the sidebar');

  await byTestId(page, 'sidebar-hide').click();
  await sidebar.waitFor({ state: 'detached' });
  const rail = byTestId(page, 'sidebar-rail');
  await rail.waitFor();
  const railWidth = (await box(rail)).width;
  assert.ok(railWidth < 60, `a narrow rail is left (${railWidth} px)`);
  assert.equal(await mainLeft(page), railWidth, 'the conversation takes the room');
  assert.equal(await focused(page), 'sidebar-show', 'the focus stays on the sidebar button');

  await page.reload();
  await rail.waitFor();
  assert.equal(await sidebar.count(), 0, 'still collapsed after a reload');

  // The rail's buttons work: search, and showing the sidebar again.
  await byTestId(page, 'rail-search').click();
  await byTestId(page, 'search-palette').waitFor();
  await page.keyboard.press('Escape');
  await byTestId(page, 'search-palette').waitFor({ state: 'detached' });

  await page.keyboard.press('Control+Shift+S');
  await sidebar.waitFor();
  assert.equal(Math.round(await mainLeft(page)), 260);
  await page.reload();
  await sidebar.waitFor();
  await page.keyboard.press('Control+Shift+S');
  await sidebar.waitFor({ state: 'detached' });
  await byTestId(page, 'sidebar-show').click();
  await sidebar.waitFor();
});

const focused = (page) => page.locator('html').evaluate((root) => root.ownerDocument.activeElement?.getAttribute('data-testid'));

e2eTest(stack, 'on a narrow window the sidebar opens over the conversation and closes on a topic picked, Esc or a click outside', async () => {
  await stack.server.api('topic_create', { title: 'Narrow one' });
  await stack.server.api('topic_create', { title: 'Narrow two' });
  const page = await stack.openApp(undefined, { viewport: { width: 600, height: 700 } });
  const sidebar = byTestId(page, 'sidebar');
  const rail = byTestId(page, 'sidebar-rail');
  await rail.waitFor();
  await page.locator('.chat').waitFor();
  assert.equal(await sidebar.count(), 0, 'closed at first');
  const left = await mainLeft(page);
  assert.ok(left < 60, `the conversation has the width but the rail (${left} px)`);

  // Open: over the conversation, which neither moves nor shrinks.
  await byTestId(page, 'sidebar-show').click();
  await sidebar.waitFor();
  assert.equal(await sidebar.evaluate((element) => element.ownerDocument.defaultView.getComputedStyle(element).position), 'fixed');
  const over = await box(sidebar);
  assert.ok(over.right > left + 100, 'it covers part of the conversation');
  assert.equal(await mainLeft(page), left);
  assert.equal(await focused(page), 'sidebar-hide', 'the focus moves into it');

  // A topic picked: it opens, the overlay closes.
  const before = await currentTopicId(page);
  const other = page.locator('[data-testid="topic-item"]').filter({ hasNot: page.locator('[aria-current="page"]') }).first();
  const otherId = await other.getAttribute('data-topic-id');
  assert.notEqual(otherId, before);
  await other.locator('.topic-title').click();
  await sidebar.waitFor({ state: 'detached' });
  assert.equal(await currentTopicId(page), otherId);

  // Esc closes it.
  await page.keyboard.press('Control+Shift+S');
  await sidebar.waitFor();
  await page.keyboard.press('Escape');
  await sidebar.waitFor({ state: 'detached' });

  // So does a click outside it.
  await byTestId(page, 'sidebar-show').click();
  await sidebar.waitFor();
  await page.mouse.click(580, 350);
  await sidebar.waitFor({ state: 'detached' });

  // Widening the window docks it again.
  await page.setViewportSize({ width: 1000, height: 700 });
  await sidebar.waitFor();
  assert.notEqual(await sidebar.evaluate((element) => element.ownerDocument.defaultView.getComputedStyle(element).position), 'fixed');
  assert.equal(Math.round(await mainLeft(page)), 260);
});

e2eTest(stack, 'at 800×600 the messages get most of the height, with the composer on screen', async () => {
  const page = await stack.openApp(undefined, { viewport: { width: 800, height: 600 } });
  await stack.testkit.script({ chunks: ['A short ', 'answer.'], tokenDelayMs: 1 });
  await newTopicAndSend(page, 'A short question');
  await waitUntil('the reply is stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');

  // Heights settle once the reply's footer and the header's usage are shown.
  const heights = await waitUntil('the layout is settled', async () => {
    const measure = () =>
      page.locator('html').evaluate((root) => {
        const height = (selector) => root.querySelector(selector)?.getBoundingClientRect().height ?? 0;
        const composer = root.querySelector('.composer')?.getBoundingClientRect();
        return { list: height('.chat .message-list'), header: height('.chat-header'), footer: height('.chat-footer'), composerBottom: composer?.bottom ?? 0 };
      });
    const first = await measure();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await measure();
    return JSON.stringify(first) === JSON.stringify(second) ? second : undefined;
  });
  assert.ok(heights.list > 0.55 * 600, `the message list is ${heights.list} px of 600 (header ${heights.header}, footer ${heights.footer})`);
  assert.ok(heights.header + heights.footer < 0.4 * 600, `the header and the composer take ${heights.header + heights.footer} px`);
  assert.ok(heights.composerBottom <= 600, 'the composer is wholly on screen');
});
