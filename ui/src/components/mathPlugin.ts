// Loaded on demand with the math plugin (see `markdownPlugins.ts`): KaTeX and its
// stylesheet (and fonts) stay out of the main bundle until a text has math.
import 'katex/dist/katex.min.css';
import { createMathPlugin } from '@streamdown/math';

/** `$…$` is inline math too (the plugin's default reads only `$$…$$`). */
export const math = createMathPlugin({ singleDollarTextMath: true });
