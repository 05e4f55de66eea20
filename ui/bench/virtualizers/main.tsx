// The page of `node bench/virtualizers.mjs`: the same chat-like list drawn by the library
// named in `?lib=`, opened at its end, with `window.__bench` for the driver to measure.

import { createRef, useEffect, useState, type ComponentType, type Dispatch, type SetStateAction } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import { grown, makeMessages, type ChatMessage } from './messages';
import type { ChatListHandle, ChatListProps } from './lists/chatList';

/** Each library behind its own dynamic import: its own chunk in the build. */
const LISTS: Record<string, () => Promise<{ default: ComponentType<ChatListProps> }>> = {
  virtuoso: () => import('./lists/virtuoso'),
  'virtuoso-sync': () => import('./lists/virtuoso').then((list) => ({ default: list.VirtuosoSyncResize })),
  virtua: () => import('./lists/virtua'),
  tanstack: () => import('./lists/tanstack'),
};

interface ListState {
  messages: readonly ChatMessage[];
  prepended: boolean;
}

interface LongTask {
  start: number;
  duration: number;
}

/** What the driver reads and calls. Times are `performance.now()`: ms since navigation. */
interface Bench {
  lib: string;
  longTasks: LongTask[];
  listImportedAt: number | null;
  /** The first frame of 30 in a row with the last message painted at the bottom. */
  bottomAt: number | null;
  error: string | null;
  pinned(): boolean;
  firstVisible(): { key: string; offset: number } | null;
  offsetOf(key: string): number | null;
  /** `key`'s offset as painted in each of the next `count` frames (null: not in the DOM). */
  paintedOffsets(key: string, count: number): Promise<(number | null)[]>;
  nodes(): number;
  scrollToEnd(): void;
  scrollUp(step: number, capMs: number, maxFrames: number): Promise<ScrollResult>;
  prepend(count: number): void;
  stream(steps: number): Promise<StreamResult>;
}

interface ScrollResult {
  frames: number[];
  elapsed: number;
  from: number;
  reachedTop: boolean;
  nodes: number[];
  /** The list's scroll height when the scroll started and ended (estimates for rows not measured). */
  height: number;
  heightAtEnd: number;
}

interface StreamResult {
  /** Growths after which the frame painted did not show the end. */
  paintedMisses: number;
  /** How far from the end (px) the frame painted was, at each miss. */
  paintedGaps: number[];
  /** Growths after which the end was not shown two frames later. */
  settledMisses: number;
  frames: number[];
  from: number;
}

declare global {
  interface Window {
    __bench: Bench;
  }
}

const params = new URLSearchParams(location.search);
const lib = params.get('lib') ?? 'virtuoso';
const count = Number(params.get('count') ?? 10_000);

let state: ListState = { messages: [], prepended: false };
let setState: Dispatch<SetStateAction<ListState>> = () => {};
/** The list's handle; the list sets it, and sets it again when it changes. */
const handle = createRef<ChatListHandle>();
let batches = 0;

const frame = () => new Promise<number>((resolve) => requestAnimationFrame(resolve));
const scroller = () => handle.current?.scroller() ?? null;
const element = (key: string) => scroller()?.querySelector(`[data-key="${CSS.escape(key)}"]`) ?? null;

function fromEnd(): number {
  const box = scroller();
  return box ? box.scrollHeight - box.scrollTop - box.clientHeight : NaN;
}

/**
 * The end is shown: the last message's bottom is on screen, at most 40 px (its row's
 * padding and a little) above the list's bottom. Not "scrollTop at its maximum": a list
 * may stop a few pixels short of that (react-virtuoso does, at 10,000 messages) with the
 * whole message in view.
 */
function pinned(): boolean {
  const box = scroller();
  const last = state.messages[state.messages.length - 1];
  const item = last && element(last.key);
  if (!box || !item) return false;
  const bottom = box.getBoundingClientRect().bottom;
  const itemBottom = item.getBoundingClientRect().bottom;
  return itemBottom <= bottom + 1 && itemBottom >= bottom - 40;
}

function offsetOf(key: string): number | null {
  const box = scroller();
  const item = element(key);
  return box && item ? item.getBoundingClientRect().top - box.getBoundingClientRect().top : null;
}

/**
 * Calls `read` in the next rendering update, after layout and the library's own
 * ResizeObservers (created earlier), just before the paint: what it returns is what that
 * frame shows. (A new observation is always reported once.)
 */
function beforePaint<T>(read: () => T): Promise<T> {
  return new Promise((resolve) => {
    const observer = new ResizeObserver(() => {
      observer.disconnect();
      resolve(read());
    });
    observer.observe(document.body);
  });
}

async function paintedOffsets(key: string, count: number): Promise<(number | null)[]> {
  const seen: (number | null)[] = [];
  for (let i = 0; i < count; i += 1) {
    if (i > 0) await frame();
    seen.push(await beforePaint(() => offsetOf(key)));
  }
  return seen;
}

function firstVisible(): { key: string; offset: number } | null {
  const box = scroller();
  if (!box) return null;
  const top = box.getBoundingClientRect().top;
  let best: { key: string; offset: number } | null = null;
  for (const item of box.querySelectorAll<HTMLElement>('[data-key]')) {
    const rect = item.getBoundingClientRect();
    if (rect.bottom <= top || rect.height === 0) continue;
    if (!best || rect.top - top < best.offset) best = { key: item.dataset.key ?? '', offset: rect.top - top };
  }
  return best;
}

function nodes(): number {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ALL);
  let n = 0;
  while (walker.nextNode()) n += 1;
  return n;
}

/** Scrolls up `step` px a frame until the first message shows at the top, or `capMs` or `maxFrames` pass. */
function scrollUp(step: number, capMs: number, maxFrames: number): Promise<ScrollResult> {
  return new Promise((resolve) => {
    const box = scroller();
    const firstKey = state.messages[0]?.key;
    if (!box || !firstKey) throw new Error('no list');
    const frames: number[] = [];
    const sampled: number[] = [];
    let last = performance.now();
    const from = last;
    const height = box.scrollHeight;
    const tick = (now: number) => {
      frames.push(now - last);
      last = now;
      box.scrollTop = Math.max(0, box.scrollTop - step);
      if (frames.length % 50 === 0) sampled.push(nodes());
      const reachedTop = box.scrollTop === 0 && element(firstKey) !== null;
      if (reachedTop || now - from > capMs || frames.length > maxFrames) resolve({ frames: frames.slice(1), elapsed: now - from, from, reachedTop, nodes: sampled, height, heightAtEnd: box.scrollHeight });
      else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

function prepend(n: number) {
  batches += 1;
  const older = makeMessages(n, 1000 + batches, `older${batches}-`);
  commit({ messages: [...older, ...state.messages], prepended: true });
}

function grow(step: number) {
  const last = state.messages[state.messages.length - 1];
  commit({ messages: [...state.messages.slice(0, -1), grown(last, step)], prepended: false });
}

/** Renders `next` before returning, as the list would be after a reply's chunk. */
function commit(next: ListState) {
  state = next;
  flushSync(() => setState(next));
}

/**
 * A reply streaming into the last message: one more line every other frame. After each
 * growth a ResizeObserver created after the library's (so called after its callbacks,
 * before the paint) checks the end is shown in the frame painted; two frames later, it
 * is checked again (settled).
 */
async function stream(steps: number): Promise<StreamResult> {
  const result: StreamResult = { paintedMisses: 0, paintedGaps: [], settledMisses: 0, frames: [], from: performance.now() };
  let last = await frame();
  for (let i = 0; i < steps; i += 1) {
    const painted = new Promise<void>((resolve) => {
      grow(i);
      const item = element(state.messages[state.messages.length - 1].key);
      if (!item) {
        result.paintedMisses += 1;
        resolve();
        return;
      }
      // Observed after the growth: called once, with the grown size, after the
      // library's own observers (created earlier) and before the paint.
      const observer = new ResizeObserver(() => {
        observer.disconnect();
        if (!pinned()) {
          result.paintedMisses += 1;
          result.paintedGaps.push(fromEnd());
        }
        resolve();
      });
      observer.observe(item);
    });
    await painted;
    for (let f = 0; f < 2; f += 1) {
      const now = await frame();
      result.frames.push(now - last);
      last = now;
    }
    if (!pinned()) result.settledMisses += 1;
  }
  return result;
}

const bench: Bench = {
  lib,
  longTasks: [],
  listImportedAt: null,
  bottomAt: null,
  error: null,
  pinned,
  firstVisible,
  offsetOf,
  paintedOffsets,
  nodes,
  scrollToEnd: () => handle.current?.scrollToEnd(),
  scrollUp,
  prepend,
  stream,
};
window.__bench = bench;

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) bench.longTasks.push({ start: entry.startTime, duration: entry.duration });
}).observe({ type: 'longtask', buffered: true });

function App({ List }: { List: ComponentType<ChatListProps> }) {
  const [list, setList] = useState<ListState>(() => ({ messages: makeMessages(count, 1, 'm'), prepended: false }));
  useEffect(() => {
    state = list;
    setState = setList;
  }, [list]);
  return <List ref={handle} messages={list.messages} prepended={list.prepended} />;
}

/** Watches every frame until the end has been shown 30 frames in a row. */
async function watchBottom() {
  let streak = 0;
  let since = 0;
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    const now = await frame();
    if (pinned()) {
      if (streak === 0) since = now;
      streak += 1;
      if (streak === 30) {
        bench.bottomAt = since;
        return;
      }
    } else streak = 0;
  }
  bench.error = 'the end of the list was not shown within 60 s';
}

async function main() {
  const load = LISTS[lib];
  if (!load) throw new Error(`unknown lib ${lib} (${Object.keys(LISTS).join(', ')})`);
  const { default: List } = await load();
  bench.listImportedAt = performance.now();
  const root = document.getElementById('root');
  if (!root) throw new Error('no #root');
  state = { messages: [], prepended: false };
  createRoot(root).render(<App List={List} />);
  await watchBottom();
}

main().catch((error: unknown) => {
  bench.error = String(error);
});
