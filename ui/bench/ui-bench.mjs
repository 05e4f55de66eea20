// `cargo xtask bench ui`: the UI in headless Chromium against `colloquy serve` and the
// scripted testkit, printed as a Markdown table (results in docs/benchmarks.md). Not a
// test: it asserts nothing, it measures. Run `node bench/ui-bench.mjs --help` in ui/.
//
// Measured in the page: long tasks (PerformanceObserver 'longtask'), frames (a
// requestAnimationFrame counter running only while a section measures), JS heap and DOM
// nodes (CDP Performance.getMetrics after a forced GC), busy time (CDP TaskDuration).

import { gzipSync, brotliCompressSync, constants as zlib } from 'node:zlib';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, TOKEN, UI_DIST, openNewTopic, startServer, startTestkit, topicItem } from '../e2e/harness.mjs';
import { seedTopic } from '../e2e/seed.mjs';

const SECTIONS = ['stream', 'open', 'replies', 'bundle', 'soak'];
/** What runs without --only: all but the soak, which takes its own --soak-minutes. */
const DEFAULT_SECTIONS = ['stream', 'open', 'replies', 'bundle'];
const USAGE = `Usage: node bench/ui-bench.mjs [--only SECTION,...] [--runs N] [--messages N] [--lines N] [--replies N] [--soak-minutes N] [--quick]
  --only      some sections of ${SECTIONS.join(', ')} (default: all but soak; 'open' also scrolls and streams in the long topic)
  --runs      runs per median (default 3)
  --messages  messages in the long topic (default 10000)
  --lines     lines of the long streamed markdown reply (default 2000)
  --replies   replies streamed for the heap/DOM check (default 30)
  --soak-minutes  how long the soak streams replies back to back, sampling heap and DOM each minute (default 60)
  --quick     small inputs, to check the benchmark itself works
Binaries: COLLOQUY_BIN, COLLOQUY_TESTKIT_BIN (default target/debug), CHROMIUM_BIN.`;

const VIEWPORT = { width: 1200, height: 800 };

function parseArgs(argv) {
  const options = { runs: 3, messages: 10_000, lines: 2_000, replies: 30, soakMinutes: 60, only: DEFAULT_SECTIONS };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const number = () => {
      const value = Number(argv[++i]);
      if (!Number.isInteger(value) || value <= 0) throw new Error(`${flag} wants a positive whole number`);
      return value;
    };
    if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else if (flag === '--only') {
      options.only = (argv[++i] ?? '').split(',');
      const unknown = options.only.filter((name) => !SECTIONS.includes(name));
      if (unknown.length > 0) throw new Error(`unknown section ${unknown.join(', ')} (sections: ${SECTIONS.join(', ')})`);
    } else if (flag === '--runs') options.runs = number();
    else if (flag === '--messages') options.messages = number();
    else if (flag === '--lines') options.lines = number();
    else if (flag === '--replies') options.replies = number();
    else if (flag === '--soak-minutes') options.soakMinutes = number();
    else if (flag === '--quick') Object.assign(options, { runs: 1, messages: 400, lines: 200, replies: 5, soakMinutes: 2 });
    else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  return options;
}

// ---- In-page probes ----

/** Installed before any app script: records long tasks and when a message first shows. */
function probes() {
  window.__bench = { longTasks: [], firstMessageAt: null };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__bench.longTasks.push({ start: entry.startTime, duration: entry.duration });
  }).observe({ type: 'longtask', buffered: true });
  const seen = new MutationObserver(() => {
    if (window.__bench.firstMessageAt === null && document.querySelector('[data-testid="message"]')) {
      // The frame after the message is in the DOM is when it is painted.
      requestAnimationFrame(() => {
        window.__bench.firstMessageAt ??= performance.now();
      });
      seen.disconnect();
    }
  });
  document.addEventListener('DOMContentLoaded', () => seen.observe(document.body, { childList: true, subtree: true }));
}

/** Starts counting frames; `stopFrames` returns the frame times (ms). */
async function startFrames(page) {
  await page.evaluate(() => {
    const frames = [];
    let last = performance.now();
    let running = true;
    const tick = (now) => {
      frames.push(now - last);
      last = now;
      if (running) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    window.__frames = { frames, stop: () => (running = false), startedAt: performance.now() };
  });
}

async function stopFrames(page) {
  return page.evaluate(() => {
    window.__frames.stop();
    return { frames: window.__frames.frames.slice(1), elapsed: performance.now() - window.__frames.startedAt };
  });
}

async function longTasksSince(page, since) {
  return page.evaluate((from) => window.__bench.longTasks.filter((task) => task.start >= from), since);
}

const now = (page) => page.evaluate(() => performance.now());

async function metrics(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  await cdp.send('HeapProfiler.collectGarbage');
  const { metrics: list } = await cdp.send('Performance.getMetrics');
  await cdp.detach();
  const get = (name) => list.find((metric) => metric.name === name)?.value ?? 0;
  return { heapMb: get('JSHeapUsedSize') / 1e6, nodes: get('Nodes') };
}

/** Share of one core the page's main thread was busy over `ms`. */
async function busyShare(page, ms) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const read = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0;
  const before = await read();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = await read();
  await cdp.detach();
  return (after - before) / (ms / 1000);
}

// ---- Page helpers ----

const byTestId = (page, id) => page.locator(`[data-testid="${id}"]`);

async function newPage(browser, url) {
  const context = await browser.newContext({ viewport: VIEWPORT });
  await context.addInitScript(probes);
  const page = await context.newPage();
  page.setDefaultTimeout(120_000);
  if (url) await page.goto(url);
  return page;
}

async function send(page, text) {
  const input = byTestId(page, 'composer-input');
  await input.fill(text);
  await input.press('Enter');
}

/**
 * Sends `text` in the open topic and waits until its reply is stored as success: the
 * last assistant message after the user message with that text (a virtualized list holds
 * only the messages near the window, so nothing is counted).
 */
async function sendAndWait(page, text) {
  await send(page, text);
  await page.waitForFunction(
    (sent) => {
      const users = [...document.querySelectorAll('[data-testid="message"][data-role="user"]')];
      const mine = users.reverse().find((user) => user.textContent.includes(sent));
      if (!mine) return false;
      const replies = [...document.querySelectorAll('[data-testid="message"][data-role="assistant"]')];
      const reply = replies.reverse().find((r) => mine.compareDocumentPosition(r) & Node.DOCUMENT_POSITION_FOLLOWING);
      return reply?.getAttribute('data-status') === 'success';
    },
    text,
    { timeout: 300_000, polling: 100 },
  );
}

function markdownReply(lines) {
  const out = [];
  for (let i = 0; out.length < lines; i += 1) {
    switch (i % 5) {
      case 0:
        out.push(`## Section ${i}\n`, '\n');
        break;
      case 1:
        out.push(`- item ${i} with **bold** text\n`, `- item ${i}b with \`code\`\n`, '\n');
        break;
      case 2:
        out.push('| name | value |\n', '| --- | --- |\n', `| row ${i} | ${i * 7} |\n`, '\n');
        break;
      case 3:
        out.push('```rust\n', `fn f${i}() -> u32 { ${i} }\n`, '```\n', '\n');
        break;
      default:
        out.push(`A paragraph line ${i} with some words to wrap and render.\n`, '\n');
    }
  }
  return out.slice(0, lines);
}

// ---- Stats ----

function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function streamStats(tasks, frames) {
  const fps = frames.frames.length / (frames.elapsed / 1000);
  return { longTasks: tasks.length, longest: Math.max(0, ...tasks.map((t) => t.duration)), fps };
}

// ---- Sections ----

async function streamLong(stack, browser, lines) {
  const page = await newPage(browser, stack.server.appUrl);
  await byTestId(page, 'new-topic-button').click();
  await page.locator('.chat .empty-chat').waitFor();
  await stack.testkit.script({ chunks: markdownReply(lines), tokenDelayMs: 5 });
  const from = await now(page);
  await startFrames(page);
  await sendAndWait(page, 'Write a long markdown answer');
  const frames = await stopFrames(page);
  const stats = streamStats(await longTasksSince(page, from), frames);
  await page.context().close();
  return stats;
}

async function openLong(stack, browser, topicId) {
  const page = await newPage(browser);
  await page.goto(`${stack.server.origin}/#token=${stack.token}&topic=${topicId}`);
  await byTestId(page, 'composer-input').waitFor();
  await page.waitForFunction(() => window.__bench.firstMessageAt !== null, undefined, { timeout: 120_000, polling: 50 });
  // Interactive: the main thread has had 1 s without a long task.
  let quietSince = Date.now();
  let seen = 0;
  while (Date.now() - quietSince < 1000) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const count = await page.evaluate(() => window.__bench.longTasks.length);
    if (count !== seen) {
      seen = count;
      quietSince = Date.now();
    }
  }
  const timing = await page.evaluate(() => {
    const tasks = window.__bench.longTasks;
    const lastEnd = tasks.length ? Math.max(...tasks.map((t) => t.start + t.duration)) : 0;
    return { firstMessage: window.__bench.firstMessageAt, interactive: Math.max(window.__bench.firstMessageAt, lastEnd) };
  });
  const { heapMb, nodes } = await metrics(page);
  return { page, firstMessage: timing.firstMessage, interactive: timing.interactive, heapMb, nodes };
}

/** Scrolls the message list from the bottom to the top, as a wheel would, a step per frame. */
async function scrollToTop(page) {
  const from = await now(page);
  await startFrames(page);
  await page.evaluate(
    () =>
      new Promise((resolve) => {
        const list = document.querySelector('.message-list');
        const started = performance.now();
        const step = () => {
          list.scrollTop = Math.max(0, list.scrollTop - 400);
          // A paged list grows above: done when the first message is on screen.
          const first = list.querySelector('[data-testid="message"][data-role="user"]');
          const atStart = list.scrollTop === 0 && (!first || first.textContent.includes('Question 0'));
          if (atStart || performance.now() - started > 60_000) resolve();
          else requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
      }),
  );
  const frames = await stopFrames(page);
  const tasks = await longTasksSince(page, from);
  // How far up it got: the oldest question shown, and how far 400 px a frame went (a
  // topic taller than that in 60 s cannot be crossed at this speed, paged or not).
  const reached = await page.evaluate(() => {
    const users = document.querySelectorAll('.message-list [data-testid="message"][data-role="user"]');
    const texts = [...users].map((m) => m.querySelector('[data-testid="message-text"]')?.textContent ?? '');
    const numbers = texts.map((text) => Number(/Question (\d+)/.exec(text)?.[1])).filter(Number.isFinite);
    return numbers.length > 0 ? Math.min(...numbers) : NaN;
  });
  // A 60 Hz display paints every 16.7 ms, so a p95 frame time cannot go below that however
  // smooth the scroll is: what tells a dropped frame is a gap of more than one and a half
  // frames (the compositor skipped a vsync).
  const dropped = frames.frames.filter((frame) => frame > 25).length / frames.frames.length;
  return {
    p95: percentile(frames.frames, 95),
    dropped,
    longTasks: tasks.length,
    elapsed: frames.elapsed,
    reached,
    travelled: frames.frames.length * 400,
  };
}

async function streamShortInLong(stack, page) {
  await page.evaluate(() => {
    const list = document.querySelector('.message-list');
    list.scrollTop = list.scrollHeight;
  });
  await stack.testkit.script({ chunks: Array.from({ length: 200 }, (_, i) => `word${i} `), tokenDelayMs: 5 });
  const from = await now(page);
  await startFrames(page);
  await sendAndWait(page, `A short question (${Date.now()})`);
  const frames = await stopFrames(page);
  return streamStats(await longTasksSince(page, from), frames);
}

async function manyReplies(stack, browser, replies) {
  const page = await newPage(browser, stack.server.appUrl);
  await byTestId(page, 'new-topic-button').click();
  await page.locator('.chat .empty-chat').waitFor();
  const reply = markdownReply(20);
  let after5 = null;
  for (let i = 0; i < replies; i += 1) {
    await stack.testkit.script({ chunks: reply, tokenDelayMs: 2 });
    await sendAndWait(page, `Question number ${i}.`);
    if (i === Math.min(4, replies - 1)) after5 = await metrics(page);
  }
  const end = await metrics(page);
  const idle = await busyShare(page, 10_000);
  await page.context().close();
  return { heap5: after5.heapMb, heapEnd: end.heapMb, nodes5: after5.nodes, nodesEnd: end.nodes, idleCpu: idle };
}

/** Least-squares slope of `y` over `x`. */
function slope(points) {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((sum, p) => sum + p.x, 0) / n;
  const my = points.reduce((sum, p) => sum + p.y, 0) / n;
  const sxx = points.reduce((sum, p) => sum + (p.x - mx) ** 2, 0);
  const sxy = points.reduce((sum, p) => sum + (p.x - mx) * (p.y - my), 0);
  return sxx === 0 ? NaN : sxy / sxx;
}

const SOAK_TOPICS = 3;
const SOAK_REPLIES_PER_VISIT = 5;

/**
 * Streams replies back to back for `minutes`, in turn into the long topic and two new
 * ones (switching in the sidebar after every few replies), sampling the JS heap and DOM
 * nodes (after a forced GC) once a minute. One page for the whole soak: what a window
 * left open for an hour holds.
 */
async function soak(stack, browser, minutes, longTopicId) {
  const page = await newPage(browser, stack.server.appUrl);
  // The new topics are made on their first visit (an empty topic left is not kept).
  const topics = [longTopicId];
  const reply = markdownReply(20);
  const samples = [];
  const started = Date.now();
  const sample = async (replies) => {
    const { heapMb, nodes } = await metrics(page);
    const minute = (Date.now() - started) / 60_000;
    samples.push({ minute, heapMb, nodes, replies });
    log(`soak: ${minute.toFixed(1)} min, ${replies} replies, JS heap ${heapMb.toFixed(1)} MB, ${nodes} DOM nodes`);
  };
  let replies = 0;
  let visit = 0;
  let nextSampleAt = started;
  while (Date.now() - started < minutes * 60_000) {
    if (visit < SOAK_TOPICS && visit >= topics.length) {
      topics.push(await openNewTopic(page));
    } else {
      const topicId = topics[visit % SOAK_TOPICS];
      await topicItem(page, topicId).click();
      await page.waitForFunction((id) => new URLSearchParams(location.hash.slice(1)).get('topic') === id, topicId);
    }
    visit += 1;
    await byTestId(page, 'composer-input').waitFor();
    for (let i = 0; i < SOAK_REPLIES_PER_VISIT; i += 1) {
      await stack.testkit.script({ chunks: reply, tokenDelayMs: 2 });
      await sendAndWait(page, `Soak question ${replies}.`);
      replies += 1;
      if (Date.now() >= nextSampleAt) {
        await sample(replies);
        nextSampleAt += 60_000;
      }
    }
  }
  await sample(replies);
  await page.context().close();
  const perHour = (key, from = 0) => slope(samples.slice(from).map((s) => ({ x: s.minute / 60, y: s[key] })));
  const half = Math.floor(samples.length / 2);
  const stats = (key) => ({
    first: samples[0][key],
    last: samples.at(-1)[key],
    max: Math.max(...samples.map((s) => s[key])),
    perHour: perHour(key),
    perHourLastHalf: perHour(key, half),
  });
  return { minutes: samples.at(-1).minute, replies, samples, heap: stats('heapMb'), nodes: stats('nodes') };
}

async function bundle(stack, browser) {
  const files = [];
  const walk = async (dir) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (/\.(js|css|html)$/.test(entry.name)) files.push(full);
    }
  };
  await walk(UI_DIST);
  let raw = 0;
  let gzip = 0;
  let brotli = 0;
  for (const file of files) {
    const bytes = await readFile(file);
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
    brotli += brotliCompressSync(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }).length;
  }
  // What a cold load fetches: bytes on the wire and the first contentful paint.
  const context = await browser.newContext({ viewport: VIEWPORT });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  // The app's own files only (not the API's answers): js, css, html, fonts, wasm.
  let wire = 0;
  let decoded = 0;
  const assets = new Set();
  const encodings = new Set();
  cdp.on('Network.responseReceived', (event) => {
    if (!['Document', 'Script', 'Stylesheet', 'Font'].includes(event.type) && !event.response.url.includes('/assets/')) return;
    assets.add(event.requestId);
    const headers = Object.fromEntries(Object.entries(event.response.headers).map(([k, v]) => [k.toLowerCase(), v]));
    encodings.add(headers['content-encoding'] ?? 'identity');
  });
  cdp.on('Network.dataReceived', (event) => {
    if (assets.has(event.requestId)) decoded += event.dataLength;
  });
  cdp.on('Network.loadingFinished', (event) => {
    if (assets.has(event.requestId)) wire += event.encodedDataLength;
  });
  await page.goto(stack.server.appUrl);
  await byTestId(page, 'new-topic-button').waitFor();
  // The event stream stays open: no 'networkidle'; lazy chunks load within this.
  await page.waitForTimeout(1500);
  const fcp = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN);
  await context.close();
  return { files: files.length, raw, gzip, brotli, wire, decoded, fcp, encodings: [...encodings].join('+') };
}

// ---- Main ----

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'colloquy-bench-ui-'));
  const testkit = await startTestkit({ tokenDelayMs: 5 });
  const server = await startServer(dataDir);
  const stack = { testkit, server, token: TOKEN };
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const loadBefore = os.loadavg();
  const results = { long: [], open: [], scroll: [], short: [], many: [], bundle: null, soak: null, coldServer: NaN };
  try {
    const provider = await server.api('provider_create', { name: 'Testkit', baseUrl: testkit.url, models: ['scripted'], defaultModel: 'scripted' });
    const model = { providerId: provider.id, model: 'scripted' };
    const topicId = await seedTopic(server, { title: `${options.messages} messages`, turns: Math.floor(options.messages / 2), model });

    const only = (section) => options.only.includes(section);
    if (only('open') || only('bundle')) {
      // The server's first answers are not its usual ones: it compresses each asset on its
      // first request and keeps it, and SQLite reads the topic from disk. The first open
      // after the start is reported on its own row and not in the medians.
      log('first open after the server started');
      const first = await openLong(stack, browser, topicId);
      results.coldServer = first.firstMessage;
      await first.page.context().close();
    }
    // The cold load opens the most recent topic, the long one: its first paint is measured
    // with the code blocks (and their grammars) it shows.
    if (only('bundle')) results.bundle = await bundle(stack, browser);
    for (let run = 0; run < options.runs; run += 1) {
      if (only('stream')) {
        log(`run ${run + 1}/${options.runs}: long reply`);
        results.long.push(await streamLong(stack, browser, options.lines));
      }
      if (only('open')) {
        log(`run ${run + 1}/${options.runs}: open ${options.messages} messages`);
        const opened = await openLong(stack, browser, topicId);
        results.open.push(opened);
        log(`run ${run + 1}/${options.runs}: scroll`);
        results.scroll.push(await scrollToTop(opened.page));
        log(`run ${run + 1}/${options.runs}: short reply in the long topic`);
        results.short.push(await streamShortInLong(stack, opened.page));
        await opened.page.context().close();
      }
    }
    if (only('replies')) {
      log(`${options.replies} replies`);
      results.many.push(await manyReplies(stack, browser, options.replies));
    }
    if (only('soak')) {
      log(`soak: ${options.soakMinutes} min of replies streamed back to back in ${SOAK_TOPICS} topics`);
      results.soak = await soak(stack, browser, options.soakMinutes, topicId);
    }
  } finally {
    await browser.close().catch(() => {});
    await server.stop();
    await testkit.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  print(options, results, loadBefore, os.loadavg());
}

function log(line) {
  process.stderr.write(`bench ui: ${line}\n`);
}

const fixed = (value, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
const kb = (bytes) => (Number.isFinite(bytes) ? `${(bytes / 1024).toFixed(0)} KB` : '–');

function print(options, results, loadBefore, loadAfter) {
  const cpus = os.cpus();
  const med = (list, key) => median(list.map((item) => item[key]));
  console.log(`Machine: ${cpus[0]?.model ?? 'unknown CPU'} × ${cpus.length}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.platform()} ${os.release()}`);
  console.log(`Load average (1/5/15 min): before ${loadBefore.map((v) => v.toFixed(2)).join(' ')}, after ${loadAfter.map((v) => v.toFixed(2)).join(' ')}`);
  console.log(
    `Inputs: ${options.lines}-line markdown reply at 200 chunks/s; ${options.messages}-message topic; ${options.replies} replies of 20 lines; medians of ${options.runs} run(s); viewport ${VIEWPORT.width}×${VIEWPORT.height}\n`,
  );
  const b = results.bundle ?? { raw: NaN, gzip: NaN, brotli: NaN, files: 0, wire: NaN, decoded: NaN, fcp: NaN, encodings: '–' };
  const m = results.many[0] ?? { heap5: NaN, heapEnd: NaN, nodes5: NaN, nodesEnd: NaN, idleCpu: NaN };
  const rows = [
    ['1a. long reply: long tasks > 50 ms / longest / fps', `${fixed(med(results.long, 'longTasks'))} / ${fixed(med(results.long, 'longest'))} ms / ${fixed(med(results.long, 'fps'))}`],
    ['1b. short reply in the long topic: long tasks / longest / fps', `${fixed(med(results.short, 'longTasks'))} / ${fixed(med(results.short, 'longest'))} ms / ${fixed(med(results.short, 'fps'))}`],
    ['2. open the long topic: first message painted / interactive', `${fixed(med(results.open, 'firstMessage'))} ms / ${fixed(med(results.open, 'interactive'))} ms`],
    ['2. the first open after the server started: first message painted', `${fixed(results.coldServer)} ms`],
    ['2. JS heap / DOM nodes after opening', `${fixed(med(results.open, 'heapMb'), 1)} MB / ${fixed(med(results.open, 'nodes'))}`],
    ['3. scroll bottom → top: p95 frame / long tasks / time', `${fixed(med(results.scroll, 'p95'), 1)} ms / ${fixed(med(results.scroll, 'longTasks'))} / ${fixed(med(results.scroll, 'elapsed'))} ms`],
    ['3. scroll: frames dropped (a gap over 25 ms, a missed 60 Hz vsync)', `${fixed(med(results.scroll, 'dropped') * 100, 1)} %`],
    ['3. scroll: oldest question reached (0 = the top) / distance scrolled', `${fixed(med(results.scroll, 'reached'))} / ${fixed(med(results.scroll, 'travelled') / 1000)} k px`],
    [`4. JS heap after 5 → ${options.replies} replies`, `${fixed(m.heap5, 1)} → ${fixed(m.heapEnd, 1)} MB`],
    [`4. DOM nodes after 5 → ${options.replies} replies`, `${fixed(m.nodes5)} → ${fixed(m.nodesEnd)}`],
    ['4. idle CPU over 10 s (share of one core)', `${fixed(m.idleCpu * 100, 1)} %`],
    ['5. bundle (js+css+html): raw / gzip / brotli', `${kb(b.raw)} / ${kb(b.gzip)} / ${kb(b.brotli)} (${b.files} files)`],
    ['5. cold load, app files: bytes on the wire / decoded, encoding', `${kb(b.wire)} / ${kb(b.decoded)}, ${b.encodings}`],
    ['5. cold load: first contentful paint', `${fixed(b.fcp)} ms`],
  ];
  if (options.only.some((section) => section !== 'soak')) {
    console.log('| Measurement | Result |');
    console.log('| --- | --- |');
    for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
  }
  if (results.soak) printSoak(results.soak);
}

function printSoak(soakResult) {
  const { heap, nodes } = soakResult;
  console.log(
    `\nSoak: ${fixed(soakResult.minutes, 1)} min, ${soakResult.replies} replies of 20 markdown lines streamed back to back, ` +
      `${SOAK_REPLIES_PER_VISIT} at a time in each of ${SOAK_TOPICS} topics in turn (one the long topic); sampled once a minute after a forced GC\n`,
  );
  console.log('| Soak | first | last | max | slope per hour | slope per hour, last half |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  console.log(`| JS heap | ${fixed(heap.first, 1)} MB | ${fixed(heap.last, 1)} MB | ${fixed(heap.max, 1)} MB | ${fixed(heap.perHour, 2)} MB | ${fixed(heap.perHourLastHalf, 2)} MB |`);
  console.log(`| DOM nodes | ${fixed(nodes.first)} | ${fixed(nodes.last)} | ${fixed(nodes.max)} | ${fixed(nodes.perHour)} | ${fixed(nodes.perHourLastHalf)} |`);
  console.log('\n| Minute | Replies | JS heap | DOM nodes |');
  console.log('| --- | --- | --- | --- |');
  for (const s of soakResult.samples) console.log(`| ${fixed(s.minute, 1)} | ${s.replies} | ${fixed(s.heapMb, 1)} MB | ${fixed(s.nodes)} |`);
}

main().catch((error) => {
  console.error(`error: ${error.stack ?? error}`);
  process.exit(1);
});
