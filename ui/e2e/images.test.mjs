// Images in replies under the Content Security Policy: a remote image is never loaded
// without a click (a reply could carry data out in its URL), and the app itself loads
// under the CSP without a violation.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { addTestkitProvider, byTestId, cspViolations, e2eTest, lastAssistant, newTopicAndSend, useStack, waitUntil } from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

/** A web server that counts what it is asked for. */
async function countingServer() {
  const hits = [];
  const server = createServer((request, response) => {
    hits.push(request.url);
    response.writeHead(200, { 'Content-Type': 'image/png' });
    response.end(Buffer.from('89504e470d0a1a0a', 'hex'));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { hits, origin: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

e2eTest(stack, 'audit_03: a remote image waits for a click, and the page loads under the CSP without a violation', async () => {
  const remote = await countingServer();
  try {
    const text = `Here is the chart:\n\n![chart](${remote.origin}/p.png?d=secret)\n\n\`\`\`js\nconst answer = 42;\n\`\`\`\n`;
    await stack.testkit.script({ chunks: [text] });
    const page = await stack.openApp();
    await newTopicAndSend(page, 'Show me');
    await waitUntil('the reply is stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');

    const load = byTestId(lastAssistant(page), 'markdown-image-load');
    await load.waitFor();
    assert.equal(await load.innerText(), `Load image from ${remote.host}`);
    assert.equal(await lastAssistant(page).locator('img').count(), 0, 'no image element before the click');
    assert.deepEqual(remote.hits, [], 'the remote host was not contacted');

    // On a click the backend fetches it with fetch_url's guard, which refuses this
    // computer: the user is told, and the host is still not contacted.
    await load.click();
    await byTestId(lastAssistant(page), 'markdown-image-error').waitFor();
    assert.match(await byTestId(lastAssistant(page), 'markdown-image-error').innerText(), /127\.0\.0\.1/);
    assert.deepEqual(remote.hits, []);

    // The policy itself refuses a remote image, whatever puts it in the page.
    await page.locator('body').evaluate((body, src) => {
      const image = body.ownerDocument.createElement('img');
      image.src = src;
      body.append(image);
    }, `${remote.origin}/direct.png`);
    await waitUntil('the browser reports the refusal', async () => cspViolations(page).length > 0);
    assert.deepEqual(remote.hits, []);
    // That refusal was the test's own doing; anything else would fail the test (e2eTest).
    page.consoleLines.length = 0;
  } finally {
    await remote.close();
  }
});
