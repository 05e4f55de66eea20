// Desktop smoke test: the real `colloquy` window, driven through tauri-driver and
// WebKitWebDriver. Onboarding -> demo provider -> new topic -> send -> a finished reply,
// its code block highlighted (by the highlighter's worker);
// the topic exported as Markdown (the desktop saves it into Downloads, here a throwaway
// folder named by a throwaway XDG_CONFIG_HOME's user-dirs.dirs); then the desktop-only settings: a "show Colloquy" shortcut is recorded and registered,
// the window is resized, and a second launch on the same data folder opens the window at
// that size with the shortcut registered again.
//
// Run by `cargo xtask test` as
//   xvfb-run -a --server-args="-screen 0 1280x800x24" node tests/desktop/smoke.mjs
// with COLLOQUY_BIN (the debug binary) and COLLOQUY_DATA_DIR (a fresh, empty dir).
// Optional: TAURI_DRIVER (default: `tauri-driver` on PATH), WEBKIT_WEBDRIVER.
// Artifacts: test-artifacts/desktop-smoke.png on success, desktop-failure.png on
// failure, desktop-driver.log (tauri-driver, WebKitWebDriver and app output) always.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Session, TauriDriver, processesOf, sleep } from './webdriver.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ARTIFACTS = path.join(REPO, 'test-artifacts');
const COLLOQUY_BIN = process.env.COLLOQUY_BIN ?? path.join(REPO, 'target/debug/colloquy');
const TAURI_DRIVER = process.env.TAURI_DRIVER || 'tauri-driver';
const WEBKIT_WEBDRIVER = process.env.WEBKIT_WEBDRIVER || '/usr/bin/WebKitWebDriver';

const PROMPT = 'Write a tiny Rust hello world';
const SESSION_TIMEOUT_MS = 60_000;
const REPLY_TIMEOUT_MS = 60_000;
const OVERALL_TIMEOUT_MS = 300_000;

const REPLY = '[data-testid="message"][data-role="assistant"]';
/** The size the window is given before the app is closed, and must reopen at. */
const RESIZED = { width: 900, height: 640 };
/** WebDriver's key value for Control, and Alt. */
const CONTROL = '\uE009';
const ALT = '\uE00A';

let driver = null;
let session = null;
/** The throwaway folder holding the app's XDG config and its Downloads folder. */
let home = null;

function log(line) {
  console.log(`[desktop-smoke] ${line}`);
}

async function main() {
  if (!existsSync(COLLOQUY_BIN)) throw new Error(`COLLOQUY_BIN ${COLLOQUY_BIN} does not exist: run cargo build first`);
  if (!process.env.COLLOQUY_DATA_DIR) throw new Error('COLLOQUY_DATA_DIR is not set: the app would use your real data dir');
  if (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) throw new Error('no display: run under xvfb-run');
  mkdirSync(ARTIFACTS, { recursive: true });
  // A screenshot left by an earlier run must not pass for this one's.
  for (const name of ['desktop-smoke.png', 'desktop-failure.png']) rmSync(path.join(ARTIFACTS, name), { force: true });

  // The app saves exports into the XDG Downloads folder: point it at a throwaway one
  // (the app, started by WebKitWebDriver under tauri-driver, inherits this environment).
  home = mkdtempSync(path.join(os.tmpdir(), 'colloquy-smoke-home-'));
  mkdirSync(path.join(home, 'config'));
  writeFileSync(path.join(home, 'config', 'user-dirs.dirs'), `XDG_DOWNLOAD_DIR="${path.join(home, 'Downloads')}"\n`);
  mkdirSync(path.join(home, 'Downloads'));
  process.env.XDG_CONFIG_HOME = path.join(home, 'config');

  driver = await TauriDriver.start({
    binary: TAURI_DRIVER,
    nativeDriver: WEBKIT_WEBDRIVER,
    logPath: path.join(ARTIFACTS, 'desktop-driver.log'),
  });
  log(`tauri-driver is up at ${driver.baseUrl}; starting ${COLLOQUY_BIN}`);

  // tauri-driver turns `tauri:options` into WebKitWebDriver's browser options; wry
  // reports itself to WebKit as browser "wry".
  const capabilities = { alwaysMatch: { 'tauri:options': { application: COLLOQUY_BIN }, browserName: 'wry' } };
  session = await Session.create(driver.baseUrl, capabilities, SESSION_TIMEOUT_MS);
  log(`session ${session.id} created`);

  await session.waitFor('[data-testid="onboarding"]', { what: 'the onboarding screen' });
  await session.clickWhenReady('[data-testid="demo-provider-button"]');
  log('demo provider chosen');
  // Choosing the demo provider opened a first topic; the new one replaces its view (and
  // composer) once `topic_create` answers, which under load is a while after the click.
  const openTopic = 'return new URLSearchParams(location.hash.slice(1)).get("topic");';
  let first = null;
  await waitUntil(async () => (first = await session.execute(openTopic)), 'the first topic to open');
  await session.clickWhenReady('[data-testid="new-topic-button"]');
  await waitUntil(async () => {
    const open = await session.execute(openTopic);
    return open && open !== first;
  }, 'the new topic to open');
  await session.typeWhenReady('[data-testid="composer-input"]', PROMPT);
  await session.clickWhenReady('[data-testid="send-button"]');
  log(`sent "${PROMPT}"`);

  const reply = await waitForReply();
  log(`assistant replied (${reply.length} chars):\n${reply}`);
  // The reply's Rust block is coloured by the code highlighter, which runs Shiki in a
  // module worker: this checks WebKitGTK starts it from the app's own scheme under its CSP.
  const COLOURED_TOKENS = `
    const replies = document.querySelectorAll(arguments[0]);
    const block = replies[replies.length - 1]?.querySelector('pre');
    return block ? block.querySelectorAll('span[style*="--shiki-dark"]').length : 0;
  `;
  await waitUntil(async () => (await session.execute(COLOURED_TOKENS, [REPLY])) > 3, 'the reply\'s code block to be highlighted');
  log('the code block is highlighted');

  const png = await session.screenshot();
  writeFileSync(path.join(ARTIFACTS, 'desktop-smoke.png'), png);
  log('screenshot saved to test-artifacts/desktop-smoke.png');

  await exportTopic();
  await setShowShortcut();
  await resizeAndReopen(capabilities);
}

/**
 * The topic's menu → Export → Markdown: the desktop writes the file into Downloads (no save
 * dialog, which would block a driven window) and says where; the file holds the exchange.
 */
async function exportTopic() {
  await clickInPage('[data-testid="topic-export"]');
  await clickInPage('[data-testid="topic-export-format"][data-format="markdown"]');
  let said = '';
  await waitForText('[data-testid="topic-export-done"]', (text) => (said = text).startsWith('Saved to '), 'the export to be saved');
  const saved = said.slice('Saved to '.length).trim();
  const downloads = path.join(home, 'Downloads');
  if (path.dirname(saved) !== downloads || !saved.endsWith('.md')) {
    throw new Error(`the export went to ${saved}, not to a Markdown file in ${downloads}`);
  }
  const markdown = readFileSync(saved, 'utf8');
  if (!markdown.includes(PROMPT)) throw new Error(`the exported Markdown lacks the message:\n${markdown.slice(0, 1000)}`);
  await clickInPage('[data-testid="topic-export"]');
  log(`topic exported as Markdown to ${saved} (${markdown.length} chars)`);
}

/** Settings → General: record Ctrl+Alt+K as the "show Colloquy" shortcut and use it. */
async function setShowShortcut() {
  await openGeneralSettings();
  await clickInPage('[data-testid="show-shortcut-keys"]', 'focus');
  await session.pressKeys([CONTROL, ALT], 'k');
  await waitForText('[data-testid="show-shortcut-keys"]', (text) => text === 'Ctrl+Alt+K', 'the recorded combination', 'value');
  await clickInPage('[data-testid="show-shortcut-save"]');
  // "On" is said only after the system accepted the combination (XGrabKey on this display).
  await waitForText('[data-testid="show-shortcut-status"]', (text) => text.startsWith('On: Ctrl+Alt+K'), 'the shortcut to be on');
  log('show-Colloquy shortcut Ctrl+Alt+K registered');
}

/**
 * Resizes the window, waits for the size to be saved (it is written when the window stops
 * changing, not only at a clean exit), ends the app, launches it again on the same data
 * folder and checks the window's size and the shortcut.
 */
async function resizeAndReopen(capabilities) {
  await session.setWindowRect(RESIZED);
  const stateFile = path.join(process.env.COLLOQUY_DATA_DIR, 'window-state.json');
  await waitUntil(() => {
    const main = readJson(stateFile)?.main;
    return main && main.width === RESIZED.width && main.height === RESIZED.height;
  }, `${stateFile} to hold the new size`);
  log(`window resized to ${RESIZED.width}×${RESIZED.height} and saved`);

  await session.delete();
  session = null;
  // The second launch must find the data folder free, or it would hand over to this one.
  await waitUntil(() => processesOf(path.resolve(COLLOQUY_BIN)).length === 0, 'the first app process to exit', 20_000);

  session = await Session.create(driver.baseUrl, capabilities, SESSION_TIMEOUT_MS);
  log(`second launch: session ${session.id}`);
  await session.waitFor('[data-testid="new-topic-button"]', { what: 'the main screen (the provider was kept)' });
  const rect = await session.windowRect();
  if (rect.width !== RESIZED.width || rect.height !== RESIZED.height) {
    throw new Error(`the window reopened at ${rect.width}×${rect.height}, not at the saved ${RESIZED.width}×${RESIZED.height}`);
  }
  log(`the window reopened at its saved size, ${rect.width}×${rect.height}`);
  await waitUntil(() => driver.logTail(400).includes('show-Colloquy shortcut registered'), 'the stored shortcut to be registered at start');
  await openGeneralSettings();
  await waitForText('[data-testid="show-shortcut-status"]', (text) => text.startsWith('On: Ctrl+Alt+K'), 'the kept shortcut');
  log('the shortcut is registered again after the restart');
}

async function openGeneralSettings() {
  await clickInPage('[data-testid="settings-button"]');
  await clickInPage('[data-testid="settings-tab"][data-section="general"]');
}

/**
 * Calls `method` (`click` or `focus`) on `selector` in the page once it is there and
 * enabled. WebKitWebDriver's element click refuses some visible sidebar buttons as "not
 * interactable" in this window; what is tested here is the app, not that hit test.
 */
async function clickInPage(selector, method = 'click') {
  await waitUntil(
    () =>
      session.execute(
        'const e = document.querySelector(arguments[0]); if (!e || e.disabled) return false; e[arguments[1]](); return true;',
        [selector, method],
      ),
    `${selector} to ${method}`,
  );
}

/** Polls `selector`'s text (or a property such as an input's `value`) until `accept` says yes. */
async function waitForText(selector, accept, what, property = 'innerText') {
  let last = '';
  await waitUntil(async () => {
    last = await session.execute('const e = document.querySelector(arguments[0]); return e ? e[arguments[1]] : null;', [selector, property]);
    return typeof last === 'string' && accept(last);
  }, `${what} (last: ${JSON.stringify(last)})`);
}

async function waitUntil(check, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The last assistant reply's stored status and text, read in one script: the UI swaps the
 * live reply for the stored one when the turn ends, so an element found by one command
 * can be gone by the next.
 */
const READ_LAST_REPLY = `
  const replies = document.querySelectorAll(arguments[0]);
  const last = replies[replies.length - 1];
  if (!last) return null;
  const text = last.querySelector('[data-testid="message-text"]');
  return { status: last.getAttribute('data-status'), text: text ? text.innerText : '', whole: last.innerText };
`;

/** Polls until the assistant reply is stored as success with text; fails early on an error reply. */
async function waitForReply() {
  const deadline = Date.now() + REPLY_TIMEOUT_MS;
  let lastStatus = 'none';
  for (;;) {
    const reply = await session.execute(READ_LAST_REPLY, [REPLY]);
    if (reply) {
      lastStatus = reply.status ?? 'none';
      if (lastStatus === 'success' && reply.text.trim()) return reply.text.trim();
      if (lastStatus === 'error') throw new Error(`the assistant reply failed: ${reply.whole.trim()}`);
    }
    if (Date.now() > deadline) {
      throw new Error(`no successful assistant reply with text within ${REPLY_TIMEOUT_MS} ms (last reply status: ${lastStatus})`);
    }
    await sleep(250);
  }
}

async function reportFailure(error) {
  console.error(`[desktop-smoke] FAILED: ${error?.stack ?? error}`);
  if (session) {
    try {
      writeFileSync(path.join(ARTIFACTS, 'desktop-failure.png'), await session.screenshot());
      console.error('[desktop-smoke] screenshot saved to test-artifacts/desktop-failure.png');
    } catch (screenshotError) {
      console.error(`[desktop-smoke] no failure screenshot: ${screenshotError.message}`);
    }
    try {
      const source = await session.source();
      const body = source.indexOf('<body');
      console.error(`[desktop-smoke] page source (excerpt):\n${source.slice(Math.max(0, body), Math.max(0, body) + 4000)}`);
    } catch (sourceError) {
      console.error(`[desktop-smoke] no page source: ${sourceError.message}`);
    }
  }
  if (driver) {
    console.error(`[desktop-smoke] tauri-driver / app output (tail of test-artifacts/desktop-driver.log):\n${driver.logTail()}`);
  }
}

async function cleanup() {
  if (session) {
    const ending = session;
    session = null;
    await ending.delete().catch((error) => log(`deleting the session failed: ${error.message}`));
  }
  if (driver) {
    const stopping = driver;
    driver = null;
    await stopping.stop();
  }
  if (home) rmSync(home, { recursive: true, force: true });
}

// Whatever happens, the driver's process group (and the app in it) must not outlive us.
process.on('exit', () => driver?.signalGroup('SIGKILL'));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    console.error(`[desktop-smoke] interrupted by ${signal}`);
    driver?.signalGroup('SIGKILL');
    process.exit(1);
  });
}

let exitCode = 0;
const overall = setTimeout(() => {
  console.error(`[desktop-smoke] FAILED: the whole run took longer than ${OVERALL_TIMEOUT_MS} ms`);
  driver?.signalGroup('SIGKILL');
  process.exit(1);
}, OVERALL_TIMEOUT_MS);
try {
  await main();
  log('passed');
} catch (error) {
  exitCode = 1;
  await reportFailure(error);
} finally {
  await cleanup();
  clearTimeout(overall);
}
process.exit(exitCode);
