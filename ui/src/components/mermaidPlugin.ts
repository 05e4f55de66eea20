// Loaded on demand (see `markdownPlugins.ts`): mermaid is the largest of the plugins.
import type { PluginConfig } from 'streamdown';
import { MermaidDiagram } from './MermaidDiagram';

/**
 * ```mermaid fences drawn by our own renderer rather than Streamdown's mermaid block,
 * which puts mermaid's SVG into the page: its `<style>` and `style` attributes are
 * blocked by the CSP (`style-src 'self'`), leaving black shapes. `MermaidDiagram` shows
 * the SVG as an image instead.
 */
export const mermaid: Pick<PluginConfig, 'renderers'> = { renderers: [{ language: 'mermaid', component: MermaidDiagram }] };
