/**
 * Math delimiters as chat models write them, on top of remark-math's `$…$` and `$$…$$`
 * (a micromark extension: it parses, so code spans and blocks are never touched):
 * - a `$` followed by a digit or a space opens no math, so `$5 and $10` stays text, as
 *   in LibreChat and llama.cpp's web UI (and Pandoc, for the space). Math that starts with
 *   a digit is written `\(2x\)` or `$$2x$$`;
 * - `\(…\)` is inline math and `\[…\]` display math, as LaTeX (and ChatGPT) write them.
 * Either inline form may run over lines of one paragraph.
 */
// The token names of remark-math's `$…$` (this import declares them to micromark's types).
import type {} from 'micromark-extension-math';
import type { Code, Construct, Extension, State, TokenizeContext, Tokenizer } from 'micromark-util-types';

const DOLLAR = 36;
const BACKSLASH = 92;
const OPEN_PAREN = 40;
const CLOSE_PAREN = 41;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

const isDigit = (code: Code) => code !== null && code >= 48 && code <= 57;
// micromark's codes: null is the end, negatives are line endings (-5 … -3), tabs (-2)
// and virtual spaces (-1); 9 is a tab and 32 a space.
const isSpaceOrEnd = (code: Code) => code === null || code < 0 || code === 9 || code === 32;
const isLineEnding = (code: Code) => code !== null && code < -2;

/** A lone `$` before a digit or a space: a dollar sign, not the start of math. */
const currencyDollar: Construct = {
  name: 'currencyDollar',
  // At the start of a run of `$` only (`$$5` is left to math); an escaped `\$` before
  // it counts as text, as remark-math counts it.
  previous(this: TokenizeContext, code: Code) {
    return code !== DOLLAR || this.events[this.events.length - 1]?.[1].type === 'characterEscape';
  },
  tokenize(effects, ok, nok) {
    const after: State = (code) => {
      if (code === DOLLAR || !(isDigit(code) || isSpaceOrEnd(code))) return nok(code);
      effects.exit('data');
      return ok(code);
    };
    return (code) => {
      effects.enter('data');
      effects.consume(code);
      return after;
    };
  },
};

/**
 * `\(…\)` and `\[…\]`, as the tokens remark-math's own `$…$` makes (`mathText` around
 * `mathTextData` and line endings), so it builds the same `inlineMath` node; `\[` is
 * marked as display math afterwards (`markDisplayMath`).
 */
const latexMath: Construct = {
  name: 'latexMath',
  tokenize: tokenizeLatexMath,
};

function tokenizeLatexMath(this: TokenizeContext, effects: Parameters<Tokenizer>[0], ok: State, nok: State): State {
  let close = 0;
  let empty = true;
  const closing: Construct = { partial: true, tokenize: tokenizeClosing };
  return start;

  function start(code: Code): State | undefined {
    effects.enter('mathText');
    effects.enter('mathTextSequence');
    effects.consume(code);
    return opening;
  }

  function opening(code: Code): State | undefined {
    if (code !== OPEN_PAREN && code !== OPEN_BRACKET) return nok(code);
    close = code === OPEN_PAREN ? CLOSE_PAREN : CLOSE_BRACKET;
    effects.consume(code);
    effects.exit('mathTextSequence');
    return between;
  }

  /** Between lines of TeX (a token never spans a line ending). */
  function between(code: Code): State | undefined {
    if (code === null) return nok(code);
    if (isLineEnding(code)) {
      effects.enter('lineEnding');
      effects.consume(code);
      effects.exit('lineEnding');
      return between;
    }
    return code === BACKSLASH ? effects.check(closing, closeSequence, startData)(code) : startData(code);
  }

  function startData(code: Code): State | undefined {
    effects.enter('mathTextData');
    return consume(code);
  }

  function data(code: Code): State | undefined {
    if (code === null || isLineEnding(code)) {
      effects.exit('mathTextData');
      return between(code);
    }
    // A backslash that does not close is TeX (`\frac`, `\\`).
    return code === BACKSLASH ? effects.check(closing, closeAfterData, consume)(code) : consume(code);
  }

  function consume(code: Code): State | undefined {
    if (!isSpaceOrEnd(code)) empty = false;
    effects.consume(code);
    return data;
  }

  function closeAfterData(code: Code): State | undefined {
    effects.exit('mathTextData');
    return closeSequence(code);
  }

  function closeSequence(code: Code): State | undefined {
    if (empty) return nok(code);
    effects.enter('mathTextSequence');
    effects.consume(code);
    return closeMark;
  }

  function closeMark(code: Code): State | undefined {
    effects.consume(code);
    effects.exit('mathTextSequence');
    effects.exit('mathText');
    return ok;
  }

  function tokenizeClosing(this: TokenizeContext, checkEffects: Parameters<Tokenizer>[0], checkOk: State, checkNok: State): State {
    return (code) => {
      checkEffects.enter('mathTextSequence');
      checkEffects.consume(code);
      return (next) => {
        if (next !== close) return checkNok(next);
        checkEffects.consume(next);
        checkEffects.exit('mathTextSequence');
        return checkOk;
      };
    };
  }
}

/** The micromark extension; it must come after remark-math's (later extensions are tried first). */
export const mathDelimiters: Extension = {
  text: { [DOLLAR]: currencyDollar, [BACKSLASH]: latexMath },
};

interface MathNode {
  type: string;
  value?: string;
  position?: { start: { offset?: number } };
  data?: Record<string, unknown>;
  children?: MathNode[];
}

/**
 * Makes inline math written `\[…\]` display math: a `<pre><code class="language-math">`,
 * as `$$` blocks are (the sanitizer keeps no other class on `code`; rehype-katex shows
 * math in a `pre` as display math).
 */
export function markDisplayMath(tree: MathNode, source: string): void {
  const visit = (node: MathNode) => {
    const offset = node.position?.start.offset;
    if (node.type === 'inlineMath' && offset !== undefined && source.startsWith('\\[', offset)) {
      const code = { type: 'element', tagName: 'code', properties: { className: ['language-math', 'math-display'] }, children: [{ type: 'text', value: node.value ?? '' }] };
      node.data = { ...node.data, hName: 'pre', hProperties: {}, hChildren: [code] };
    }
    node.children?.forEach(visit);
  };
  visit(tree);
}
