// Settings → General: the stream idle timeout, checked in the form and by the backend,
// kept across a reload.

import assert from 'node:assert/strict';
import { addTestkitProvider, byTestId, e2eTest, useStack, waitUntil } from './harness.mjs';

const stack = useStack({ setup: ({ server, testkit }) => addTestkitProvider(server, testkit) });

async function openGeneral(page) {
  await byTestId(page, 'settings-button').click();
  await page.locator('[data-testid="settings-tab"][data-section="general"]').click();
  await byTestId(page, 'general-settings').waitFor();
}

e2eTest(stack, 'the idle timeout is chosen in Settings → General, refused when out of bounds, and kept', async () => {
  const page = await stack.openApp();
  await openGeneral(page);
  const input = byTestId(page, 'idle-timeout');
  assert.equal(await input.inputValue(), '', 'no choice yet: the default applies');
  assert.match(await input.getAttribute('placeholder'), /120 \(default\)/);

  await input.fill('5');
  await byTestId(page, 'general-save').click();
  const fieldError = page.locator('[data-testid="form-error"][data-field="idleTimeoutSeconds"]');
  await fieldError.waitFor();
  assert.match(await fieldError.innerText(), /between 10 and 3600 seconds/);
  assert.equal((await stack.server.api('settings_get')).idleTimeoutSeconds, undefined, 'nothing was saved');

  await input.fill('300');
  await byTestId(page, 'general-save').click();
  await byTestId(page, 'settings-saved').waitFor();
  assert.match(await byTestId(page, 'settings-saved').innerText(), /5 min/);
  assert.equal(await fieldError.count(), 0);
  assert.equal((await stack.server.api('settings_get')).idleTimeoutSeconds, 300);

  await page.reload();
  await openGeneral(page);
  await waitUntil('the saved value is shown', async () => (await byTestId(page, 'idle-timeout').inputValue()) === '300');

  // Empty goes back to the default.
  await byTestId(page, 'idle-timeout').fill('');
  await byTestId(page, 'general-save').click();
  await byTestId(page, 'settings-saved').waitFor();
  assert.equal((await stack.server.api('settings_get')).idleTimeoutSeconds, undefined);
});

/** The page's background colour, as painted. */
const background = (page) => page.locator('html').evaluate((root) => root.ownerDocument.defaultView.getComputedStyle(root).backgroundColor);
const theme = (page) => page.locator('html').getAttribute('data-theme');

e2eTest(stack, 'the theme follows the system until chosen, applies at once in every window, and is kept', async () => {
  const page = await stack.openApp();
  await page.emulateMedia({ colorScheme: 'dark' });
  await waitUntil('the system theme (dark) is followed', async () => (await theme(page)) === 'dark');
  const dark = await background(page);
  await page.emulateMedia({ colorScheme: 'light' });
  await waitUntil('a system change is followed', async () => (await theme(page)) === 'light');
  const light = await background(page);
  assert.notEqual(dark, light);

  // A second window of the same app: a tab of the same browser profile here.
  const other = stack.track(await page.context().newPage());
  await other.goto(stack.server.appUrl);
  await other.emulateMedia({ colorScheme: 'light' });
  await openGeneral(page);
  assert.equal(await byTestId(page, 'theme-select').inputValue(), 'system');
  await byTestId(page, 'theme-select').selectOption('dark');
  await waitUntil('dark applies at once', async () => (await background(page)) === dark);
  await waitUntil('the theme is stored', async () => (await stack.server.api('settings_get')).theme === 'dark');
  await waitUntil('the other window follows', async () => (await background(other)) === dark);
  // The idle timeout saved afterwards keeps the theme.
  await byTestId(page, 'idle-timeout').fill('45');
  await byTestId(page, 'general-save').click();
  await byTestId(page, 'settings-saved').waitFor();
  assert.equal((await stack.server.api('settings_get')).theme, 'dark');

  // Kept across a reload, whatever the system says.
  await page.reload();
  await waitUntil('dark after a reload', async () => (await background(page)) === dark);
  await openGeneral(page);
  await byTestId(page, 'theme-select').selectOption('system');
  await waitUntil('back to the system (light)', async () => (await background(page)) === light);
  await waitUntil('no theme is stored', async () => (await stack.server.api('settings_get')).theme === undefined);
});
