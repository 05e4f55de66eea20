/** Where `query` occurs in `text`, ignoring case: the start of each occurrence, in order, not overlapping. */
export function occurrences(text: string, query: string): number[] {
  if (query === '') return [];
  const haystack = text.toLocaleLowerCase();
  const needle = query.toLocaleLowerCase();
  // Lowercasing can change a string's length (e.g. "İ"); then offsets would not line up.
  if (haystack.length !== text.length || needle.length !== query.length) return exactOccurrences(text, query);
  return exactOccurrences(haystack, needle);
}

function exactOccurrences(text: string, query: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(query); at !== -1; at = text.indexOf(query, at + query.length)) found.push(at);
  return found;
}

/** Every occurrence of `query` in the text under `root`, as DOM ranges in reading order. */
export function findRanges(root: Node, query: string): Range[] {
  const ranges: Range[] = [];
  if (query.trim() === '') return ranges;
  const doc = root.ownerDocument;
  if (!doc) return ranges;
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => {
      const parent = node.parentElement;
      // Hidden text (a folded section's body, a script) is not what the user reads.
      if (!parent || parent.closest('script, style, [hidden]')) return NodeFilter.FILTER_REJECT;
      if (parent.closest('details:not([open])') && !parent.closest('summary')) return NodeFilter.FILTER_REJECT;
      return NodeFilter.FILTER_ACCEPT;
    },
  });
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent ?? '';
    for (const at of occurrences(text, query)) {
      const range = doc.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + query.length);
      ranges.push(range);
    }
  }
  return ranges;
}
