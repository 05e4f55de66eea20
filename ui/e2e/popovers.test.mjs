// Menus and panels that pop over the page stay inside the window and on top, in a small
// window (800×600): the Add-model menu under the last reply opened downwards under the
// composer, where nothing of it could be seen or clicked.

/* global document -- used in functions that run in the page */

import assert from 'node:assert/strict';
import { addNamedTestkitProvider, addTestkitProvider, byTestId, e2eTest, lastAssistant, newTopicAndSend, useStack, waitUntil } from './harness.mjs';

const stack = useStack({
  setup: async ({ server, testkit }) => {
    await addTestkitProvider(server, testkit);
    await addNamedTestkitProvider(server, testkit, 'Second', 'second-model');
  },
});
const SMALL = { width: 800, height: 600 };

/** Fails unless `panel` is wholly inside the window and is what a click at its centre reaches. */
async function assertOnScreenAndOnTop(page, panel, what) {
  await panel.waitFor();
  const seen = await panel.evaluate((element) => {
    const box = element.getBoundingClientRect();
    const x = box.left + box.width / 2;
    const y = box.top + box.height / 2;
    const hit = document.elementFromPoint(x, y);
    return {
      box: { left: box.left, top: box.top, right: box.right, bottom: box.bottom },
      window: { width: document.documentElement.clientWidth, height: document.documentElement.clientHeight },
      onTop: hit !== null && element.contains(hit),
      hit: hit ? `${hit.tagName.toLowerCase()}.${hit.className}` : null,
    };
  });
  const { box, window } = seen;
  assert.ok(box.left >= 0 && box.top >= 0 && box.right <= window.width && box.bottom <= window.height, `${what} is inside the window: ${JSON.stringify(seen)}`);
  assert.ok(box.bottom - box.top > 20, `${what} has a height: ${JSON.stringify(seen)}`);
  assert.ok(seen.onTop, `${what} is on top at its centre, not ${seen.hit}`);
  return box;
}

e2eTest(stack, 'in an 800×600 window the Add-model menu above the composer is on screen, on top, and works', async () => {
  const page = await stack.openApp(undefined, { viewport: SMALL });
  // A reply longer than the window: its Add-model button ends up just above the composer.
  const lines = Array.from({ length: 40 }, (_, i) => `Line ${i + 1} of a long answer.`);
  await stack.testkit.script({ chunks: [lines.join('\n\n')], tokenDelayMs: 1 });
  await newTopicAndSend(page, 'Hello');
  await waitUntil('the reply is stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');

  const button = byTestId(page, 'add-model-button');
  const composer = byTestId(page, 'composer-input');
  // The reply's footer (time, usage) arrives after it is stored: wait until the button has
  // stopped moving, so the menu is measured where it stays.
  let last = '';
  await waitUntil('the button is at the bottom of the list, near the composer, and still', async () => {
    const [buttonBox, composerBox] = [await button.boundingBox(), await composer.boundingBox()];
    const near = buttonBox && composerBox && composerBox.y - (buttonBox.y + buttonBox.height) < 120;
    const here = JSON.stringify(buttonBox);
    const still = here === last;
    last = here;
    return near && still;
  }, { interval: 250 });
  await button.click();
  const menu = page.getByRole('menu', { name: 'Model to add' });
  await assertOnScreenAndOnTop(page, menu, 'the Add-model menu');

  // What is on screen can be used: the other model is asked and answers beside the first.
  await stack.testkit.script({ chunks: ['The second answer.'] });
  await menu.locator('[data-testid="add-model-option"][data-model="second-model"]').click();
  await menu.waitFor({ state: 'detached' });
  await waitUntil('the second model answers too', async () => (await page.locator('[data-testid="message"][data-role="assistant"]').count()) === 2);
});

e2eTest(stack, 'in an 800×600 window Topic settings and the Export menu stay on screen', async () => {
  const page = await stack.openApp(undefined, { viewport: SMALL });
  await stack.testkit.script({ chunks: ['Fine.'] });
  await newTopicAndSend(page, 'Settings please');

  await byTestId(page, 'topic-settings-button').click();
  await assertOnScreenAndOnTop(page, byTestId(page, 'topic-settings'), 'Topic settings');
  await page.keyboard.press('Escape');
  await byTestId(page, 'topic-settings').waitFor({ state: 'detached' });

  const exportButton = page.locator('[data-testid="topic-item"] [data-testid="topic-export"]').first();
  await exportButton.click();
  await assertOnScreenAndOnTop(page, page.getByRole('menu', { name: 'Export as' }), 'the Export menu');
  // A click inside the menu does not close it (it counts as inside its trigger's popover).
  await page.getByRole('menu', { name: 'Export as' }).locator('[data-format="markdown"]').hover();
  await page.mouse.down();
  await page.mouse.up();
  await byTestId(page, 'topic-export-done').waitFor();
});
