// A minimal W3C WebDriver client over `fetch`, and the `tauri-driver` process that
// serves it. No npm dependencies: this runs straight from a fresh clone.

import { spawn } from 'node:child_process';
import { openSync, closeSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';

/** The W3C key under which a WebDriver response names an element. */
const ELEMENT_KEY = 'element-6066-11e4-a52e-4f735466cecf';
const COMMAND_TIMEOUT_MS = 30_000;

/** The pids of the processes running `binary` (an absolute path), read from /proc. */
export function processesOf(binary) {
  return readdirSync('/proc').filter((pid) => {
    if (!/^\d+$/.test(pid)) return false;
    try {
      return readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, '') === binary;
    } catch {
      return false;
    }
  });
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Asks the OS for a port that is free right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A WebDriver error response, with the remote end's error code and message. */
export class WebDriverError extends Error {
  constructor(method, path, status, value) {
    super(`${method} ${path} -> HTTP ${status}: ${value?.error ?? 'error'}: ${value?.message ?? JSON.stringify(value)}`);
    this.code = value?.error;
  }
}

/** Sends one WebDriver command and returns its `value`; throws `WebDriverError` on failure. */
export async function command(baseUrl, method, path, body, timeoutMs = COMMAND_TIMEOUT_MS) {
  let response;
  try {
    response = await fetch(baseUrl + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const reason = error?.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : String(error?.cause ?? error);
    throw new Error(`${method} ${path}: ${reason}`);
  }
  const text = await response.text();
  let value;
  try {
    value = JSON.parse(text).value;
  } catch {
    value = { error: 'invalid response', message: text.slice(0, 500) };
  }
  if (!response.ok) throw new WebDriverError(method, path, response.status, value);
  return value;
}

/** One WebDriver session: finding elements by CSS selector and acting on them. */
export class Session {
  constructor(baseUrl, id) {
    this.baseUrl = baseUrl;
    this.id = id;
  }

  static async create(baseUrl, capabilities, timeoutMs) {
    const value = await command(baseUrl, 'POST', '/session', { capabilities }, timeoutMs);
    return new Session(baseUrl, value.sessionId);
  }

  cmd(method, path, body) {
    return command(this.baseUrl, method, `/session/${this.id}${path}`, body);
  }

  /** Every element matching `selector` right now (possibly none). */
  async findAll(selector) {
    const found = await this.cmd('POST', '/elements', { using: 'css selector', value: selector });
    return found.map((reference) => reference[ELEMENT_KEY]);
  }

  /** Polls until `selector` matches an element, and returns the first match. */
  async waitFor(selector, { timeoutMs = 30_000, what = selector } = {}) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // WebKitWebDriver can answer a find with "stale element" while React replaces the
      // nodes it is walking; that is a "not yet", not a failure.
      const [element] = await this.findAll(selector).catch((error) => {
        if (error instanceof WebDriverError && error.code === 'stale element reference') return [];
        throw error;
      });
      if (element) return element;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${selector})`);
      await sleep(250);
    }
  }

  click(element) {
    return this.cmd('POST', `/element/${element}/click`, {});
  }

  /**
   * Waits for `selector` and clicks it. React may replace the element between finding and
   * clicking it; a stale reference is looked up again rather than failing the run.
   */
  async clickWhenReady(selector, options = {}) {
    for (let attempt = 1; ; attempt++) {
      const element = await this.waitFor(selector, options);
      try {
        return await this.click(element);
      } catch (error) {
        if (!(error instanceof WebDriverError) || error.code !== 'stale element reference' || attempt >= 5) throw error;
      }
    }
  }

  type(element, text) {
    return this.cmd('POST', `/element/${element}/value`, { text });
  }

  text(element) {
    return this.cmd('GET', `/element/${element}/text`);
  }

  attribute(element, name) {
    return this.cmd('GET', `/element/${element}/attribute/${encodeURIComponent(name)}`);
  }

  source() {
    return this.cmd('GET', '/source');
  }

  /**
   * Runs `script` (a function body) in the page and returns its result. Reading several
   * things in one script is atomic: no element can be replaced between the reads, which
   * separate commands on a re-rendering page cannot promise (stale element references).
   */
  execute(script, args = []) {
    return this.cmd('POST', '/execute/sync', { script, args });
  }

  /** The window's position and outer size: `{ x, y, width, height }`. */
  windowRect() {
    return this.cmd('GET', '/window/rect');
  }

  /** Moves and/or resizes the window, as a user dragging it would. */
  setWindowRect(rect) {
    return this.cmd('POST', '/window/rect', rect);
  }

  /**
   * Presses `key` (a WebDriver key value, e.g. `'k'`) while holding `modifiers` (WebDriver
   * key values such as `'\uE009'` for Control), then releases them all.
   */
  pressKeys(modifiers, key) {
    const down = [...modifiers, key].map((value) => ({ type: 'keyDown', value }));
    const up = [key, ...modifiers.slice().reverse()].map((value) => ({ type: 'keyUp', value }));
    return this.cmd('POST', '/actions', { actions: [{ type: 'key', id: 'keyboard', actions: [...down, ...up] }] });
  }

  /** The current window as PNG bytes. */
  async screenshot() {
    return Buffer.from(await this.cmd('GET', '/screenshot'), 'base64');
  }

  delete() {
    return command(this.baseUrl, 'DELETE', `/session/${this.id}`, undefined, 10_000);
  }
}

/**
 * `tauri-driver` in its own process group (it starts WebKitWebDriver, which starts the
 * app; all of them share the group), with its output in `logPath`.
 */
export class TauriDriver {
  static async start({ binary, nativeDriver, logPath, readyTimeoutMs = 15_000 }) {
    const [port, nativePort] = [await freePort(), await freePort()];
    const log = openSync(logPath, 'w');
    const args = ['--port', String(port), '--native-port', String(nativePort), '--native-driver', nativeDriver];
    const child = spawn(binary, args, { detached: true, stdio: ['ignore', log, log] });
    closeSync(log);
    const driver = new TauriDriver(child, `http://127.0.0.1:${port}`, logPath);
    await driver.#waitReady(readyTimeoutMs);
    return driver;
  }

  constructor(child, baseUrl, logPath) {
    this.child = child;
    this.baseUrl = baseUrl;
    this.logPath = logPath;
    this.exit = null;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve();
      });
      child.once('error', (error) => {
        this.exit = { error };
        resolve();
      });
    });
  }

  async #waitReady(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.exit) throw new Error(`tauri-driver ${describeExit(this.exit)} before answering\n${this.logTail()}`);
      try {
        const status = await command(this.baseUrl, 'GET', '/status', undefined, 2_000);
        if (status?.ready !== false) return;
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline) throw new Error(`tauri-driver did not answer GET /status within ${timeoutMs} ms\n${this.logTail()}`);
      await sleep(100);
    }
  }

  /** The last lines tauri-driver, WebKitWebDriver and the app wrote. */
  logTail(lines = 40) {
    try {
      return readFileSync(this.logPath, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  signalGroup(signal) {
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      // The group is already gone.
    }
  }

  /** Stops the whole process group: SIGTERM, then SIGKILL for whatever is left. */
  async stop() {
    this.signalGroup('SIGTERM');
    await Promise.race([this.exited, sleep(3_000)]);
    // The app and WebKitWebDriver may outlive tauri-driver; the group outlives them all.
    await sleep(200);
    this.signalGroup('SIGKILL');
  }
}

function describeExit({ code, signal, error }) {
  if (error) return `could not start (${error.message})`;
  return signal ? `was killed by ${signal}` : `exited with code ${code}`;
}
