import { useState } from 'react';
import remend from 'remend';
import { Streamdown } from 'streamdown';
import { streamingBlockSplitter } from '../chat/markdownBlocks';
import { MarkdownImage } from './MarkdownImage';
import { useMarkdownPlugins } from './markdownPlugins';

// Copy buttons on code blocks only: the other controls and the link-confirmation modal
// need Tailwind styles we do not ship.
const CONTROLS = { code: true, table: false, mermaid: false, image: false };
const LINK_SAFETY = { enabled: false };
// Remote images wait for a click (and then come through the backend): see MarkdownImage.
const COMPONENTS = { img: MarkdownImage };

export interface MarkdownProps {
  text: string;
  /** Part of the reply that is streaming: rendered block by block, per chunk. */
  live: boolean;
  /** This text is still growing (Streamdown's caret and incomplete-code state). */
  animating: boolean;
}

/**
 * One text part as markdown, always in Streamdown's block mode with blocks split
 * incrementally (see `chat/markdownBlocks.ts`): a chunk costs the last blocks, not the
 * whole reply, because the finished blocks are the same strings and Streamdown's
 * memoized blocks skip them. A finished reply renders the same way, so when a stream
 * ends nothing is rendered again: Streamdown's static mode is one tree for the whole
 * text, and switching to it at the end re-rendered (and re-highlighted) the entire reply
 * in one long task (610 ms for 2,000 lines in `cargo xtask bench ui`).
 */
export function Markdown({ text, live, animating }: MarkdownProps) {
  const plugins = useMarkdownPlugins(text);
  const [splitBlocks] = useState(liveBlockSplitter);
  return (
    <Streamdown
      mode="streaming"
      isAnimating={live && animating}
      // Streamdown would complete unfinished markdown (an open `**`, link or `$$`) over
      // the whole text on every render; the splitter does it to the last block only,
      // which is where the end is.
      parseIncompleteMarkdown={false}
      parseMarkdownIntoBlocksFn={splitBlocks}
      plugins={plugins}
      controls={CONTROLS}
      linkSafety={LINK_SAFETY}
      components={COMPONENTS}
      lineNumbers={false}
    >
      {text}
    </Streamdown>
  );
}

/** Streamdown's blocks of a growing text, with the unfinished markdown of the last one completed. */
export function liveBlockSplitter(): (markdown: string) => string[] {
  const split = streamingBlockSplitter();
  let blocks: string[] = [];
  let completed: string[] = [];
  return (markdown) => {
    const next = split(markdown);
    if (next !== blocks) {
      blocks = next;
      const last = next.length - 1;
      completed = last < 0 ? next : next.slice(0, last).concat(remend(next[last] ?? ''));
    }
    return completed;
  };
}
