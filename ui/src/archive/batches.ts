/**
 * An import file cut into requests the backend takes one at a time: each request stays
 * well under the HTTP body limit, and the UI shows progress between them. Each batch is
 * a file of the same kind (a list of conversations, or a Colloquy export with some of
 * its topics), so the backend reads every batch as it would read the whole file.
 */
export interface ImportBatch {
  content: string;
  /** Conversations in this batch. */
  count: number;
}

/** Bytes of JSON per request (the server takes about 54 MB; IPC has no limit). */
export const BATCH_BYTES = 8 * 1024 * 1024;

export function importBatches(text: string, limit = BATCH_BYTES): { batches: ImportBatch[]; total: number } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    // The backend explains what is wrong with the file.
    return { batches: [{ content: text, count: 0 }], total: 0 };
  }
  if (Array.isArray(parsed)) {
    const batches = pack(parsed, limit).map((items) => ({ content: JSON.stringify(items), count: items.length }));
    return { batches: batches.length ? batches : [{ content: text, count: 0 }], total: parsed.length };
  }
  if (isExport(parsed)) {
    const { topics, ...head } = parsed;
    const batches = pack(topics, limit).map((items) => ({ content: JSON.stringify({ ...head, topics: items }), count: items.length }));
    return { batches: batches.length ? batches : [{ content: text, count: 0 }], total: topics.length };
  }
  return { batches: [{ content: text, count: 0 }], total: 0 };
}

function isExport(value: unknown): value is { topics: unknown[] } & Record<string, unknown> {
  return typeof value === 'object' && value !== null && 'format' in value && Array.isArray((value as { topics?: unknown }).topics);
}

/** Consecutive items whose JSON adds up to at most `limit` (an item larger than it goes alone). */
function pack(items: unknown[], limit: number): unknown[][] {
  const out: unknown[][] = [];
  let current: unknown[] = [];
  let size = 0;
  for (const item of items) {
    const length = JSON.stringify(item)?.length ?? 0;
    if (current.length > 0 && size + length > limit) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(item);
    size += length + 1;
  }
  if (current.length > 0) out.push(current);
  return out;
}
