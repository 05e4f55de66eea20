import type { Backend, OperationResponse } from './backend';

/**
 * The lists the workspace waits for before it shows anything (providers and topics),
 * asked for as the page loads, beside the open topic's first page (`chat/history.ts`),
 * rather than after React's first render: a reload shows the conversation one round trip
 * sooner. The workspace takes each, once, for its first read; a failed one is reported
 * there as any failed read is, and asked again by its retry.
 */
type EarlyList = 'providers_list' | 'topics_list';

const reads = new Map<EarlyList, { result: Promise<unknown>; at: number }>();

/** An early read older than this is not used: the workspace asks afresh. */
const EARLY_READ_MS = 5_000;

export function readListsEarly(backend: Backend): void {
  const at = performance.now();
  for (const [name, result] of [
    ['providers_list', backend.call('providers_list')],
    ['topics_list', backend.call('topics_list')],
  ] as const) {
    // Unhandled until taken; the taker reports a failure.
    result.catch(() => {});
    reads.set(name, { result, at });
  }
}

/** The early read of `name`, if there is a recent one; only the first caller gets it. */
export function takeEarlyList<K extends EarlyList>(name: K): Promise<OperationResponse<K>> | undefined {
  const read = reads.get(name);
  reads.delete(name);
  return read && performance.now() - read.at < EARLY_READ_MS ? (read.result as Promise<OperationResponse<K>>) : undefined;
}
