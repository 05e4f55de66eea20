// Loaded on demand (see `markdownPlugins.ts`): mermaid is the largest of the plugins.
import { createMermaidPlugin } from '@streamdown/mermaid';

const dark = typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches;

/** Diagrams in the app's light or dark scheme (as it was when the plugin loaded). */
export const mermaid = createMermaidPlugin({ config: { theme: dark ? 'dark' : 'default' } });
