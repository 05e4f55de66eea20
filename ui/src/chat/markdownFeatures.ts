/**
 * The markdown features a text uses whose renderer is loaded on demand: math (KaTeX),
 * mermaid diagrams, and Chinese/Japanese/Korean text (emphasis next to CJK punctuation).
 * Each test is what the feature's parser would find, loosely: a false positive loads a
 * plugin that then finds nothing, a false negative would show the raw text.
 */
export interface MarkdownFeatures {
  math: boolean;
  mermaid: boolean;
  cjk: boolean;
}

// `$$` opens display math, `\(` and `\[` open math; `$x$` is inline math, but a `$`
// before a digit or a space opens none (`$5 and $10`: see `mathDelimiters.ts`).
const MATH = /\$\$|\\[([]|\$[^\s$\d][^$\n]*\$/;
// A fence whose info string starts with `mermaid` (``` or ~~~, indented up to 3 spaces).
const MERMAID = /^ {0,3}(?:`{3,}|~{3,})\s*mermaid\b/im;
// Han, kana, Hangul, and the CJK punctuation and full-width forms.
const CJK = /[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]/;

export function markdownFeatures(text: string): MarkdownFeatures {
  return { math: MATH.test(text), mermaid: MERMAID.test(text), cjk: CJK.test(text) };
}
