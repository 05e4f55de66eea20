import { parseMarkdownIntoBlocks } from 'streamdown';

// Streamdown splits a streaming text into blocks (marked's block tokens, merged where
// a block needs its neighbours) and renders each block apart, so a finished block is not
// rendered again. But it splits the whole text again on every chunk: a long reply costs
// O(length) per chunk. Text only grows at its end, so only the last blocks can change;
// this keeps the blocks before them and asks Streamdown to split only the tail.
//
// The result is always what `parseMarkdownIntoBlocks(text)` gives for the whole text
// (tests/markdown-blocks.test.ts checks it over random chunk splits). How each case that
// reaches back into finished text is handled:
// - Where the tail starts: after the last block that ends in a blank line and has at
//   least two blocks after it (Streamdown's own rule for its incremental split). The last
//   two blocks are always split again, so a setext underline (`===` under a paragraph),
//   a loose list or indented code going on after a blank line, a table's next row and
//   a closing code fence, `$$` or HTML tag all land in the part split again. An open
//   code fence, `$$` or HTML block is one block to the end of the text, so it is in the
//   tail until it closes.
// - Footnotes (`[^id]` anywhere): Streamdown keeps the whole text as one block, so that
//   references and definitions meet. A new one is looked for around the previous end;
//   with one, every chunk splits the whole text, as before.
// - Link reference definitions (`[label]: url`): Streamdown keeps the whole text as one
//   block when marked finds one. A definition in the tail makes the tail one block and
//   contains `]:`; then the whole text is split, as before.
// - `\r`: Streamdown splits the text with its line ends normalized, so the blocks no
//   longer add up to the text; from then on the text is split whole, as before.

/** Footnote references and definitions, as Streamdown finds them (labels ≤ 200 characters). */
const FOOTNOTE = /\[\^[\w-]{1,200}\]/;
/** The longest footnote match (`[^` + 200 + `]:`): a new one starts no further back than this. */
const FOOTNOTE_REACH = 204;

interface Split {
  text: string;
  blocks: string[];
  /** Where each block starts in `text`. */
  starts: number[];
  /** The blocks add up to `text`, so a longer text can keep some of them. */
  additive: boolean;
}

/**
 * A block splitter for one streaming text, for Streamdown's `parseMarkdownIntoBlocksFn`.
 * Each call returns exactly `parseMarkdownIntoBlocks(markdown)`; when `markdown` extends
 * the previous call's text, only its tail is split again, and the blocks before it are
 * the same strings as before (so Streamdown's memoized blocks do not render again).
 */
export function streamingBlockSplitter(): (markdown: string) => string[] {
  let last: Split | undefined;
  return (markdown) => {
    if (last?.text !== markdown) last = (last && extend(last, markdown)) ?? splitWhole(markdown);
    return last.blocks;
  };
}

function splitWhole(text: string): Split {
  return withStarts(text, [], [], 0, parseMarkdownIntoBlocks(text));
}

/** `previous` split for `text`, which extends `previous.text`; undefined when only a whole split is exact. */
function extend(previous: Split, text: string): Split | undefined {
  const before = previous.text.length;
  if (!previous.additive || text.length <= before || !text.startsWith(previous.text)) return undefined;
  const kept = stableBlocks(previous.blocks);
  if (kept === 0) return undefined;
  if (FOOTNOTE.test(text.slice(Math.max(0, before - FOOTNOTE_REACH)))) return undefined;
  const from = previous.starts[kept] ?? before;
  const tail = text.slice(from);
  const tailBlocks = parseMarkdownIntoBlocks(tail);
  if (tailBlocks.length === 1 && tail.includes(']:')) return undefined;
  return withStarts(text, previous.blocks.slice(0, kept), previous.starts.slice(0, kept), from, tailBlocks);
}

/** How many leading blocks no appended text can change (0: none). */
function stableBlocks(blocks: readonly string[]): number {
  for (let i = blocks.length - 3; i >= 0; i -= 1) {
    if (blocks[i]?.endsWith('\n\n')) return i + 1;
  }
  return 0;
}

function withStarts(text: string, blocks: string[], starts: number[], from: number, more: readonly string[]): Split {
  let offset = from;
  for (const block of more) {
    blocks.push(block);
    starts.push(offset);
    offset += block.length;
  }
  return { text, blocks, starts, additive: offset === text.length };
}
