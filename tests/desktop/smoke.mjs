// Desktop smoke test: the real `colloquy` window, driven through tauri-driver and
// WebKitWebDriver. Onboarding -> demo provider -> new topic -> send -> a finished reply.
//
// Run by `cargo xtask test` as
//   xvfb-run -a --server-args="-screen 0 1280x800x24" node tests/desktop/smoke.mjs
// with COLLOQUY_BIN (the debug binary) and COLLOQUY_DATA_DIR (a fresh, empty dir).
// Optional: TAURI_DRIVER (default: `tauri-driver` on PATH), WEBKIT_WEBDRIVER.
// Artifacts: test-artifacts/desktop-smoke.png on success, desktop-failure.png on
// failure, desktop-driver.log (tauri-driver, WebKitWebDriver and app output) always.

import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Session, TauriDriver, sleep } from './webdriver.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ARTIFACTS = path.join(REPO, 'test-artifacts');
const COLLOQUY_BIN = process.env.COLLOQUY_BIN ?? path.join(REPO, 'target/debug/colloquy');
const TAURI_DRIVER = process.env.TAURI_DRIVER || 'tauri-driver';
const WEBKIT_WEBDRIVER = process.env.WEBKIT_WEBDRIVER || '/usr/bin/WebKitWebDriver';

const PROMPT = 'Write a tiny Rust hello world';
const SESSION_TIMEOUT_MS = 60_000;
const REPLY_TIMEOUT_MS = 60_000;
const OVERALL_TIMEOUT_MS = 240_000;

const REPLY = '[data-testid="message"][data-role="assistant"]';

let driver = null;
let session = null;

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
  await session.clickWhenReady('[data-testid="new-topic-button"]');
  const composer = await session.waitFor('[data-testid="composer-input"]');
  await session.type(composer, PROMPT);
  await session.clickWhenReady('[data-testid="send-button"]');
  log(`sent "${PROMPT}"`);

  const reply = await waitForReply();
  log(`assistant replied (${reply.length} chars):\n${reply}`);

  const png = await session.screenshot();
  writeFileSync(path.join(ARTIFACTS, 'desktop-smoke.png'), png);
  log('screenshot saved to test-artifacts/desktop-smoke.png');
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
