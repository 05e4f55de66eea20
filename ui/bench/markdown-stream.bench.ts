// Per-chunk cost of a long streaming markdown reply (issue 15): the 2,000-line reply of
// `ui-bench.mjs` (headings, lists, tables, code) cut into about 4,000 chunks, each
// chunk timed on its own. "Before" is Streamdown's own streaming path as MessageView used
// it (complete unfinished markdown over the whole text, split the whole text into
// blocks); "after" is components/Markdown.tsx (split only the tail, complete the last
// block). Rendering runs React 19 into happy-dom without the code highlighter.
import { createElement } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import remend from 'remend';
import { parseMarkdownIntoBlocks, Streamdown } from 'streamdown';
import { it, vi } from 'vitest';
import { longReply } from '../tests/markdown-samples';

vi.mock('../src/components/codeHighlighting', () => ({ useMarkdownPlugins: () => PLUGINS }));
const PLUGINS = {};
const { Markdown, liveBlockSplitter } = await import('../src/components/Markdown');
const { MarkdownImage } = await import('../src/components/MarkdownImage');

const LINES = Number(process.env.LINES ?? 2000);
const chunks = longReply(LINES).flatMap((line) => {
  if (line.length < 6) return [line];
  const third = Math.ceil(line.length / 3);
  return [line.slice(0, third), line.slice(third, 2 * third), line.slice(2 * third)];
});

// The texts so far as views of one flat string: a text built with `+=` is a rope that
// whoever reads it first flattens (O(length), in Streamdown's path and ours alike), which
// would hide what the split and the render cost.
const reply = chunks.join('');
const ends = chunks.map((_, index) => chunks.slice(0, index + 1).join('').length);

/** Milliseconds each chunk took: `step` gets the text so far. */
function perChunk(step: (text: string) => void): number[] {
  const times: number[] = [];
  for (const end of ends) {
    const text = reply.slice(0, end);
    const start = performance.now();
    step(text);
    times.push(performance.now() - start);
  }
  return times;
}

function renderer(element: (text: string) => ReturnType<typeof createElement>): (text: string) => void {
  const root = createRoot(document.createElement('div'));
  return (text) => flushSync(() => root.render(element(text)));
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
function stats(times: number[]) {
  const sorted = [...times].sort((a, b) => a - b);
  const lastTenth = times.slice(-Math.floor(times.length / 10)).sort((a, b) => a - b);
  return {
    median: quantile(sorted, 0.5),
    p95: quantile(sorted, 0.95),
    max: sorted.at(-1) ?? NaN,
    lastTenth: quantile(lastTenth, 0.5),
    total: times.reduce((sum, t) => sum + t, 0),
  };
}

it('prints the per-chunk cost before and after', () => {
  const liveProps = {
    plugins: PLUGINS,
    controls: { code: true, table: false, mermaid: false, image: false },
    linkSafety: { enabled: false },
    components: { img: MarkdownImage },
    lineNumbers: false,
  };
  const cases: [string, () => (text: string) => void][] = [
    ['split: before', () => (text) => parseMarkdownIntoBlocks(remend(text))],
    ['split: after', () => liveBlockSplitter()],
    ['render: before', () => renderer((text) => createElement(Streamdown, { mode: 'streaming', isAnimating: true, ...liveProps, children: text }))],
    ['render: after', () => renderer((text) => createElement(Markdown, { text, live: true, animating: true }))],
  ];
  const rows = cases.map(([name, make]) => [name, stats(perChunk(make()))] as const);
  const ms = (value: number) => value.toFixed(3);
  const lines = [
    `${LINES}-line reply in ${chunks.length} chunks (${reply.length} characters); ms per chunk`,
    '',
    '| step | median | p95 | max | median of last 10 % | total |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(([name, s]) => `| ${name} | ${ms(s.median)} | ${ms(s.p95)} | ${ms(s.max)} | ${ms(s.lastTenth)} | ${s.total.toFixed(0)} |`),
  ];
  for (const kind of ['split', 'render']) {
    const before = rows.find(([name]) => name === `${kind}: before`)?.[1];
    const after = rows.find(([name]) => name === `${kind}: after`)?.[1];
    if (before && after) {
      lines.push(`\n${kind}: median ${(before.median / after.median).toFixed(1)}× less, last 10 % ${(before.lastTenth / after.lastTenth).toFixed(1)}× less, total ${(before.total / after.total).toFixed(1)}× less`);
    }
  }
  console.log(lines.join('\n'));
});
