import { describe, expect, it } from 'vitest';
import type { ListVersion } from '../src/protocol.gen';
import { ListFollower, type ListAnswer } from '../src/status/listFollower';

/** A list read the test answers by hand, in the order it likes. */
interface Read {
  resolve: (answer: ListAnswer<string>) => void;
  reject: (error: unknown) => void;
}

function harness() {
  const reads: Read[] = [];
  const shown: string[][] = [];
  const failures: unknown[] = [];
  const follower = new ListFollower<string>(
    () =>
      new Promise<ListAnswer<string>>((resolve, reject) => {
        reads.push({ resolve, reject });
      }),
    (items) => shown.push(items),
    (error) => failures.push(error),
  );
  return { follower, reads, shown, failures };
}

const at = (version: number, epoch = 'e1'): ListVersion => ({ epoch, version });
/** Lets the follower's awaits run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('ListFollower', () => {
  it('reads once on opening when the first snapshot tells nothing newer than the read saw', async () => {
    const { follower, reads, shown } = harness();
    const loading = follower.refresh();
    // Finished topics in the snapshot are no reason to read: only the list's version is.
    follower.follow(at(4));
    reads[0]?.resolve({ items: ['a', 'b'], version: at(4) });
    await loading;
    follower.follow(at(4));
    follower.follow(at(3));
    await settle();
    expect(reads).toHaveLength(1);
    expect(shown).toEqual([['a', 'b']]);
  });

  it('takes a read already on its way (asked for as the page loaded) as its first', async () => {
    const { follower, reads, shown } = harness();
    await follower.refresh(Promise.resolve({ items: ['early'], version: at(2) }));
    follower.follow(at(2));
    await settle();
    expect(reads).toHaveLength(0);
    expect(shown).toEqual([['early']]);
  });

  it('reads again when the feed tells of a newer change, or of another epoch', async () => {
    const { follower, reads, shown } = harness();
    const loading = follower.refresh();
    reads[0]?.resolve({ items: ['a'], version: at(4) });
    await loading;

    follower.follow(at(5)); // made in another window
    expect(reads).toHaveLength(2);
    reads[1]?.resolve({ items: ['new', 'a'], version: at(5) });
    await settle();
    expect(shown.at(-1)).toEqual(['new', 'a']);

    follower.follow(at(0, 'e2')); // the backend restarted: its count started over
    expect(reads).toHaveLength(3);
    reads[2]?.resolve({ items: ['a'], version: at(0, 'e2') });
    await settle();
    follower.follow(at(0, 'e2'));
    await settle();
    expect(reads).toHaveLength(3);
  });

  it('misses no change told while a read is on its way that the read did not see', async () => {
    const { follower, reads, shown } = harness();
    const loading = follower.refresh();
    // The read took version 4 before it read; a topic made at 5 meanwhile may be missing.
    follower.follow(at(5));
    expect(reads).toHaveLength(1);
    reads[0]?.resolve({ items: ['a'], version: at(4) });
    await settle();
    expect(shown).toEqual([['a']]);
    expect(reads).toHaveLength(2);
    reads[1]?.resolve({ items: ['new', 'a'], version: at(5) });
    await loading;
    expect(shown.at(-1)).toEqual(['new', 'a']);
    expect(reads).toHaveLength(2);

    // The same while a read the feed asked for is on its way: still one read at a time.
    follower.follow(at(6));
    follower.follow(at(7));
    expect(reads).toHaveLength(3);
    reads[2]?.resolve({ items: ['six', 'new', 'a'], version: at(6) });
    await settle();
    expect(reads).toHaveLength(4);
    reads[3]?.resolve({ items: ['seven', 'six', 'new', 'a'], version: at(7) });
    await settle();
    expect(reads).toHaveLength(4);
    expect(shown.at(-1)).toEqual(['seven', 'six', 'new', 'a']);
  });

  it('does not undo a change made here with a read from before it, and reads again', async () => {
    const { follower, reads, shown } = harness();
    const loading = follower.refresh();
    follower.changedHere(); // e.g. "New topic": the window shows it already
    reads[0]?.resolve({ items: ['a'], version: at(4) });
    await settle();
    expect(shown).toEqual([]);
    expect(reads).toHaveLength(2);
    reads[1]?.resolve({ items: ['mine', 'a'], version: at(5) });
    await loading;
    expect(shown).toEqual([['mine', 'a']]);
  });

  it('tells a failed read the feed asked for, and rejects one a caller asked for', async () => {
    const { follower, reads, failures } = harness();
    const first = follower.refresh();
    reads[0]?.reject(new Error('offline'));
    await expect(first).rejects.toThrow('offline');
    // Nothing read yet: the feed's word waits for a read that works (the retry).
    follower.follow(at(5));
    expect(reads).toHaveLength(1);
    const retry = follower.refresh();
    reads[1]?.resolve({ items: ['a'], version: at(4) });
    await settle();
    reads[2]?.reject(new Error('offline again'));
    await expect(retry).rejects.toThrow('offline again');
    follower.follow(at(6));
    reads[3]?.reject(new Error('still offline'));
    await settle();
    expect(failures).toHaveLength(1);
  });
});
