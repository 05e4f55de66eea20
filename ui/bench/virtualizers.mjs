// `node bench/virtualizers.mjs` (in ui/): react-virtuoso, virtua and @tanstack/react-virtual
// drawing the same chat-like list (bench/virtualizers/), measured in headless Chromium and
// printed as a Markdown table (results in docs/benchmarks.md, issue 15). Not a test: it
// asserts nothing, it measures. `node bench/virtualizers.mjs --help` lists the options.

import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../e2e/harness.mjs';


const UI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PAGE = path.join(UI, 'bench/virtualizers');
const DIST = path.join(PAGE, 'dist');
/** The lists of bench/virtualizers/main.tsx: the package each draws with, and its heading. */
const LIBS = {
  virtuoso: { pkg: 'react-virtuoso', heading: 'react-virtuoso (as MessageList)' },
  'virtuoso-sync': { pkg: 'react-virtuoso', heading: 'react-virtuoso + skipAnimationFrameInResizeObserver' },
  virtua: { pkg: 'virtua', heading: 'virtua' },
  tanstack: { pkg: '@tanstack/react-virtual', heading: '@tanstack/react-virtual' },
};
/** The chunk of bench/virtualizers/lists/ that holds each list. */
const CHUNK = { virtuoso: 'virtuoso', 'virtuoso-sync': 'virtuoso', virtua: 'virtua', tanstack: 'tanstack' };
const USAGE = `Usage: node bench/virtualizers.mjs [--runs N] [--messages N] [--only LIB,...] [--no-build] [--quick]
  --runs      runs per library; medians are printed (default 5)
  --messages  messages in the list (default 10000)
  --only      some of ${Object.keys(LIBS).join(', ')} (default: all)
  --no-build  use bench/virtualizers/dist as built
  --quick     1 run of 500 messages, to check the benchmark itself works
Browser: CHROMIUM_BIN (default /usr/bin/chromium).`;

const VIEWPORT = { width: 1280, height: 800 };
/** Scrolling up like a fast wheel: px per frame, for this many frames from the end. */
const WHEEL_STEP = 400;
const WHEEL_FRAMES = 300;
/** Then on to the top like a fling or a scrollbar drag (10,000 messages are ~2,000,000 px). */
const FLING_STEP = 2_000;
/** A scroll to the top stops here if it has not arrived. */
const SCROLL_CAP_MS = 90_000;
const PREPEND = 50;
const GROWTHS = 200;

function parseArgs(argv) {
  const options = { runs: 5, messages: 10_000, only: Object.keys(LIBS), build: true };
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
    } else if (flag === '--runs') options.runs = number();
    else if (flag === '--messages') options.messages = number();
    else if (flag === '--only') {
      options.only = (argv[++i] ?? '').split(',');
      const unknown = options.only.filter((name) => !(name in LIBS));
      if (unknown.length > 0) throw new Error(`unknown library ${unknown.join(', ')} (${Object.keys(LIBS).join(', ')})`);
    } else if (flag === '--no-build') options.build = false;
    else if (flag === '--quick') Object.assign(options, { runs: 1, messages: 500 });
    else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  return options;
}

// ---- Build and serve ----

function build() {
  const vite = path.join(UI, 'node_modules/vite/bin/vite.js');
  const result = spawnSync(process.execPath, [vite, 'build', '--config', path.join(PAGE, 'vite.config.ts')], { cwd: UI, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`vite build failed (${result.status ?? result.signal})`);
}

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json' };

/** Serves DIST on a free port of 127.0.0.1; closed by the caller. */
function serve() {
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const file = path.join(DIST, url.pathname === '/' ? 'index.html' : path.normalize(url.pathname));
    if (!file.startsWith(DIST)) {
      response.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      response.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Gzip -9 bytes of each library's chunk and the chunks only it imports (its glue included). */
async function bundleBytes() {
  const manifest = JSON.parse(await readFile(path.join(DIST, '.vite/manifest.json'), 'utf8'));
  const gzip = async (file) => gzipSync(await readFile(path.join(DIST, file)), { level: 9 }).length;
  const sizes = {};
  for (const lib of Object.keys(LIBS)) {
    const chunk = manifest[`lists/${CHUNK[lib]}.tsx`];
    const own = [chunk.file, ...(chunk.imports ?? []).filter((key) => !manifest[key].isEntry).map((key) => manifest[key].file)];
    let raw = 0;
    let zipped = 0;
    for (const file of own) {
      raw += (await readFile(path.join(DIST, file))).length;
      zipped += await gzip(file);
    }
    sizes[lib] = { raw, gzip: zipped };
  }
  return sizes;
}

// ---- One run ----

const frames = (page, n) => page.evaluate((count) => new Promise((resolve) => {
  let left = count;
  const tick = () => (--left <= 0 ? resolve() : requestAnimationFrame(tick));
  requestAnimationFrame(tick);
}), n);

/** Waits until `check` (in the page) holds for 30 frames in a row, or `ms` pass; false if not. */
const steady = (page, ms) => page.evaluate((limit) => new Promise((resolve) => {
  let streak = 0;
  const until = performance.now() + limit;
  const tick = (now) => {
    streak = window.__bench.pinned() ? streak + 1 : 0;
    if (streak >= 30) resolve(true);
    else if (now > until) resolve(false);
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}), ms);

async function run(browser, origin, lib, messages) {
  const context = await browser.newContext({ viewport: VIEWPORT });
  const page = await context.newPage();
  page.setDefaultTimeout(120_000);
  try {
    await page.goto(`${origin}/?lib=${lib}&count=${messages}`);
    await page.waitForFunction(() => window.__bench && (window.__bench.bottomAt !== null || window.__bench.error !== null), undefined, { timeout: 120_000, polling: 100 });
    const opened = await page.evaluate(() => ({ bottomAt: window.__bench.bottomAt, error: window.__bench.error, importedAt: window.__bench.listImportedAt }));
    if (opened.error) throw new Error(`${lib}: ${opened.error}`);
    await frames(page, 10);
    const nodesAtEnd = await page.evaluate(() => window.__bench.nodes());

    // (b, c) From the end up, a step a frame: first as a wheel, then flung to the top.
    const scrollUp = async (step, maxFrames) => {
      const scroll = await page.evaluate(([s, cap, max]) => window.__bench.scrollUp(s, cap, max), [step, SCROLL_CAP_MS, maxFrames]);
      const tasks = await page.evaluate((from) => window.__bench.longTasks.filter((task) => task.start >= from), scroll.from);
      return { ...scroll, longTasks: tasks.length };
    };
    const wheel = await scrollUp(WHEEL_STEP, WHEEL_FRAMES);
    const fling = await scrollUp(FLING_STEP, Infinity);

    // (d) Older messages prepended while at the top.
    await frames(page, 30);
    const before = await page.evaluate(() => window.__bench.firstVisible());
    // Watched from the same task as the prepend, so the first frame read is the first painted after it.
    const offsets = await page.evaluate(
      ([key, n]) => {
        window.__bench.prepend(n);
        return window.__bench.paintedOffsets(key, 30);
      },
      [before.key, PREPEND],
    );
    const moved = offsets.map((offset) => (offset === null ? Infinity : Math.abs(offset - before.offset)));

    // (e) A reply streaming into the last message while at the end.
    await page.evaluate(() => window.__bench.scrollToEnd());
    const backAtEnd = await steady(page, 10_000);
    const stream = await page.evaluate((n) => window.__bench.stream(n), GROWTHS);
    const streamTasks = await page.evaluate((from) => window.__bench.longTasks.filter((task) => task.start >= from), stream.from);

    return {
      open: opened.bottomAt,
      imported: opened.importedAt,
      nodesAtEnd,
      wheelP95: percentile(wheel.frames, 95),
      wheelLongTasks: wheel.longTasks,
      nodesScrolling: median(wheel.nodes),
      flingP95: percentile(fling.frames, 95),
      flingLongTasks: fling.longTasks,
      flingMs: fling.elapsed,
      flingFrames: fling.frames.length,
      reachedTop: fling.reachedTop,
      heightAtTop: fling.heightAtEnd,
      prependFirstFrame: moved[0],
      prependMax: Math.max(...moved),
      prependFinal: moved[moved.length - 1],
      backAtEnd,
      paintedMisses: stream.paintedMisses,
      paintedGapMax: Math.max(0, ...stream.paintedGaps),
      settledMisses: stream.settledMisses,
      streamP95: percentile(stream.frames, 95),
      streamLongTasks: streamTasks.length,
    };
  } finally {
    await context.close();
  }
}

// ---- Stats and table ----

function median(values) {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const ms = (v) => (Number.isFinite(v) ? `${Math.round(v).toLocaleString('en-US')} ms` : '–');
const px = (v) => (Number.isFinite(v) ? `${Math.round(v)} px` : 'gone');
const int = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : String(v));
const kb = (v) => `${(v / 1024).toFixed(1)} KB`;

function table(libs, results, sizes, runs) {
  const med = (lib, key) => median(results[lib].map((r) => Number(r[key])));
  const all = (lib, key) => results[lib].map((r) => r[key]);
  const rows = [
    ['a. open at the end: last message painted, steady (from navigation)', (lib) => ms(med(lib, 'open'))],
    ['a. of which: the list chunk loaded / from then to the end shown', (lib) => `${ms(med(lib, 'imported'))} / ${ms(median(results[lib].map((r) => r.open - r.imported)))}`],
    [`b. wheel up from the end, ${WHEEL_STEP} px/frame × ${WHEEL_FRAMES}: p95 frame / long tasks > 50 ms`, (lib) => `${ms(med(lib, 'wheelP95'))} / ${int(med(lib, 'wheelLongTasks'))}`],
    [`b. then flung to the top, ${FLING_STEP.toLocaleString('en-US')} px/frame: p95 frame / long tasks > 50 ms`, (lib) => `${ms(med(lib, 'flingP95'))} / ${int(med(lib, 'flingLongTasks'))}`],
    ['b. the fling: frames / time to the top (runs that got there)', (lib) => `${int(med(lib, 'flingFrames'))} / ${ms(med(lib, 'flingMs'))} (${all(lib, 'reachedTop').filter(Boolean).length} of ${runs})`],
    ['c. DOM nodes at the end / while wheeling up', (lib) => `${int(med(lib, 'nodesAtEnd'))} / ${int(med(lib, 'nodesScrolling'))}`],
    [`d. prepend ${PREPEND} at the top: first visible message moved, first frame painted / max over 30 frames / final`, (lib) => `${px(med(lib, 'prependFirstFrame'))} / ${px(med(lib, 'prependMax'))} / ${px(med(lib, 'prependFinal'))}`],
    ['d. runs where a painted frame had it moved > 2 px or not at all', (lib) => `${all(lib, 'prependMax').filter((v) => !(v <= 2)).length} of ${runs}`],
    [`e. stream (${GROWTHS} growths of the last message): end not shown when painted / 2 frames later`, (lib) => `${int(med(lib, 'paintedMisses'))} / ${int(med(lib, 'settledMisses'))}`],
    ['e. largest gap below the end in a painted frame', (lib) => px(med(lib, 'paintedGapMax'))],
    ['e. streaming: p95 frame / long tasks', (lib) => `${ms(med(lib, 'streamP95'))} / ${int(med(lib, 'streamLongTasks'))}`],
    ['f. library chunk (with its glue): minified / gzip -9', (lib) => `${kb(sizes[lib].raw)} / ${kb(sizes[lib].gzip)}`],
  ];
  const lines = [`| Measurement | ${libs.map((lib) => LIBS[lib].heading).join(' | ')} |`, `| --- |${libs.map(() => ' --- |').join('')}`];
  for (const [label, cell] of rows) lines.push(`| ${label} | ${libs.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.build) build();
  const sizes = await bundleBytes();
  const versions = {};
  for (const lib of options.only) versions[LIBS[lib].pkg] = JSON.parse(await readFile(path.join(UI, 'node_modules', LIBS[lib].pkg, 'package.json'), 'utf8')).version;
  const loadBefore = os.loadavg();
  const server = await serve();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const results = Object.fromEntries(options.only.map((lib) => [lib, []]));
  try {
    // Libraries interleaved run by run, so a noisy minute on the machine hits all alike.
    for (let i = 0; i < options.runs; i += 1) {
      for (const lib of options.only) {
        const result = await run(browser, `http://127.0.0.1:${server.address().port}`, lib, options.messages);
        results[lib].push(result);
        console.error(`run ${i + 1}/${options.runs} ${lib}: ${JSON.stringify(result)}`);
      }
    }
  } finally {
    await browser.close();
    server.close();
  }
  const loadAfter = os.loadavg();
  const load = (l) => l.map((v) => v.toFixed(2)).join(' ');
  console.log('```');
  console.log(`Machine: ${os.cpus()[0]?.model ?? '?'} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.platform()} ${os.release()}`);
  console.log(`Chromium: ${browser.version()}; Node ${process.version}`);
  console.log(`Load average (1/5/15 min): before ${load(loadBefore)}, after ${load(loadAfter)}`);
  console.log(`Libraries: ${Object.entries(versions).map(([pkg, version]) => `${pkg} ${version}`).join(', ')}`);
  console.log(`Inputs: ${options.messages} messages; viewport ${VIEWPORT.width}×${VIEWPORT.height}; medians of ${options.runs} run(s)`);
  console.log('```\n');
  console.log(table(options.only, results, sizes, options.runs));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
