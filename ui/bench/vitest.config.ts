import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// `npx vitest run --config bench/vitest.config.ts` in ui/: the markdown streaming
// benchmark. Not part of `npm test`: it asserts nothing, it prints a table.
export default defineConfig({
  plugins: [react()],
  test: { include: ['bench/**/*.bench.ts'], environment: 'happy-dom', testTimeout: 600_000 },
});
