import type { CodeHighlighterPlugin, HighlightOptions, HighlightResult } from 'streamdown';
import { THEMES, type HighlightJob, type HighlightReply, type Tokens } from './highlightJobs';

// Streamdown's code highlighter, with Shiki in a worker (`codeHighlighter.worker.ts`):
// highlighting a block never holds up the page, however large the grammar or the block.
// A block shows as plain code until its tokens arrive (Streamdown keeps showing the last
// tokens it had while a growing block waits for the next ones). Finished blocks' tokens
// are kept here, so a block scrolled back into view (the list is virtualized) is coloured
// in its first frame.

/** Finished blocks' tokens kept, by count and by size (tokens plus text). */
const MAX_KEPT = 2_000;
const MAX_KEPT_COST = 400_000;

interface Waiting {
  code: string;
  language: string;
  callbacks: ((result: HighlightResult) => void)[];
  keep: boolean;
}

class WorkerHighlighter {
  private worker: Worker | undefined;
  /** The worker could not start or failed: code stays plain. */
  private failed = false;
  private nextId = 1;
  private waiting = new Map<string, Waiting>();
  private keys = new Map<number, string>();
  private kept = new Map<string, { tokens: Tokens; cost: number }>();
  private keptCost = 0;

  highlight(code: string, language: string, incomplete: boolean, callback?: (result: HighlightResult) => void): HighlightResult | null {
    const key = `${language}\n${code}`;
    const known = this.kept.get(key);
    if (known) {
      // Most recently used last: the first entries are the ones to drop.
      this.kept.delete(key);
      this.kept.set(key, known);
      return known.tokens;
    }
    const worker = this.start();
    if (!worker) return null;
    const waiting = this.waiting.get(key);
    if (waiting) {
      if (callback) waiting.callbacks.push(callback);
      waiting.keep ||= !incomplete;
      return null;
    }
    const entry: Waiting = { code, language, callbacks: callback ? [callback] : [], keep: !incomplete };
    this.waiting.set(key, entry);
    this.post(worker, key, entry, incomplete);
    return null;
  }

  private post(worker: Worker, key: string, entry: Waiting, incomplete: boolean): void {
    const id = this.nextId++;
    this.keys.set(id, key);
    worker.postMessage({ id, code: entry.code, language: entry.language, incomplete } satisfies HighlightJob);
  }

  private start(): Worker | undefined {
    if (this.worker || this.failed) return this.worker;
    try {
      const worker = new Worker(new URL('./codeHighlighter.worker.ts', import.meta.url), { type: 'module', name: 'code-highlighter' });
      worker.onmessage = (event: MessageEvent<HighlightReply>) => this.answered(event.data);
      worker.onerror = (event) => this.fail(event.message || 'the worker failed');
      this.worker = worker;
    } catch (error) {
      this.fail(error instanceof Error ? error.message : String(error));
    }
    return this.worker;
  }

  private answered(reply: HighlightReply): void {
    const key = this.keys.get(reply.id);
    this.keys.delete(reply.id);
    const waiting = key === undefined ? undefined : this.waiting.get(key);
    if (key === undefined || !waiting) return;
    if ('skipped' in reply) {
      // A newer job for the same growing block answers that block; a finished block that
      // asked for the same code meanwhile still wants its own answer.
      if (waiting.keep && this.worker) this.post(this.worker, key, waiting, false);
      else this.waiting.delete(key);
      return;
    }
    this.waiting.delete(key);
    if ('tokens' in reply) {
      if (waiting.keep) this.keep(key, reply.tokens);
      for (const callback of waiting.callbacks) callback(reply.tokens);
    } else {
      console.warn(`code highlighting failed: ${reply.error}`);
    }
  }

  private keep(key: string, tokens: Tokens): void {
    const cost = key.length + tokens.tokens.reduce((sum, row) => sum + row.length, 0) * 16;
    this.kept.set(key, { tokens, cost });
    this.keptCost += cost;
    for (const [oldest, entry] of this.kept) {
      if (this.kept.size <= 1 || (this.kept.size <= MAX_KEPT && this.keptCost <= MAX_KEPT_COST)) break;
      this.kept.delete(oldest);
      this.keptCost -= entry.cost;
    }
  }

  private fail(reason: string): void {
    if (this.failed) return;
    this.failed = true;
    console.warn(`code highlighting is off: ${reason}`);
    this.worker?.terminate();
    this.worker = undefined;
    this.waiting.clear();
    this.keys.clear();
  }
}

const highlighter = new WorkerHighlighter();

/** The plugin Streamdown is given as `plugins.code`. */
export const code: CodeHighlighterPlugin = {
  name: 'shiki',
  type: 'code-highlighter',
  // Any fence language is accepted: one Shiki does not know is shown as plain text.
  supportsLanguage: () => true,
  getSupportedLanguages: () => [],
  getThemes: () => [THEMES[0], THEMES[1]],
  highlight: ({ code: text, language, isIncomplete = false }: HighlightOptions, callback) =>
    highlighter.highlight(text, language, isIncomplete, callback),
};
