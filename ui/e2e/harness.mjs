// Shared e2e machinery: per test file, a scripted model server (colloquy-testkit), a
// `colloquy serve` on a fresh data dir serving ui/dist, and a headless Debian Chromium.
// Every process is started in its own process group and killed in `after`.

import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const UI_DIST = path.join(REPO, 'ui', 'dist');
export const ARTIFACTS = path.join(REPO, 'test-artifacts');
const COLLOQUY_BIN = process.env.COLLOQUY_BIN ?? path.join(REPO, 'target/debug/colloquy');
const TESTKIT_BIN = process.env.COLLOQUY_TESTKIT_BIN ?? path.join(REPO, 'target/debug/colloquy-testkit');
/** Debian's Chromium and the flags that work on these machines (never a downloaded browser). */
export const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];
export const TOKEN = 'test-token-0123456789';
const STARTUP_TIMEOUT_MS = 30_000;

/** Every child still running; killed on exit even if a test file crashes. */
const running = new Set();
process.on('exit', () => {
  for (const child of running) killGroup(child, 'SIGKILL');
});

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Starts `command` in its own process group and resolves once a stdout line matches
 * `ready` (its first capture group is returned as `match`). `env` is added to this
 * process's environment.
 */
export async function startProcess(name, command, args, ready, env = {}) {
  if (!existsSync(command)) {
    throw new Error(`${name} binary not found at ${command}: build it (cargo build) or set the env var that points to it.`);
  }
  const child = spawn(command, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RUST_BACKTRACE: '1', ...env } });
  running.add(child);
  let log = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const match = await new Promise((resolve, reject) => {
    let stdoutBuffer = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not print its ready line within ${STARTUP_TIMEOUT_MS} ms.\n${log}`)), STARTUP_TIMEOUT_MS);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (text) => {
      log += text;
      stdoutBuffer += text;
      const lines = stdoutBuffer.split('\n');
      stdoutBuffer = lines.pop() ?? '';
      for (const line of lines) {
        const found = ready.exec(line);
        if (found) {
          clearTimeout(timer);
          resolve(found[1]);
        }
      }
    });
    child.stderr.on('data', (text) => {
      log += text;
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (code ${code}, signal ${signal}) before it was ready.\n${log}`));
    });
  });
  return {
    match,
    log: () => log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) {
        running.delete(child);
        return;
      }
      killGroup(child, 'SIGTERM');
      const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 5_000));
      if ((await Promise.race([exited, timeout])) === 'timeout') {
        killGroup(child, 'SIGKILL');
        await exited;
      }
      running.delete(child);
    },
  };
}

/** The scripted OpenAI-compatible model server. */
export async function startTestkit({ apiKey, tokenDelayMs = 15 } = {}) {
  // The control routes (`/_testkit/*`) want this token as a bearer token.
  const controlToken = randomUUID();
  const args = ['--port', '0', '--token-delay-ms', String(tokenDelayMs), '--control-token', controlToken];
  if (apiKey) args.push('--api-key', apiKey);
  const proc = await startProcess('colloquy-testkit', TESTKIT_BIN, args, /testkit listening on (\S+)/);
  const url = proc.match; // e.g. http://127.0.0.1:PORT/v1
  const origin = new URL(url).origin;
  const control = { Authorization: `Bearer ${controlToken}` };
  return {
    url,
    log: proc.log,
    stop: proc.stop,
    /** Queues one scripted reply: the next chat completion streams these chunks. */
    async script(script) {
      const response = await fetch(`${origin}/_testkit/script`, {
        method: 'POST',
        headers: { ...control, 'Content-Type': 'application/json' },
        body: JSON.stringify(script),
      });
      if (!response.ok) throw new Error(`queueing a testkit script failed: HTTP ${response.status} ${await response.text()}`);
    },
    /** Drops queued scripts and recorded requests (a failed test leaves none for the next). */
    async reset() {
      const response = await fetch(`${origin}/_testkit/reset`, { method: 'POST', headers: control });
      if (!response.ok) throw new Error(`resetting the testkit failed: HTTP ${response.status}`);
    },
    /** The requests the testkit recorded (`GET /_testkit/requests`), oldest first. */
    async requests() {
      const response = await fetch(`${origin}/_testkit/requests`, { headers: control });
      if (!response.ok) throw new Error(`reading the testkit's requests failed: HTTP ${response.status}`);
      return response.json();
    },
  };
}

/** `colloquy serve` on `dataDir`, serving the built UI, with `env` added to its environment. */
export async function startServer(dataDir, { env = {} } = {}) {
  if (!existsSync(path.join(UI_DIST, 'index.html'))) {
    throw new Error(`No UI build in ${UI_DIST}: run \`npm run build\` in ui/ first.`);
  }
  const proc = await startProcess(
    'colloquy serve',
    COLLOQUY_BIN,
    ['serve', '--port', '0', '--data-dir', dataDir, '--ui-dir', UI_DIST, '--token', TOKEN],
    /Colloquy is serving on (\S+)/,
    env,
  );
  const origin = new URL(proc.match).origin;
  return {
    origin,
    /** What a user opens: the printed URL, token in the fragment. */
    appUrl: `${origin}/#token=${TOKEN}`,
    log: proc.log,
    stop: proc.stop,
    /** Calls an operation over HTTP, as the UI does. */
    async api(name, request = {}) {
      const response = await fetch(`${origin}/api/${name}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(request),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${name} failed: HTTP ${response.status} ${text}`);
      return text ? JSON.parse(text) : null;
    },
  };
}

/**
 * Sets up one test file: testkit + server + browser before, all stopped after, with
 * `setup(stack)` run once they are up. `serverEnv` (an object, or a function that returns
 * one, called once before the server starts) is added to the server's environment.
 * Returns a live object whose fields are filled in by `before` (and replaced by
 * `restartServer`).
 */
export function useStack({ testkit: testkitOptions, serverEnv, setup } = {}) {
  const stack = {
    dataDir: '',
    serverEnv: {},
    testkit: undefined,
    server: undefined,
    browser: undefined,
    /** Stops the server and starts a new one on the same data dir (new port). */
    async restartServer() {
      await stack.server.stop();
      stack.server = await startServer(stack.dataDir, { env: stack.serverEnv });
      return stack.server;
    },
    /**
     * A fresh browser context (own localStorage) with the app open. `viewport` defaults
     * to a wide window; below 900 px replies of several models show as tabs.
     */
    async openApp(url = stack.server.appUrl, { viewport = { width: 1200, height: 800 } } = {}) {
      const context = await stack.browser.newContext({ viewport });
      const page = await context.newPage();
      await page.goto(url);
      return stack.track(page);
    },
    /** Registers a page (e.g. one the app opened) for failure artifacts and clean-up. */
    track(page) {
      page.setDefaultTimeout(20_000);
      const consoleLines = [];
      page.on('console', (message) => consoleLines.push(`[${message.type()}] ${message.text()}`));
      page.on('pageerror', (error) => consoleLines.push(`[pageerror] ${error.message}`));
      page.consoleLines = consoleLines;
      stack.pages.push(page);
      return page;
    },
    pages: [],
  };

  before(async () => {
    stack.dataDir = await mkdtemp(path.join(tmpdir(), 'colloquy-e2e-'));
    stack.testkit = await startTestkit(testkitOptions);
    stack.serverEnv = (typeof serverEnv === 'function' ? await serverEnv() : serverEnv) ?? {};
    stack.server = await startServer(stack.dataDir, { env: stack.serverEnv });
    stack.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    await setup?.(stack);
  });

  after(async () => {
    await stack.browser?.close().catch(() => {});
    await stack.server?.stop();
    await stack.testkit?.stop();
    if (stack.dataDir) await rm(stack.dataDir, { recursive: true, force: true });
  });

  return stack;
}

/** Console lines of a page that say the Content Security Policy blocked something. */
export function cspViolations(page) {
  return page.consoleLines.filter((line) => /Content Security Policy/i.test(line));
}

/**
 * A test that saves a screenshot, the page console and the server logs when it fails.
 * It fails too when the app's CSP blocked anything the page tried (the app must work
 * under its own policy).
 */
export function e2eTest(stack, name, fn, { timeout = 90_000 } = {}) {
  test(name, { timeout }, async () => {
    stack.pages = [];
    try {
      await fn();
      const violations = stack.pages.flatMap(cspViolations);
      if (violations.length > 0) throw new Error(`the page broke its Content Security Policy:\n${violations.join('\n')}`);
    } catch (error) {
      await saveArtifacts(stack, name).catch((artifactError) => console.error('could not save artifacts:', artifactError));
      throw error;
    } finally {
      await Promise.all(stack.pages.map((page) => page.context().close().catch(() => {})));
    }
  });
}

async function saveArtifacts(stack, name) {
  await mkdir(ARTIFACTS, { recursive: true });
  const base = path.join(ARTIFACTS, `${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}-${Date.now()}`);
  for (const [index, page] of stack.pages.entries()) {
    if (page.isClosed()) continue;
    await page.screenshot({ path: `${base}-${index}.png`, fullPage: true });
    await writeFile(`${base}-${index}.console.txt`, page.consoleLines.join('\n'));
  }
  await writeFile(`${base}.server.log`, stack.server?.log() ?? '');
  await writeFile(`${base}.testkit.log`, stack.testkit?.log() ?? '');
  console.error(`e2e artifacts written to ${base}*`);
}

/** Polls `check` until it returns a truthy value; fails with `what` and the last value. */
export async function waitUntil(what, check, { timeout = 20_000, interval = 50 } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await check();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what} (last: ${String(last)})`);
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Whitespace-insensitive text, for comparing rendered markdown with raw text. */
export function normalize(text) {
  return text.replace(/\s+/g, ' ').trim();
}

/** `count` short words, as testkit chunks: long enough to reload or stop in the middle. */
export function words(count, prefix = 'w') {
  return Array.from({ length: count }, (_, i) => `${prefix}${i} `);
}

// ---- Page helpers (test ids are the UI's stable contract) ----

export const byTestId = (page, id) => page.locator(`[data-testid="${id}"]`);

export function assistantMessages(page) {
  return page.locator('[data-testid="message"][data-role="assistant"]');
}

export function lastAssistant(page) {
  return assistantMessages(page).last();
}

export async function assistantText(page) {
  const text = lastAssistant(page).locator('[data-testid="message-text"]');
  return (await text.count()) === 0 ? '' : text.innerText();
}

/** Adds the testkit as an OpenAI-compatible provider over the HTTP API. */
export async function addTestkitProvider(server, testkit, { apiKey } = {}) {
  const input = { name: 'Testkit', baseUrl: testkit.url, models: ['scripted'], defaultModel: 'scripted' };
  if (apiKey) input.apiKey = apiKey;
  return server.api('provider_create', input);
}

/** Adds one more provider on the testkit with its own model name (the testkit answers any model). */
export async function addNamedTestkitProvider(server, testkit, name, model) {
  return server.api('provider_create', { name, baseUrl: testkit.url, models: [model], defaultModel: model });
}

/** The topic open in the page (the app keeps it in the address as `#topic=<id>`). */
export async function currentTopicId(page) {
  return waitUntil('a topic is open', async () => new URLSearchParams(new URL(page.url()).hash.slice(1)).get('topic'));
}

/** The topic's entry in the sidebar. */
export function topicItem(page, topicId) {
  return page.locator(`[data-testid="topic-item"][data-topic-id="${topicId}"]`);
}

/** Types `text` into the composer and presses Enter (send when idle, queue while a reply runs). */
export async function typeAndEnter(page, text) {
  const input = byTestId(page, 'composer-input');
  await input.fill(text);
  await input.press('Enter');
}

/** Text of a reply element (a `message` or a `model-column`), whether shown or hidden behind a tab. */
export async function replyText(locator) {
  const text = locator.locator('[data-testid="message-text"]');
  return (await text.count()) === 0 ? '' : normalize((await text.first().textContent()) ?? '');
}

/** Creates a topic with "New topic" and waits until it is the one on screen; returns its id. */
export async function openNewTopic(page) {
  // The sidebar shows once the topic list is read: only then are the topics before known.
  await byTestId(page, 'new-topic-button').waitFor();
  const before = new Set(await page.locator('[data-testid="topic-item"]').evaluateAll((items) => items.map((i) => i.dataset.topicId)));
  await byTestId(page, 'new-topic-button').click();
  const id = await waitUntil('the new topic is open', async () => {
    const hash = new URLSearchParams(new URL(page.url()).hash.slice(1)).get('topic');
    return hash && !before.has(hash) ? hash : undefined;
  });
  await page.locator('.chat .empty-chat').waitFor();
  return id;
}

/** Opens a new topic in the UI and sends `text` with Enter. */
export async function newTopicAndSend(page, text) {
  await openNewTopic(page);
  await typeAndEnter(page, text);
  await page.locator('[data-testid="message"][data-role="user"]').last().waitFor();
}

/** The chat requests the testkit recorded (`GET /_testkit/requests`), oldest first. */
export async function testkitRequests(testkit) {
  return testkit.requests();
}

const workspaces = new Set();
process.on('exit', () => {
  for (const folder of workspaces) rmSync(folder, { recursive: true, force: true });
});

/** A fresh, empty folder for a topic's file tools; removed when the process exits. */
export async function tempWorkspace() {
  const folder = await realpath(await mkdtemp(path.join(tmpdir(), 'colloquy-ws-')));
  workspaces.add(folder);
  return folder;
}

/** Sets the open topic's workspace folder through Topic settings (the browser's path field). */
export async function setTopicWorkspace(page, folder) {
  await byTestId(page, 'topic-settings-button').click();
  await byTestId(page, 'topic-workspace-input').fill(folder);
  await byTestId(page, 'topic-workspace-save').click();
  await page.locator(`[data-testid="topic-workspace"][title$="${path.basename(folder)}"]`).waitFor();
  await page.keyboard.press('Escape');
  await byTestId(page, 'topic-settings').waitFor({ state: 'detached' });
}
