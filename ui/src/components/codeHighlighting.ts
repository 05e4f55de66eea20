import { useSyncExternalStore } from 'react';
import type { PluginConfig } from 'streamdown';

// The code highlighter (Shiki's core and regex engines, about 200 KB) is not needed for a
// first paint: messages show at once as plain markdown, and code blocks are highlighted
// when the highlighter has arrived (each language's grammar is its own chunk already).

const WITHOUT: PluginConfig = {};
let plugins: PluginConfig = WITHOUT;
let loading: Promise<void> | undefined;
const listeners = new Set<() => void>();

function load(): void {
  loading ??= import('@streamdown/code').then(
    ({ code }) => {
      plugins = { code };
      for (const listener of listeners) listener();
    },
    () => {
      // Offline or a stale build: code stays plain; the next message tries again.
      loading = undefined;
    },
  );
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  load();
  return () => listeners.delete(listener);
}

const snapshot = (): PluginConfig => plugins;

/** Streamdown's plugins: none until the highlighter has loaded (one stable object each). */
export function useMarkdownPlugins(): PluginConfig {
  return useSyncExternalStore(subscribe, snapshot, snapshot);
}
