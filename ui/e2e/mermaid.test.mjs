// Mermaid diagrams under the app's Content Security Policy (`style-src 'self'`): mermaid
// styles its SVG inline, which the policy blocks in the page; the app shows the SVG as an
// image, where its own styles apply. What a user sees is checked in pixels of the drawn
// image, in the light and the dark scheme, and e2eTest fails on any CSP violation.

/* global createImageBitmap, OffscreenCanvas -- used in functions that run in the page */

import assert from 'node:assert/strict';
import { addTestkitProvider, e2eTest, lastAssistant, newTopicAndSend, useStack, waitUntil } from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

/**
 * Shares of an element's on-screen pixels: `dark` (near black), `light` (bright),
 * `lavender` (the fill of mermaid's default theme's nodes, #ececff) and `red`.
 */
async function pixelShares(page, locator) {
  const png = await locator.screenshot();
  return page.evaluate(async (base64) => {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const context = new OffscreenCanvas(bitmap.width, bitmap.height).getContext('2d');
    context.drawImage(bitmap, 0, 0);
    const { data } = context.getImageData(0, 0, bitmap.width, bitmap.height);
    const counts = { dark: 0, light: 0, lavender: 0, red: 0 };
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
      const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
      if (luminance < 60) counts.dark += 1;
      if (luminance > 150) counts.light += 1;
      if (r > 215 && g > 215 && b - r >= 10) counts.lavender += 1;
      if (r > 200 && g < 60 && b < 60) counts.red += 1;
    }
    const total = data.length / 4;
    return Object.fromEntries(Object.entries(counts).map(([name, count]) => [name, count / total]));
  }, png.toString('base64'));
}

e2eTest(stack, 'a mermaid diagram is drawn in colour, in the light and the dark scheme', async () => {
  const page = await stack.openApp();
  // The fence arrives in pieces, as a model writes it: it is drawn once it is complete.
  await stack.testkit.script({ chunks: ['Here:\n\n```mermaid\ngraph TD\n', '  A[Start] --> B[Finish]\n', '```\n\nDone.'] });
  await newTopicAndSend(page, 'A diagram');
  const diagram = lastAssistant(page).locator('[data-testid="mermaid-diagram"]');
  const image = diagram.locator('img');
  await image.waitFor({ timeout: 30_000 });
  await waitUntil('the diagram image has loaded', () => image.evaluate((img) => img.complete && img.naturalWidth > 0));
  assert.match(await image.getAttribute('alt'), /Start.*Finish|Finish.*Start/, 'the image says what the diagram says');
  const box = await image.boundingBox();
  assert.ok(box && box.width > 50 && box.height > 80, `the diagram has a size (${JSON.stringify(box)})`);

  const light = await pixelShares(page, image);
  // Unstyled, mermaid's shapes are filled black (the bug this guards against).
  assert.ok(light.dark < 0.1, `few near-black pixels in the light scheme: ${JSON.stringify(light)}`);
  assert.ok(light.lavender > 0.1, `the nodes have mermaid's light fill: ${JSON.stringify(light)}`);

  const lightSrc = await image.getAttribute('src');
  await page.emulateMedia({ colorScheme: 'dark' });
  await waitUntil('the diagram is drawn again in the dark scheme', async () => (await image.getAttribute('src')) !== lightSrc);
  await waitUntil('the dark image has loaded', () => image.evaluate((img) => img.complete && img.naturalWidth > 0));
  const dark = await pixelShares(page, image);
  // Unstyled on a dark page, shapes and text would be black on near black: nothing light.
  assert.ok(dark.light > 0.01, `labels and borders are light in the dark scheme: ${JSON.stringify(dark)}`);
  assert.ok(dark.lavender < 0.01, `no light node fill in the dark scheme: ${JSON.stringify(dark)}`);
  assert.equal(await diagram.locator('.mermaid-diagram-source').evaluate((details) => details.open), false, 'the source is folded away');
});

e2eTest(stack, 'mermaid source with a mistake shows what is wrong, and the rest of the reply', async () => {
  const page = await stack.openApp();
  await stack.testkit.script({ chunks: [['```mermaid', 'graph TD', '  A[Start --> B', '```', '', 'Text after the diagram.'].join('\n')] });
  await newTopicAndSend(page, 'A broken diagram');
  const reply = lastAssistant(page);
  const error = reply.locator('[data-testid="mermaid-diagram-error"]');
  await error.waitFor({ timeout: 30_000 });
  const text = await error.innerText();
  assert.match(text, /could not be drawn/);
  assert.match(text, /Parse error on line \d+/, 'mermaid says where');
  assert.ok(await reply.locator('.mermaid-diagram-source').evaluate((details) => details.open), 'the source is shown beside the error');
  assert.match(await reply.locator('.mermaid-diagram-source pre').innerText(), /A\[Start --> B/);
  await reply.getByText('Text after the diagram.').waitFor();
  assert.deepEqual(
    page.consoleLines.filter((line) => line.startsWith('[pageerror]')),
    [],
    'nothing was thrown',
  );
});

e2eTest(stack, "a diagram's own styles apply, and other kinds of diagram are drawn too", async () => {
  const page = await stack.openApp();
  const flowchart = ['```mermaid', 'graph LR', '  A[Alarm] --> B[Calm]', '  style A fill:#ff0000', '```'].join('\n');
  const sequence = ['```mermaid', 'sequenceDiagram', '  Alice->>Bob: Hello Bob', '  Bob-->>Alice: Hi Alice', '```'].join('\n');
  await stack.testkit.script({ chunks: [`${flowchart}\n\n${sequence}\n`] });
  await newTopicAndSend(page, 'Two diagrams');
  const images = lastAssistant(page).locator('[data-testid="mermaid-diagram"] img');
  await waitUntil('both diagrams are drawn', async () => (await images.count()) === 2, { timeout: 30_000 });
  for (const image of await images.all()) await waitUntil('the image has loaded', () => image.evaluate((img) => img.complete && img.naturalWidth > 0));

  const styled = await pixelShares(page, images.first());
  assert.ok(styled.red > 0.05, `the node styled red is red: ${JSON.stringify(styled)}`);
  assert.ok(styled.lavender > 0.05, `the other node keeps the theme's fill: ${JSON.stringify(styled)}`);
  assert.match(await images.nth(1).getAttribute('alt'), /Alice.*Bob|Bob.*Alice/);
  const sequenceShares = await pixelShares(page, images.nth(1));
  assert.ok(sequenceShares.dark < 0.1 && sequenceShares.lavender > 0.05, `the actors are drawn in the theme's fill: ${JSON.stringify(sequenceShares)}`);
});
