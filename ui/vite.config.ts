import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import type { Plugin } from 'vite';
import { defineConfig } from 'vitest/config';

/**
 * KaTeX's stylesheet names each of its fonts as woff2, then woff, then ttf, and Vite emits
 * every file a stylesheet names: 0.6 MB (brotli) more in the UI the desktop binary embeds,
 * in formats only browsers without woff2 would load. WebKitGTK, Chromium and every current
 * browser take the woff2, so only those sources are kept; the build fails if KaTeX's
 * stylesheet stops naming its fonts that way.
 */
function katexFontsAsWoff2Only(): Plugin {
  const otherFormats = /,\s*url\([^)]*\.(?:woff|ttf)\)\s*format\(["'](?:woff|truetype)["']\)/g;
  return {
    name: 'katex-fonts-as-woff2-only',
    enforce: 'pre',
    transform(code, id) {
      if (!/[\\/]katex[\\/]dist[\\/]katex(?:\.min)?\.css$/.test(id.split('?')[0])) return null;
      const kept = code.replace(otherFormats, '');
      const fonts = code.match(/@font-face/g)?.length ?? 0;
      const woff2 = kept.match(/format\(["']woff2["']\)/g)?.length ?? 0;
      if (kept === code || woff2 !== fonts || /\.(?:woff|ttf)\)/.test(kept)) {
        this.error(`KaTeX's stylesheet (${id}) no longer lists its fonts as woff2, woff, ttf: check what it names`);
      }
      return { code: kept, map: null };
    },
  };
}

export default defineConfig({
  plugins: [react(), katexFontsAsWoff2Only()],
  // Relative asset paths: the same build is served by `colloquy serve` and loaded by Tauri.
  base: './',
  resolve: {
    alias: [
      {
        // rehype-katex turns KaTeX's HTML into a tree with this package, whose browser
        // build parses it through a <template> in the page: every `style` attribute in
        // KaTeX's output is then reported against our CSP (style-src 'self'), though the
        // styles are applied later through the CSSOM. Its default build parses in
        // JavaScript (parse5, which the main bundle has already for rehype-raw).
        find: /^hast-util-from-html-isomorphic$/,
        replacement: fileURLToPath(new URL('./node_modules/hast-util-from-html-isomorphic/index.js', import.meta.url)),
      },
    ],
  },
  // The code highlighter's worker (`codeHighlighter.worker.ts`) loads each language's
  // grammar as a chunk of its own, which a classic (IIFE) worker bundle cannot split.
  worker: { format: 'es' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 1500,
  },
  server: {
    // `npm run dev` talks to a running `colloquy serve` on its default port.
    proxy: { '/api': 'http://127.0.0.1:8787' },
  },
  test: {
    include: ['tests/**/*.test.ts'],
    environment: 'node',
  },
});
