/**
 * Drops chunks a listener has already seen. The backend promises each chunk exactly once
 * after a snapshot; this guard keeps a duplicate (a replayed `seq`) from being folded
 * into the message twice anyway.
 */
export class SeqGuard {
  private readonly lastSeq = new Map<string, number>();

  /** A snapshot covers chunks `1..=seq` of its execution. */
  covered(executionId: string, seq: number): void {
    this.lastSeq.set(executionId, Math.max(seq, this.lastSeq.get(executionId) ?? 0));
  }

  /** True when the chunk is new; records it. */
  accept(executionId: string, seq: number): boolean {
    const last = this.lastSeq.get(executionId) ?? 0;
    if (seq <= last) return false;
    this.lastSeq.set(executionId, seq);
    return true;
  }
}
