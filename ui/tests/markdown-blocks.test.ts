import { readFileSync } from 'node:fs';
import { parseMarkdownIntoBlocks } from 'streamdown';
import { describe, expect, it } from 'vitest';
import { streamingBlockSplitter } from '../src/chat/markdownBlocks';
import { longReply, randomChunks, seededRandom } from './markdown-samples';

const sample = (name: string) => readFileSync(new URL(`./fixtures/markdown/${name}.md`, import.meta.url), 'utf8');

const SAMPLES: Record<string, string> = {
  rich: sample('rich'),
  'code-heavy': sample('code-heavy'),
  footnotes: sample('footnotes'),
  'link-definitions': sample('link-definitions'),
  'rich with CRLF line ends': sample('rich').replaceAll('\n', '\r\n'),
  'CRLF line ends late': `${sample('rich')}Then Windows line ends\r\nfrom here on.\r\n\r\n- a\r\n- b\r\n`,
  'long reply (the benchmark shape)': longReply(120).join(''),
};

/** Streamdown's split of the whole text, from scratch (it caches its previous split). */
function splitWhole(text: string): string[] {
  parseMarkdownIntoBlocks('');
  return parseMarkdownIntoBlocks(text);
}

describe('streaming block splitter', () => {
  for (const [name, text] of Object.entries(SAMPLES)) {
    it(`gives the whole text's blocks after every chunk, for any chunk split: ${name}`, () => {
      const random = seededRandom(name.length * 7919);
      for (let run = 0; run < 30; run += 1) {
        const split = streamingBlockSplitter();
        let sent = '';
        for (const chunk of randomChunks(text, random, run % 3 === 0 ? 3 : 24)) {
          sent += chunk;
          const blocks = split(sent);
          expect(blocks, `after ${sent.length} of ${text.length} characters (run ${run})`).toEqual(splitWhole(sent));
        }
      }
      // Thousands of whole-text splits to compare against: well under a second on a quiet
      // machine, several seconds on a loaded CI one (vitest's default limit is 5 s).
    }, 60_000);
  }

  it('re-splits only the tail of a long text', () => {
    const text = longReply(400).join('');
    const split = streamingBlockSplitter();
    const before = split(text);
    const more = '\nA new paragraph.';
    const after = split(text + more);
    expect(after).toEqual(splitWhole(text + more));
    // All but the last two blocks are kept as they were; footnotes or a `\r` would have
    // split the whole text again.
    expect(before.length).toBeGreaterThan(100);
    expect(after.slice(0, before.length - 2)).toEqual(before.slice(0, -2));
  });

  it('starts over when the text is replaced rather than extended', () => {
    const split = streamingBlockSplitter();
    split(SAMPLES.rich ?? '');
    expect(split('# Another reply\n\nShorter.')).toEqual(splitWhole('# Another reply\n\nShorter.'));
  });
});
