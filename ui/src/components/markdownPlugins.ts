import { useEffect, useSyncExternalStore } from 'react';
import type { PluginConfig } from 'streamdown';
import { markdownFeatures } from '../chat/markdownFeatures';

// Streamdown's plugins are loaded on demand, so none of them costs the first paint:
// - the code highlighter (`codeHighlighter.ts`: Shiki runs in a worker, which loads each
//   language's grammar as its own chunk) as soon as a message is shown: messages show at
//   once as plain markdown, and code blocks are coloured when their tokens arrive;
// - math (KaTeX and its stylesheet), mermaid and the CJK rules only when a text uses them
//   (see `markdownFeatures`).
// A text gets the plugins it uses, so a message renders the same whichever others loaded.

type PluginName = 'code' | 'math' | 'mermaid' | 'cjk';

// Mermaid is a custom renderer of ```mermaid fences (see `mermaidPlugin.ts`), not
// Streamdown's own mermaid plugin.
const LOADERS: Record<PluginName, () => Promise<Partial<PluginConfig>>> = {
  code: () => import('./codeHighlighter').then(({ code }) => ({ code })),
  math: () => import('./mathPlugin').then(({ math }) => ({ math })),
  mermaid: () => import('./mermaidPlugin').then(({ mermaid }) => mermaid),
  cjk: () => import('@streamdown/cjk').then(({ cjk }) => ({ cjk })),
};

/** What each plugin adds to Streamdown's config, once it has loaded. */
const loaded: Partial<Record<PluginName, Partial<PluginConfig>>> = {};
const loading = new Set<PluginName>();
const listeners = new Set<() => void>();
/** One stable config per set of features a text uses; emptied when a plugin arrives. */
const configs = new Map<string, PluginConfig>();

function load(name: PluginName): void {
  if (loaded[name] !== undefined || loading.has(name)) return;
  loading.add(name);
  LOADERS[name]().then(
    (plugin) => {
      loading.delete(name);
      loaded[name] = plugin;
      configs.clear();
      for (const listener of listeners) listener();
    },
    () => {
      // Offline or a stale build: the text stays plain; the next message tries again.
      loading.delete(name);
    },
  );
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  load('code');
  return () => listeners.delete(listener);
}

function configFor(math: boolean, mermaid: boolean, cjk: boolean): PluginConfig {
  const key = `${+math}${+mermaid}${+cjk}`;
  let config = configs.get(key);
  if (!config) {
    const used: PluginName[] = ['code'];
    if (math) used.push('math');
    if (mermaid) used.push('mermaid');
    if (cjk) used.push('cjk');
    config = Object.assign({}, ...used.map((name) => loaded[name])) as PluginConfig;
    configs.set(key, config);
  }
  return config;
}

/**
 * Streamdown's plugins for `text`: the highlighter once it has loaded, and math, mermaid
 * and CJK handling when the text uses them and they have loaded (asked for here). The
 * same object while nothing changes, so memoized blocks stay memoized.
 */
export function useMarkdownPlugins(text: string): PluginConfig {
  const { math, mermaid, cjk } = markdownFeatures(text);
  useEffect(() => {
    if (math) load('math');
    if (mermaid) load('mermaid');
    if (cjk) load('cjk');
  }, [math, mermaid, cjk]);
  const snapshot = () => configFor(math, mermaid, cjk);
  return useSyncExternalStore(subscribe, snapshot, snapshot);
}
