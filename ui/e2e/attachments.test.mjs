// Files sent with a message: picked in the composer, checked, sent to the model as image
// and text content, and shown in the conversation. The model's vision is switched on in
// the provider form's capabilities editor first (its name alone does not suggest it).

/* global DataTransfer, ClipboardEvent -- used in functions that run in the page */

import assert from 'node:assert/strict';
import { addTestkitProvider, byTestId, e2eTest, lastAssistant, normalize, openNewTopic, testkitRequests, useStack, waitUntil } from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const TEXT = 'The attached text says: pineapples are berries.';

e2eTest(stack, 'vision is switched on in the provider form, shown as set by the user', async () => {
  const page = await stack.openApp();
  await byTestId(page, 'settings-button').click();
  await page.locator('[data-testid="secret-store"]').waitFor();
  const secretStore = await byTestId(page, 'secret-store').innerText();
  assert.match(secretStore, /API keys are stored in a file readable only by you/);
  // Why there is no keychain is said in words, without the platform's error dump.
  assert.match(secretStore, /no keychain service is running|no desktop session bus|did not answer/, secretStore);
  assert.doesNotMatch(secretStore, /zbus|org\.freedesktop|DBus|os error/i, secretStore);
  await byTestId(page, 'provider-edit').click();
  await page.locator('[data-testid="capabilities"] summary').click();
  const row = page.locator('[data-testid="capability-row"][data-model="scripted"]');
  assert.equal(await row.getAttribute('data-source'), 'guessed');
  const vision = row.locator('[data-capability="vision"]');
  assert.equal(await vision.isChecked(), false, 'the name does not suggest vision');
  await vision.check();
  assert.equal(await row.getAttribute('data-source'), 'set');
  await byTestId(page, 'provider-save').click();
  await byTestId(page, 'provider-item').waitFor();
  await waitUntil('the provider is saved with vision', async () => {
    const [provider] = await stack.server.api('providers_list');
    return provider.capabilities.scripted.vision === true && provider.capabilities.scripted.custom === true;
  });

  // Edited again, the form says the value was set, not guessed.
  await byTestId(page, 'provider-edit').click();
  await page.locator('[data-testid="capabilities"] summary').click();
  assert.equal(await page.locator('[data-testid="capability-row"][data-model="scripted"]').getAttribute('data-source'), 'set');
});

e2eTest(stack, 'an image and a text file go to the model and show in the message', async () => {
  const page = await stack.openApp();
  await openNewTopic(page);

  // A file type the backend refuses is refused here, with a reason.
  await byTestId(page, 'attach-input').setInputFiles({ name: 'tool.zip', mimeType: 'application/zip', buffer: Buffer.from('PK') });
  assert.match(await byTestId(page, 'attachment-error').innerText(), /tool\.zip cannot be attached/);
  assert.equal(await byTestId(page, 'attachment-chip').count(), 0);

  await byTestId(page, 'attach-input').setInputFiles([
    { name: 'dot.png', mimeType: 'image/png', buffer: PNG },
    { name: 'fruit.txt', mimeType: 'text/plain', buffer: Buffer.from(TEXT) },
  ]);
  await waitUntil('both files are chips', async () => (await byTestId(page, 'attachment-chip').count()) === 2);
  await page.locator('[data-testid="attachment-chip"][data-filename="dot.png"] img.attachment-thumb').waitFor();

  await stack.testkit.reset();
  await stack.testkit.script({ chunks: ['A dot ', 'and a fact.'] });
  await byTestId(page, 'composer-input').fill('What are these files?');
  await byTestId(page, 'send-button').click();
  await waitUntil('the reply is stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  assert.equal(normalize(await lastAssistant(page).innerText()).includes('A dot and a fact.'), true);
  assert.equal(await byTestId(page, 'attachment-chip').count(), 0, 'the composer is empty again');

  const user = page.locator('[data-testid="message"][data-role="user"]').last();
  await user.locator('[data-testid="message-file-image"][data-filename="dot.png"] img').waitFor();
  assert.match(await user.locator('[data-testid="message-file"][data-filename="fruit.txt"]').innerText(), /fruit\.txt[\s\S]*text\/plain/);
  await user.locator('[data-testid="message-file-image"]').click();
  await byTestId(page, 'image-viewer').waitFor();
  await page.keyboard.press('Escape');
  await byTestId(page, 'image-viewer').waitFor({ state: 'detached' });

  const chats = (await testkitRequests(stack.testkit)).filter((r) => JSON.stringify(r.body).includes('What are these files?'));
  assert.equal(chats.length, 1);
  const question = chats[0].body.messages.at(-1);
  assert.equal(question.role, 'user');
  const parts = question.content;
  assert.ok(Array.isArray(parts), 'the message is sent as content parts');
  assert.ok(
    parts.some((part) => part.type === 'image_url' && part.image_url.url === `data:image/png;base64,${PNG.toString('base64')}`),
    'the image is sent as image_url',
  );
  assert.ok(
    parts.some((part) => part.type === 'text' && part.text.includes(TEXT)),
    'the text file is sent as text',
  );
  assert.ok(parts.some((part) => part.type === 'text' && part.text === 'What are these files?'));

  // After a reload the stored message still shows its files.
  await page.reload();
  await page.locator('[data-testid="message"][data-role="user"] [data-testid="message-file-image"]').last().waitFor();
});

e2eTest(stack, 'files can be dropped on the composer or pasted into it, and removed again', async () => {
  const page = await stack.openApp();
  await openNewTopic(page);
  const composer = page.locator('form.composer');
  const transfer = await page.evaluateHandle(() => {
    const data = new DataTransfer();
    data.items.add(new File(['# dropped'], 'dropped.md', { type: '' }));
    return data;
  });
  await composer.dispatchEvent('dragover', { dataTransfer: transfer });
  await composer.dispatchEvent('drop', { dataTransfer: transfer });
  await page.locator('[data-testid="attachment-chip"][data-filename="dropped.md"]').waitFor();

  await byTestId(page, 'composer-input').evaluate((input) => {
    const data = new DataTransfer();
    data.items.add(new File(['{"a": 1}'], 'pasted.json', { type: 'application/json' }));
    input.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  });
  await page.locator('[data-testid="attachment-chip"][data-filename="pasted.json"]').waitFor();
  assert.equal(await byTestId(page, 'composer-input').inputValue(), '', 'a pasted file is not pasted as text');

  await page.locator('[data-testid="attachment-chip"][data-filename="dropped.md"] [data-testid="attachment-remove"]').click();
  await waitUntil('one chip is left', async () => (await byTestId(page, 'attachment-chip').count()) === 1);

  // A message of files alone, without text, can be sent.
  await stack.testkit.reset();
  await stack.testkit.script({ chunks: ['Got it.'] });
  await byTestId(page, 'send-button').click();
  await waitUntil('the reply is stored', async () => (await lastAssistant(page).getAttribute('data-status')) === 'success');
  const user = page.locator('[data-testid="message"][data-role="user"]').last();
  // The list may re-render the row as the reply settles: wait for the file to be shown.
  await waitUntil('the sent file is shown', async () => /pasted\.json[\s\S]*application\/json/.test(await user.locator('[data-testid="message-file"]').innerText()));
});
