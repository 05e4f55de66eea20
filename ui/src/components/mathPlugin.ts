// Loaded on demand with the math plugin (see `markdownPlugins.ts`): KaTeX and its
// stylesheet (and fonts) stay out of the main bundle until a text has math.
import 'katex/dist/katex.min.css';
import { createMathPlugin } from '@streamdown/math';
import type { Extension } from 'micromark-util-types';
import type { MathPlugin } from 'streamdown';
import type { Processor } from 'unified';
import { markDisplayMath, mathDelimiters } from '../chat/mathDelimiters';

/** `$…$` is inline math too (the plugin's default reads only `$$…$$`). */
const katex = createMathPlugin({ singleDollarTextMath: true });

type RemarkPlugin = (this: Processor, options?: unknown) => unknown;

/**
 * remark-math as the plugin configures it, and then the delimiters of `mathDelimiters`
 * (`$5 and $10` as text, `\(…\)`, `\[…\]`): added after remark-math's extension, so they
 * are tried before it.
 */
function remarkChatMath(this: Processor) {
  const [remarkMath, options] = (Array.isArray(katex.remarkPlugin) ? katex.remarkPlugin : [katex.remarkPlugin]) as [RemarkPlugin, unknown];
  remarkMath.call(this, options);
  const data = this.data() as { micromarkExtensions?: Extension[] };
  (data.micromarkExtensions ??= []).push(mathDelimiters);
  return (tree: Parameters<typeof markDisplayMath>[0], file: { value: unknown }) => markDisplayMath(tree, String(file.value));
}

export const math: MathPlugin = { ...katex, remarkPlugin: remarkChatMath };
