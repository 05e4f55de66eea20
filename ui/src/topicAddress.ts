/** The topic named by `#topic=<id>` (or the older `?topic=<id>`) in the address. */
export function topicFromUrl(): string | undefined {
  const fromHash = new URLSearchParams(window.location.hash.replace(/^#/, '')).get('topic');
  return fromHash ?? new URLSearchParams(window.location.search).get('topic') ?? undefined;
}

/** Keeps the open topic in the address (`#topic=<id>`) so a reload comes back to it. */
export function rememberTopicInUrl(id: string): void {
  const url = new URL(window.location.href);
  const hash = new URLSearchParams(url.hash.replace(/^#/, ''));
  if (hash.get('topic') === id && !url.searchParams.has('topic')) return;
  hash.set('topic', id);
  url.searchParams.delete('topic');
  url.hash = hash.toString();
  window.history.replaceState(window.history.state, '', url);
}
