import path from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The comparison page of `node bench/virtualizers.mjs`, built apart from the app: each
// list library is a dynamically imported chunk, so its bytes can be read off the build.
const root = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root,
  plugins: [react()],
  base: './',
  logLevel: 'warn',
  build: {
    outDir: path.join(root, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    manifest: true,
  },
});
