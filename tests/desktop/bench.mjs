// `cargo xtask bench desktop`: the desktop app's footprint, measured from outside (issue
// 19). The real window under Xvfb, driven through tauri-driver + WebKitWebDriver, and
// `colloquy serve` beside it; printed as a Markdown table (results in docs/benchmarks.md).
// Not a test: it asserts nothing, it measures.
//
// - Cold start to first paint: from the app process's start (its start time in
//   /proc/PID/stat) to the page's first contentful paint (performance.timeOrigin + the
//   paint entry), with a data folder that has a provider and no topic open. The file
//   cache is warm (the machine cannot drop it here): a first launch after a reboot is
//   slower by what reading the binary and WebKit's libraries from disk takes.
// - Memory of the whole app: the app and every process under it (WebKitWebProcess,
//   WebKitNetworkProcess), as RSS (what `top` shows, shared libraries counted in each
//   process) and PSS (shared pages divided between the processes that share them: the
//   fair total) from /proc/PID/smaps_rollup. Idle with no topic open, with a
//   2,000-message topic open, and after streaming 30 replies (the built-in demo model).
// - Idle CPU: the whole tree's CPU time over 30 s with the long topic open.
// - `colloquy serve`: time to its first answer, RSS/PSS idle and after the same topic is
//   read through the API, idle CPU over 30 s.
// - WebKitGTK alone: its own MiniBrowser (shipped with the library) started on a one-line
//   page, cold start to first contentful paint measured the same way: the floor under
//   any WebKitGTK app's cold start on this machine.
//
// Run as `xvfb-run -a --server-args="-screen 0 1280x800x24" node tests/desktop/bench.mjs`
// with COLLOQUY_BIN (a release build), TAURI_DRIVER and WEBKIT_MINIBROWSER optional.
// Options: --runs N (cold starts, default 5), --idle-seconds N (default 30), --replies N
// (default 30), --only SECTION,... (desktop, serve, webkit; default all), --quick.

import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { longTopicExport } from '../../ui/e2e/seed.mjs';
import { Session, TauriDriver, freePort, processesOf, sleep } from './webdriver.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const COLLOQUY_BIN = path.resolve(process.env.COLLOQUY_BIN ?? path.join(REPO, 'target/release/colloquy'));
const TAURI_DRIVER = process.env.TAURI_DRIVER || 'tauri-driver';
const WEBKIT_WEBDRIVER = process.env.WEBKIT_WEBDRIVER || '/usr/bin/WebKitWebDriver';
const MINIBROWSER = process.env.WEBKIT_MINIBROWSER || '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
const SECTIONS = ['desktop', 'serve', 'webkit'];
const CAPABILITIES = { alwaysMatch: { 'tauri:options': { application: COLLOQUY_BIN }, browserName: 'wry' } };
const TOPIC_TURNS = 1_000; // 2,000 messages
const CLOCK_TICKS = 100; // USER_HZ on Linux
const PAGE_KIB = 4;

function parseArgs(argv) {
  const options = { runs: 5, idleSeconds: 30, replies: 30, only: SECTIONS };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const number = () => {
      const value = Number(argv[++i]);
      if (!Number.isInteger(value) || value <= 0) throw new Error(`${flag} wants a positive whole number`);
      return value;
    };
    if (flag === '--runs') options.runs = number();
    else if (flag === '--idle-seconds') options.idleSeconds = number();
    else if (flag === '--replies') options.replies = number();
    else if (flag === '--only') {
      options.only = (argv[++i] ?? '').split(',');
      const unknown = options.only.filter((name) => !SECTIONS.includes(name));
      if (unknown.length > 0) throw new Error(`unknown section ${unknown.join(', ')} (sections: ${SECTIONS.join(', ')})`);
    }
    else if (flag === '--quick') Object.assign(options, { runs: 1, idleSeconds: 3, replies: 2 });
    else if (flag === '--help' || flag === '-h') {
      console.log(`Usage: node tests/desktop/bench.mjs [--runs N] [--idle-seconds N] [--replies N] [--only ${SECTIONS.join(',')}] [--quick]`);
      process.exit(0);
    } else throw new Error(`unknown option ${flag}`);
  }
  return options;
}

// ---- /proc ----

/** `/proc/PID/stat`'s fields after the command name (field 3 is index 0). */
function statFields(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** `pid` and every process under it. */
function tree(pid) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const parent = statFields(entry)[1];
      children.set(parent, [...(children.get(parent) ?? []), entry]);
    } catch {
      // Gone meanwhile.
    }
  }
  const all = [];
  const walk = (p) => {
    all.push(p);
    for (const child of children.get(p) ?? []) walk(child);
  };
  walk(String(pid));
  return all;
}

function commandName(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '?';
  }
}

/** RSS and PSS (KiB) of `pids` together. */
function memory(pids) {
  let rss = 0;
  let pss = 0;
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      rss += Number(/^Rss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    } catch {
      // Gone meanwhile.
    }
  }
  return { rss, pss };
}

/** PSS of each process of `pids`, by name. */
function byProcess(pids) {
  return pids.map((pid) => `${commandName(pid)} ${mb(memory([pid]).pss)}`).join(', ');
}

/** CPU seconds (user + system) of `pids` so far. */
function cpuSeconds(pids) {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = statFields(pid);
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone meanwhile.
    }
  }
  return ticks / CLOCK_TICKS;
}

/** When `pid` started, in ms since the epoch. */
function startedAt(pid) {
  const bootTime = Number(/^btime (\d+)/m.exec(readFileSync('/proc/stat', 'utf8'))[1]);
  return (bootTime + Number(statFields(pid)[19]) / CLOCK_TICKS) * 1000;
}

/** The CPU share (% of one core) of `pids` over `seconds`, in all and by process name. */
async function idleCpu(pids, seconds) {
  const before = pids.map((pid) => cpuSeconds([pid]));
  await sleep(seconds * 1000);
  const shares = pids.map((pid, i) => ({ name: commandName(pid), share: ((cpuSeconds([pid]) - before[i]) / seconds) * 100 }));
  const total = shares.reduce((sum, { share }) => sum + share, 0);
  const parts = shares.filter(({ share }) => share >= 0.05).map(({ name, share }) => `${name} ${share.toFixed(1)}`);
  return `${total.toFixed(2)} % of one core${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
}

// ---- the desktop app ----

async function waitUntil(check, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** Calls a backend operation from the page (as the UI does) and returns its answer. */
async function invoke(session, name, request) {
  const key = `__bench_${Math.random().toString(36).slice(2)}`;
  await session.execute(
    `window.__TAURI_INTERNALS__.invoke(arguments[0], { request: arguments[1] })
       .then((value) => { window[arguments[2]] = { value }; }, (error) => { window[arguments[2]] = { error: String(error?.message ?? JSON.stringify(error)) }; });`,
    [name, request, key],
  );
  const result = await waitUntil(() => session.execute('return window[arguments[0]] ?? null;', [key]), `${name} to answer`);
  if (result.error) throw new Error(`${name} failed: ${result.error}`);
  return result.value;
}

/** What the page animates now (CSS animations and transitions, Web Animations), by element. */
function animations(session) {
  return session.execute(`
    const running = document.getAnimations().filter((a) => a.playState === 'running');
    if (running.length === 0) return 'none';
    return running
      .map((a) => {
        const target = a.effect && a.effect.target;
        const name = a.animationName || a.transitionProperty || a.id || 'animation';
        const where = target ? target.tagName.toLowerCase() + (target.className ? '.' + String(target.className).trim().split(/\\s+/).join('.') : '') : '?';
        return name + ' on ' + where;
      })
      .join(', ');
  `);
}

const FIRST_PAINT = `
  const paint = performance.getEntriesByType('paint').find((entry) => entry.name === 'first-contentful-paint');
  return paint ? performance.timeOrigin + paint.startTime : null;
`;

async function launch(driver) {
  const session = await Session.create(driver.baseUrl, CAPABILITIES, 60_000);
  const [pid] = await waitUntil(() => {
    const found = processesOf(COLLOQUY_BIN);
    return found.length > 0 ? found : null;
  }, 'the app process');
  return { session, pid };
}

async function quit(session) {
  await session.delete().catch(() => {});
  await waitUntil(() => processesOf(COLLOQUY_BIN).length === 0, 'the app to exit', 20_000);
  // WebKitWebDriver may still be ending the session: a new one asked for at once can hang.
  await sleep(2_000);
}

async function desktop(options, rows) {
  const home = mkdtempSync(path.join(os.tmpdir(), 'colloquy-desktop-bench-'));
  process.env.COLLOQUY_DATA_DIR = path.join(home, 'data');
  process.env.XDG_DATA_HOME = path.join(home, 'xdg-data');
  process.env.XDG_CACHE_HOME = path.join(home, 'xdg-cache');
  process.env.XDG_CONFIG_HOME = path.join(home, 'xdg-config');
  mkdirSync(process.env.XDG_CONFIG_HOME, { recursive: true });
  const driver = await TauriDriver.start({
    binary: TAURI_DRIVER,
    nativeDriver: WEBKIT_WEBDRIVER,
    logPath: path.join(home, 'driver.log'),
  });
  let session = null;
  try {
    // First launch: the demo provider, so later launches open on the main screen.
    ({ session } = await launch(driver));
    await waitUntil(() => session.execute('return !!document.querySelector(\'[data-testid="demo-provider-button"]\');'), 'onboarding');
    await session.execute('document.querySelector(\'[data-testid="demo-provider-button"]\').click();');
    await waitUntil(() => session.execute('return !!document.querySelector(\'[data-testid="new-topic-button"]\');'), 'the main screen');
    await quit(session);

    const starts = [];
    for (let run = 0; run < options.runs; run += 1) {
      const launched = await launch(driver);
      session = launched.session;
      const paintedAt = await waitUntil(() => session.execute(FIRST_PAINT), 'the first contentful paint');
      starts.push(paintedAt - startedAt(launched.pid));
      if (run < options.runs - 1) await quit(session);
    }
    rows.push(['cold start → first contentful paint (warm file cache)', `median ${ms(median(starts))} (${starts.map(ms).join(', ')})`, '< 1 s']);

    const [pid] = processesOf(COLLOQUY_BIN);
    await waitUntil(() => session.execute('return !!document.querySelector(\'[data-testid="new-topic-button"]\');'), 'the main screen');
    await sleep(3_000);
    const processes = tree(pid);
    rows.push(['processes of the app', processes.map(commandName).join(', '), '']);
    rows.push(['memory idle, no topic open', mem(memory(tree(pid))), '< 150 MB in all']);
    rows.push(['  by process', byProcess(tree(pid)), '']);
    rows.push([`idle CPU over ${options.idleSeconds} s, no topic open`, await idleCpu(tree(pid), options.idleSeconds), '~0']);
    rows.push(['animations running in the page, idle', await animations(session), 'none']);

    // A 2,000-message topic, imported as the UI's import does, then opened.
    const providers = await invoke(session, 'providers_list', {});
    const model = { providerId: providers[0].id, model: providers[0].defaultModel };
    const report = await invoke(session, 'topics_import', { content: JSON.stringify(longTopicExport('Long topic', TOPIC_TURNS, model)) });
    const topicId = report.imported[0].topicId;
    // Opened as a window opens it: its address names the topic.
    await session.execute('location.hash = `topic=${arguments[0]}`; location.reload();', [topicId]);
    await waitUntil(
      () => session.execute('return [...document.querySelectorAll(\'[data-testid="message"]\')].some((m) => m.innerText.includes(arguments[0]));', [`Answer ${TOPIC_TURNS - 1}`]),
      'the long topic’s last message',
    );
    await sleep(3_000);
    rows.push([`memory idle, a ${TOPIC_TURNS * 2}-message topic open`, mem(memory(tree(pid))), '< 150 MB in all']);
    rows.push(['  by process', byProcess(tree(pid)), '']);
    const cpu = await idleCpu(tree(pid), options.idleSeconds);
    rows.push([`idle CPU over ${options.idleSeconds} s, the long topic open`, cpu, '~0']);
    rows.push(['animations running in the page, the long topic open', await animations(session), 'none']);

    // Replies from the built-in demo model, in a new topic.
    await session.execute('document.querySelector(\'[data-testid="new-topic-button"]\').click();');
    // The list is virtualized: only messages near the end are in the page, so a message is
    // found by its text, not counted.
    const shown = (role, text, status) =>
      session.execute(
        `const messages = [...document.querySelectorAll('[data-testid="message"][data-role="' + arguments[0] + '"]')];
         const last = messages[messages.length - 1];
         return !!last && last.innerText.includes(arguments[1]) && (!arguments[2] || arguments[2].includes(last.getAttribute('data-status')));`,
        [role, text, status],
      );
    for (let i = 0; i < options.replies; i += 1) {
      const question = `Question ${i} about Rust`;
      // Sent once the composer takes it (a send right after a reply ends may find it busy).
      await waitUntil(async () => {
        if (await shown('user', question)) return true;
        const composer = await session.waitFor('[data-testid="composer-input"]');
        await session.type(composer, question);
        await session.execute('const b = document.querySelector(\'[data-testid="send-button"]\'); if (b && !b.disabled) b.click();');
        await sleep(1_000);
        return shown('user', question);
      }, `message ${i + 1} to be sent`);
      await waitUntil(() => shown('assistant', question, ['success', 'error', 'paused']), `reply ${i + 1}`, 120_000);
    }
    await sleep(3_000);
    rows.push([`memory after streaming ${options.replies} replies`, mem(memory(tree(pid))), '< 150 MB in all']);
    rows.push(['  by process', byProcess(tree(pid)), '']);
    await quit(session);
    return topicId;
  } catch (error) {
    console.error(`tauri-driver / app output:\n${driver.logTail(60)}`);
    if (session) {
      const shot = path.join(REPO, 'test-artifacts', 'desktop-bench-failure.png');
      mkdirSync(path.dirname(shot), { recursive: true });
      await session.screenshot().then((png) => writeFileSync(shot, png), () => {});
      console.error(`screenshot: ${shot}`);
    }
    throw error;
  } finally {
    await driver.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

// ---- colloquy serve ----

async function serve(options, rows) {
  const home = mkdtempSync(path.join(os.tmpdir(), 'colloquy-serve-bench-'));
  const port = await freePort();
  const token = 'bench-token-0123456789abcdef';
  const started = Date.now();
  const child = spawn(COLLOQUY_BIN, ['serve', '--port', String(port), '--data-dir', path.join(home, 'data'), '--token', token], {
    stdio: ['ignore', 'ignore', 'ignore'],
    detached: true,
  });
  const base = `http://127.0.0.1:${port}`;
  const api = async (name, body) => {
    const response = await fetch(`${base}/api/${name}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${name}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  try {
    await waitUntil(async () => (await fetch(`${base}/`).catch(() => null))?.ok, '`colloquy serve` to answer', 30_000);
    rows.push(['`colloquy serve`: start → first answer', ms(Date.now() - started), '']);
    await sleep(2_000);
    rows.push(['`colloquy serve`: memory idle', mem(memory(tree(child.pid))), '']);
    const provider = await api('provider_demo', {});
    const report = await api('topics_import', {
      content: JSON.stringify(longTopicExport('Long topic', TOPIC_TURNS, { providerId: provider.id, model: provider.defaultModel })),
    });
    await api('messages_page', { topicId: report.imported[0].topicId });
    await sleep(2_000);
    rows.push([`\`colloquy serve\`: memory after importing and reading a ${TOPIC_TURNS * 2}-message topic`, mem(memory(tree(child.pid))), '']);
    const cpu = await idleCpu(tree(child.pid), options.idleSeconds);
    rows.push([`\`colloquy serve\`: idle CPU over ${options.idleSeconds} s`, cpu, '~0']);
  } finally {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
    await sleep(500);
    rmSync(home, { recursive: true, force: true });
  }
}

/** A page with one line of text that reports its first contentful paint to the server it came from. */
const FLOOR_PAGE = `<!doctype html>
<meta charset="utf-8">
<title>WebKitGTK floor</title>
<p>One line of text.</p>
<script>
  new PerformanceObserver((list) => {
    const paint = list.getEntries().find((entry) => entry.name === 'first-contentful-paint');
    if (paint) fetch('/painted', { method: 'POST', body: String(performance.timeOrigin + paint.startTime) });
  }).observe({ type: 'paint', buffered: true });
</script>`;

/**
 * WebKitGTK's own cold start: MiniBrowser, the small browser the library ships, started on
 * a one-line page served from loopback, from its process's start to that page's first
 * contentful paint (measured as the app's is). No app can show its window sooner with
 * this WebKitGTK on this machine.
 */
async function webkitFloor(options, rows) {
  const measure = 'WebKitGTK alone: its MiniBrowser, cold start → first contentful paint of a one-line page';
  if (!existsSync(MINIBROWSER)) {
    rows.push([measure, `not measured: no ${MINIBROWSER} (set WEBKIT_MINIBROWSER)`, 'the floor']);
    return;
  }
  let painted = null;
  const server = http.createServer((request, response) => {
    if (request.method === 'POST' && request.url === '/painted') {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        painted?.(Number(body));
        response.end();
      });
    } else if (request.url === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(FLOOR_PAGE);
    } else {
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  const home = mkdtempSync(path.join(os.tmpdir(), 'colloquy-webkit-floor-'));
  // Its own caches and settings, as the app's runs have.
  const env = { ...process.env, XDG_DATA_HOME: path.join(home, 'data'), XDG_CACHE_HOME: path.join(home, 'cache'), XDG_CONFIG_HOME: path.join(home, 'config') };
  const starts = [];
  try {
    for (let run = 0; run < options.runs; run += 1) {
      const paint = new Promise((resolve) => (painted = resolve));
      const child = spawn(MINIBROWSER, [url], { env, stdio: 'ignore', detached: true });
      const started = await waitUntil(() => {
        try {
          return startedAt(child.pid);
        } catch {
          return null;
        }
      }, 'MiniBrowser to start');
      let timer;
      const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('MiniBrowser painted nothing within 60 s')), 60_000)));
      try {
        starts.push((await Promise.race([paint, timeout])) - started);
      } finally {
        clearTimeout(timer);
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          // Already gone.
        }
      }
      await waitUntil(() => tree(child.pid).every((pid) => !existsSync(`/proc/${pid}`)) || child.exitCode !== null, 'MiniBrowser to exit', 20_000);
      await sleep(1_000);
    }
  } finally {
    server.close();
    rmSync(home, { recursive: true, force: true });
  }
  rows.push([measure, `median ${ms(median(starts))} (${starts.map(ms).join(', ')})`, 'the floor under the < 1 s goal']);
}

// ---- output ----

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const ms = (value) => `${Math.round(value)} ms`;
const mb = (kib) => `${(kib / 1024).toFixed(1)} MB`;
const mem = ({ rss, pss }) => `PSS ${mb(pss)} · RSS ${mb(rss)}`;

function machine() {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  return `${cpu}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`;
}

const options = parseArgs(process.argv.slice(2));
if (!process.env.DISPLAY) throw new Error('no display: run under xvfb-run');
const rows = [];
const size = statSync(COLLOQUY_BIN).size;
rows.push([`binary size (\`${path.relative(REPO, COLLOQUY_BIN)}\`, desktop and \`serve\` in one)`, mb(size / 1024), '< 25 MB']);
console.log(`Machine: ${machine()}`);
console.log(`Binary: ${COLLOQUY_BIN}; runs ${options.runs}, idle ${options.idleSeconds} s, replies ${options.replies}\n`);
let failed = null;
try {
  if (options.only.includes('desktop')) await desktop(options, rows);
  if (options.only.includes('serve')) await serve(options, rows);
  if (options.only.includes('webkit')) await webkitFloor(options, rows);
} catch (error) {
  failed = error;
}
console.log('| measure | result | goal |');
console.log('|---|---|---|');
for (const [measure, result, goal] of rows) console.log(`| ${measure} | ${result} | ${goal} |`);
console.log(`\nLoad at the end: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
if (failed) {
  console.error(failed);
  process.exit(1);
}
