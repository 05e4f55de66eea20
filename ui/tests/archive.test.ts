import { describe, expect, it } from 'vitest';
import { importBatches } from '../src/archive/batches';

describe('importBatches', () => {
  it('cuts a list of conversations into lists below the size, keeping each whole', () => {
    const conversations = Array.from({ length: 5 }, (_, i) => ({ title: `c${i}`, mapping: { text: 'x'.repeat(40) } }));
    const { batches, total } = importBatches(JSON.stringify(conversations), 160);
    expect(total).toBe(5);
    expect(batches.map((b) => b.count)).toEqual([2, 2, 1]);
    expect(batches.flatMap((b) => JSON.parse(b.content) as unknown[])).toEqual(conversations);
  });

  it('cuts a Colloquy export into exports of some topics each, keeping the header', () => {
    const document = { format: 'colloquy-export', version: 1, exportedAt: 'x', app: 'colloquy', topics: [{ id: 'a' }, { id: 'b' }] };
    const { batches, total } = importBatches(JSON.stringify(document), 10);
    expect(total).toBe(2);
    expect(batches.map((b) => JSON.parse(b.content) as unknown)).toEqual([
      { ...document, topics: [{ id: 'a' }] },
      { ...document, topics: [{ id: 'b' }] },
    ]);
  });

  it('sends anything else as it is, for the backend to explain', () => {
    expect(importBatches('not json')).toEqual({ batches: [{ content: 'not json', count: 0 }], total: 0 });
    expect(importBatches('{"a":1}').batches[0]!.content).toBe('{"a":1}');
  });
});
