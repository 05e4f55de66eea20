import type { ListVersion } from '../protocol.gen';
import { listIsNewer } from './feed';

/** A list as read, with the list version the read saw (taken before it read). */
export interface ListAnswer<T> {
  items: T[];
  version: ListVersion;
}

/** How often a read is tried again when the window changed the list while it was read. */
const LOCAL_CHANGE_TRIES = 3;

/**
 * Keeps one list the backend owns (the topics, or the agent sessions) as fresh as the
 * status feed says it is: the list is read again only when the feed tells of a change
 * newer than what the last read saw, or the backend restarted (another epoch), never
 * because a reply finished. The feed's first snapshot does not read again a list read as
 * the window loaded, and a change told while a read is on its way, which that read may not
 * have seen, reads again once it lands: no change is missed.
 *
 * Reads never overlap: a reason to read while one is on its way is settled when it lands.
 */
export class ListFollower<T> {
  /** What the last applied read saw. */
  private seen: ListVersion | undefined;
  /** The list's last change the feed told of. */
  private known: ListVersion | undefined;
  private reading: Promise<void> | undefined;
  /** Asked to read while a read was on its way. */
  private again = false;
  /** Bumped by every change made in this window; a read from before one is not applied. */
  private localChanges = 0;

  constructor(
    private readonly read: () => Promise<ListAnswer<T>>,
    private readonly apply: (items: T[]) => void,
    /** A read that the feed asked for failed (one asked for by a caller rejects instead). */
    private readonly failed: (error: unknown) => void,
  ) {}

  /** The feed's latest word on the list ({@link listChange}); reads again if it is newer. */
  follow(known: ListVersion | undefined): void {
    if (!known) return;
    this.known = known;
    if (this.reading || !this.seen || !listIsNewer(known, this.seen)) return;
    this.refresh().catch(this.failed);
  }

  /**
   * The window changed the list itself (made, renamed or deleted something here) and shows
   * the change already: a read on its way may not hold it, so it is not applied (it would
   * undo the change on screen) and the list is read again.
   */
  changedHere(): void {
    this.localChanges += 1;
  }

  /**
   * Reads the list (the first read may be one already on its way, `first`: the one asked
   * for as the page loaded), applies it, and reads again while the feed knows of a newer
   * change. Rejects when a read fails.
   */
  refresh(first?: Promise<ListAnswer<T>>): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    const reading = this.readUntilFresh(first).finally(() => {
      this.reading = undefined;
    });
    this.reading = reading;
    return reading;
  }

  private async readUntilFresh(first: Promise<ListAnswer<T>> | undefined): Promise<void> {
    let pending = first;
    let stale = 0;
    for (;;) {
      this.again = false;
      const local = this.localChanges;
      const answer = await (pending ?? this.read());
      pending = undefined;
      if (this.localChanges !== local) {
        stale += 1;
        if (stale < LOCAL_CHANGE_TRIES) continue;
        // Changed here faster than it can be read: what is shown stays until the next change.
        return;
      }
      this.seen = answer.version;
      this.apply(answer.items);
      if (!this.again && !(this.known && listIsNewer(this.known, answer.version))) return;
    }
  }
}
