import { CodeTokenizer } from './codeTokens';
import { superseded, type HighlightJob, type HighlightReply } from './highlightJobs';

// The code highlighter's worker: Shiki compiles a grammar's patterns the first time a
// language is used (tens of milliseconds for a large one) and tokenizes each block; here
// neither holds up the page. Jobs are answered in order, one at a time; a streaming
// block's job that a later one makes stale is skipped.

interface WorkerScope {
  onmessage: ((event: MessageEvent<HighlightJob>) => void) | null;
  postMessage(reply: HighlightReply): void;
}
const scope = self as unknown as WorkerScope;

const tokenizer = new CodeTokenizer();
const queue: HighlightJob[] = [];
let draining = false;

scope.onmessage = (event) => {
  queue.push(event.data);
  if (!draining) void drain();
};

async function drain(): Promise<void> {
  draining = true;
  try {
    for (let job = queue.shift(); job; job = queue.shift()) {
      if (superseded(job, queue)) {
        scope.postMessage({ id: job.id, skipped: true });
        continue;
      }
      try {
        scope.postMessage({ id: job.id, tokens: await tokenizer.tokens(job.code, job.language) });
      } catch (error) {
        scope.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
      }
    }
  } finally {
    draining = false;
  }
}
