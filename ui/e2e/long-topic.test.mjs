// A long topic (5,000 messages, imported through `topics_import`): it opens at its end,
// reads older pages as the user scrolls up, keeps the DOM small, follows a streaming reply
// only while the user is at the bottom, and shows a reattached reply once after a reload.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import {
  TOKEN,
  addTestkitProvider,
  byTestId,
  e2eTest,
  normalize,
  typeAndEnter,
  useStack,
  waitUntil,
  words,
} from './harness.mjs';
import { seededReplyText, seededUserText, seedTopic } from './seed.mjs';

const TURNS = 2_500; // 5,000 messages
/** Messages in the DOM at any time: about a window's worth, never the topic's length. */
const DOM_BOUND = 150;

let topicId;
const stack = useStack({
  setup: async ({ server, testkit }) => {
    const provider = await addTestkitProvider(server, testkit);
    topicId = await seedTopic(server, { turns: TURNS, model: { providerId: provider.id, model: 'scripted' } });
  },
});

async function openLongTopic() {
  const page = await stack.openApp(`${stack.server.origin}/#token=${TOKEN}&topic=${topicId}`);
  await byTestId(page, 'composer-input').waitFor();
  return page;
}

const messages = (page) => page.locator('[data-testid="message"]');
const list = (page) => page.locator('.message-list');

/** Whether the element's bottom is inside the message list's visible area. */
function bottomVisible(page, locator) {
  return locator.evaluate((element) => {
    const scroller = element.closest('.message-list');
    if (!scroller) return false;
    const box = element.getBoundingClientRect();
    const view = scroller.getBoundingClientRect();
    return box.bottom <= view.bottom + 2 && box.bottom >= view.top;
  });
}

/** The last line of the live reply: its text's last rendered element. */
function lastLine(page) {
  return page.locator('[data-testid="message"][data-role="assistant"]').last().locator('[data-testid="message-text"] :is(p, li, pre, h2)').last();
}

const lastLineText = (page) => lastLine(page).innerText().catch(() => '');

/** The number in "Line N of the streamed answer." (-1 for anything else). */
const lineNumber = (text) => Number(/Line (\d+)/.exec(text)?.[1] ?? -1);

/** The last line's text and whether it is in view, read at one moment. */
async function lastLineInView(page) {
  const line = lastLine(page);
  return line.evaluate((element) => {
    const scroller = element.closest('.message-list');
    const box = element.getBoundingClientRect();
    const view = scroller?.getBoundingClientRect();
    return { text: element.textContent ?? '', visible: !!view && box.bottom <= view.bottom + 2 && box.bottom >= view.top };
  });
}

/** The text of the rendered line at the middle of the message list. */
async function lineAtViewCenter(page) {
  return list(page).evaluate((scroller) => {
    const view = scroller.getBoundingClientRect();
    const lines = [...scroller.querySelectorAll('[data-testid="message-text"] :is(p, li, pre, h2)')];
    const middle = view.top + view.height / 2;
    // The first line reaching below the middle (the middle may fall between two lines).
    return lines.find((element) => element.getBoundingClientRect().bottom >= middle)?.textContent ?? '';
  });
}

/** Whether a rendered line with exactly this text is inside the message list's view. */
async function lineInView(page, text) {
  return list(page).evaluate((scroller, wanted) => {
    const view = scroller.getBoundingClientRect();
    const lines = [...scroller.querySelectorAll('[data-testid="message-text"] :is(p, li, pre, h2)')];
    return lines.some((element) => {
      const box = element.getBoundingClientRect();
      return element.textContent === wanted && box.top >= view.top && box.bottom <= view.bottom;
    });
  }, text);
}

async function distanceFromBottom(page) {
  return list(page).evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight);
}

async function scrollUp(page, pixels) {
  await list(page).hover();
  await page.mouse.wheel(0, -pixels);
}

e2eTest(stack, 'a 5,000-message topic opens at its last message with the composer, and keeps few messages in the DOM', async () => {
  const page = await openLongTopic();
  const last = messages(page).last();
  await waitUntil('the last reply is shown', async () => normalize(await last.innerText()).includes(normalize(seededReplyText(TURNS - 1))));
  assert.ok(await bottomVisible(page, last), 'the last message is in view');
  assert.ok(await byTestId(page, 'composer-input').isVisible());
  const count = await messages(page).count();
  assert.ok(count > 0 && count <= DOM_BOUND, `${count} message elements in the DOM`);
});

e2eTest(stack, 'the first frame shows the messages as plain text, and their markdown replaces it with the view still at the end', async () => {
  // The markdown renderer's chunk is held back, as on a slow first load.
  const context = await stack.browser.newContext({ viewport: { width: 1200, height: 800 } });
  let release;
  const held = new Promise((resolve) => (release = resolve));
  await context.route(/\/assets\/Markdown-[^/]*\.js$/, async (route) => {
    await held;
    await route.continue();
  });
  const page = stack.track(await context.newPage());
  await page.goto(`${stack.server.origin}/#token=${TOKEN}&topic=${topicId}`);
  const last = messages(page).last();
  await waitUntil('the last reply is shown as plain text', async () => (await last.locator('[data-testid="plain-markdown"]').count()) === 1);
  assert.equal(normalize(await last.locator('[data-testid="message-text"]').innerText()), normalize(seededReplyText(TURNS - 1)));
  const bold = messages(page).filter({ hasText: `Answer ${TURNS - 4}:` });
  assert.match(await bold.innerText(), /a short paragraph with \*\*bold\*\* text/, 'the markdown is not rendered yet');
  await waitUntil('the view is at the end', async () => (await distanceFromBottom(page)) <= 2);
  assert.ok(await bottomVisible(page, last), 'the last message is in view');

  release();
  await waitUntil('the markdown replaced the plain text', async () => (await page.locator('[data-testid="plain-markdown"]').count()) === 0);
  await bold.locator('[data-streamdown="strong"]', { hasText: 'bold' }).waitFor();
  assert.equal(normalize(await last.locator('[data-testid="message-text"]').innerText()), normalize(seededReplyText(TURNS - 1)));
  await waitUntil('the view is still at the end', async () => (await distanceFromBottom(page)) <= 2);
  assert.ok(await bottomVisible(page, last), 'the last message is still in view');
});

e2eTest(
  stack,
  'scrolling to the top loads older pages until the first message, with a bounded DOM all the way',
  async () => {
    const page = await openLongTopic();
    await messages(page).last().waitFor();
    // "Question 0" is in no other seeded message ("Question 10" is not it).
    const firstQuestion = page.locator('[data-testid="message"][data-role="user"]', { hasText: seededUserText(0) });
    let most = 0;
    await waitUntil(
      'the first message is shown',
      async () => {
        await list(page).evaluate((element) => {
          element.scrollTop = 0;
        });
        most = Math.max(most, await messages(page).count());
        return (await firstQuestion.count()) > 0;
      },
      { timeout: 120_000, interval: 150 },
    );
    assert.ok(most <= DOM_BOUND, `at most ${most} message elements in the DOM while scrolling`);
    // The oldest page says there is nothing above it.
    await byTestId(page, 'loading-older').waitFor({ state: 'detached' });
  },
  { timeout: 180_000 },
);

e2eTest(stack, 'a reply streamed at the bottom stays in view to its last line, and scrolling up stops following until "jump to latest"', async () => {
  const page = await openLongTopic();
  await messages(page).last().waitFor();

  const LINES = 240;
  const lines = Array.from({ length: LINES }, (_, i) => `Line ${i} of the streamed answer.\n\n`);
  await stack.testkit.script({ chunks: lines, tokenDelayMs: 40 });
  await typeAndEnter(page, 'Stream a long answer');
  // Sending shows the new message.
  await waitUntil('the sent message is in view', async () => {
    const mine = page.locator('[data-testid="message"][data-role="user"]', { hasText: 'Stream a long answer' });
    return (await mine.count()) > 0 && bottomVisible(page, mine.last());
  });
  // At several points the view catches up with the growing reply while it still grows
  // (a list that stopped following would leave its last line below the window for good).
  for (const at of [10, 60, 120]) {
    await waitUntil(`line ${at} has arrived`, async () => lineNumber(await lastLineText(page)) >= at);
    const seen = await waitUntil(`the last line is in view after line ${at}`, async () => {
      const view = await lastLineInView(page);
      return view.visible && view;
    });
    assert.ok(lineNumber(seen.text) < LINES - 1, `the view kept up while the reply was still growing (${seen.text})`);
  }

  // The user scrolls up: the view stays where they put it, and offers the way back.
  await scrollUp(page, 1500);
  await byTestId(page, 'jump-to-latest').waitFor();
  const anchor = await lineAtViewCenter(page);
  const awayFromEnd = await distanceFromBottom(page);
  await waitUntil('the reply grows below the view', async () => (await distanceFromBottom(page)) > awayFromEnd + 200);
  // (Not to the pixel: the list may correct by a line's height as the item it is in grows.)
  assert.ok(await lineInView(page, anchor), `the line the user scrolled to (${anchor}) is still in view`);
  assert.ok(!(await lastLineInView(page)).visible, 'the last line is below the view');
  await byTestId(page, 'jump-to-latest').click();
  await byTestId(page, 'jump-to-latest').waitFor({ state: 'detached' });
  await waitUntil('back at the bottom, with the last line in view', async () => (await lastLineInView(page)).visible);
  await waitUntil('the reply is stored as success', async () =>
    (await page.locator('[data-testid="message"][data-role="assistant"]').last().getAttribute('data-status')) === 'success',
  );
  await waitUntil('the last line is in view at the end', async () => {
    const view = await lastLineInView(page);
    return view.visible && view.text.includes(`Line ${LINES - 1}`);
  });
});

e2eTest(stack, 'messages that arrive while scrolled up are counted on "jump to latest"', async () => {
  const page = await openLongTopic();
  await messages(page).last().waitFor();
  await scrollUp(page, 2000);
  await byTestId(page, 'jump-to-latest').waitFor();
  // Another window sends a message into this topic (its stream is not read here).
  await stack.testkit.script({ chunks: words(5, 'elsewhere') });
  const response = await fetch(`${stack.server.origin}/api/stream_open`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ topicId, text: 'From another window', messageId: crypto.randomUUID() }),
  });
  assert.equal(response.status, 200);
  await response.body?.cancel();
  await waitUntil('the new messages are counted', async () => Number((await byTestId(page, 'unread-count').innerText().catch(() => '0')) || 0) >= 1);
  await byTestId(page, 'jump-to-latest').click();
  await page.locator('[data-testid="message"][data-role="user"]', { hasText: 'From another window' }).waitFor();
});

e2eTest(stack, 'reloading while a reply streams in a long topic shows it once', async () => {
  const chunks = words(150, 'reload');
  await stack.testkit.script({ chunks, tokenDelayMs: 30 });
  const page = await openLongTopic();
  await messages(page).last().waitFor();
  await typeAndEnter(page, 'Answer slowly');
  const reply = () => page.locator('[data-testid="message"][data-role="assistant"]').last();
  await waitUntil('the reply has started', async () => (await reply().innerText()).includes('reload10'));
  await page.reload();
  await waitUntil('the reply finishes after the reload', async () => (await reply().getAttribute('data-status')) === 'success', { timeout: 30_000 });
  assert.equal(normalize(await reply().locator('[data-testid="message-text"]').innerText()), normalize(chunks.join('')));
  assert.equal(await page.locator('[data-testid="message"][data-role="user"]', { hasText: 'Answer slowly' }).count(), 1, 'the message once');
  const texts = await page.locator('[data-testid="message"][data-role="assistant"]').allInnerTexts();
  assert.equal(texts.filter((text) => text.includes('reload0 reload1')).length, 1, 'the reply once');
});
