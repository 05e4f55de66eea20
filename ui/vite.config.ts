import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [react()],
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
