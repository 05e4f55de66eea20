import { describe, expect, it } from 'vitest';
import { CodeTokenizer } from '../src/components/codeTokens';
import { superseded, type HighlightJob } from '../src/components/highlightJobs';
import type { Tokens } from '../src/components/highlightJobs';

const RUST = `use std::collections::HashMap;

/// Counts words.
fn count(text: &str) -> HashMap<&str, usize> {
    let mut seen = HashMap::new();
    for word in text.split_whitespace() {
        *seen.entry(word).or_insert(0) += 1; // "quoted" in a comment
    }
    let s = "a string with { braces";
    seen
}
`;

/** What a token shows: its text, where it starts, and its colours in both themes. */
const shown = (tokens: Tokens) => tokens.tokens.map((row) => row.map(({ content, offset, htmlStyle }) => ({ content, offset, htmlStyle })));

describe('code tokens', () => {
  it('colours a block in both themes, keywords apart from names', async () => {
    const tokens = await new CodeTokenizer().tokens('fn main() {}\n', 'rust');
    const keyword = tokens.tokens[0]?.find((token) => token.content === 'fn');
    const name = tokens.tokens[0]?.find((token) => token.content === 'main');
    expect(keyword?.htmlStyle?.['--shiki-dark']).toBeTruthy();
    expect(keyword?.htmlStyle?.color).toBeTruthy();
    expect(keyword?.htmlStyle?.color).not.toBe(name?.htmlStyle?.color);
    expect(tokens.tokens.map((row) => row.map((token) => token.content).join(''))).toEqual(['fn main() {}', '']);
  });

  it('a block that grows chunk by chunk ends with the tokens of the whole block', async () => {
    const growing = new CodeTokenizer();
    // Chunks that end mid-line, mid-string and mid-comment, as a model streams them.
    let last: Tokens | undefined;
    for (let end = 7; end < RUST.length; end += 13) last = await growing.tokens(RUST.slice(0, end), 'rust');
    last = await growing.tokens(RUST, 'rust');
    const whole = await new CodeTokenizer().tokens(RUST, 'rust');
    expect(shown(last)).toEqual(shown(whole));
    // Every character is in exactly one token, at its offset.
    for (const row of last.tokens) for (const token of row) expect(RUST.slice(token.offset, token.offset + token.content.length)).toBe(token.content);
  });

  it('two blocks streaming at once do not mix their progress', async () => {
    const tokenizer = new CodeTokenizer();
    const python = 'def f(x):\n    return "x"\n';
    for (let end = 5; end <= RUST.length; end += 40) {
      await tokenizer.tokens(RUST.slice(0, end), 'rust');
      await tokenizer.tokens(python.slice(0, Math.min(python.length, end)), 'python');
    }
    expect(shown(await tokenizer.tokens(RUST, 'rust'))).toEqual(shown(await new CodeTokenizer().tokens(RUST, 'rust')));
    expect(shown(await tokenizer.tokens(python, 'python'))).toEqual(shown(await new CodeTokenizer().tokens(python, 'python')));
  });

  it('an unknown or oddly written language is plain text, not an error', async () => {
    const tokenizer = new CodeTokenizer();
    const plain = await tokenizer.tokens('fn main() {}\nsecond line', 'no-such-language');
    expect(plain.tokens.map((row) => row.map((token) => token.content).join(''))).toEqual(['fn main() {}', 'second line']);
    const aliased = await tokenizer.tokens('fn main() {}', '  RS ');
    expect(aliased.tokens[0]?.length).toBeGreaterThan(1);
  });
});

describe('which queued jobs a later one makes stale', () => {
  const job = (id: number, code: string, incomplete = true, language = 'rust'): HighlightJob => ({ id, code, language, incomplete });

  it('a growing block answers for its earlier versions', () => {
    expect(superseded(job(1, 'fn a'), [job(2, 'fn a() {')])).toBe(true);
    expect(superseded(job(1, 'fn a'), [job(2, 'fn a', true)])).toBe(true);
  });

  it('a finished block, another language or other code is always answered', () => {
    expect(superseded(job(1, 'fn a', false), [job(2, 'fn a() {')])).toBe(false);
    expect(superseded(job(1, 'fn a'), [job(2, 'fn a() {', true, 'python')])).toBe(false);
    expect(superseded(job(1, 'fn a'), [job(2, 'fn b')])).toBe(false);
    expect(superseded(job(1, 'fn a'), [])).toBe(false);
  });
});
