/** One line of a unified diff, as the diff view colours it. */
export interface DiffLine {
  kind: 'file' | 'hunk' | 'add' | 'remove' | 'context' | 'note';
  /** The line without its `+`/`-`/space marker (headers and notes as they are). */
  text: string;
  /** Line numbers in the old and new file, for body lines. */
  oldLine?: number;
  newLine?: number;
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * Splits a unified diff (what `approvals_list` gives as `preview` for file edits) into
 * lines. Inside a hunk its header's counts decide what is body, so a removed line that
 * starts with `--` is not taken for a file header.
 */
export function parseUnifiedDiff(diff: string): DiffLine[] {
  const lines = diff.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const out: DiffLine[] = [];
  let oldLeft = 0;
  let newLeft = 0;
  let oldLine = 0;
  let newLine = 0;
  for (const raw of lines) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (oldLeft > 0 || newLeft > 0) {
      const marker = line[0];
      const text = line.slice(1);
      if (marker === '+' && newLeft > 0) {
        out.push({ kind: 'add', text, newLine: newLine++ });
        newLeft--;
        continue;
      }
      if (marker === '-' && oldLeft > 0) {
        out.push({ kind: 'remove', text, oldLine: oldLine++ });
        oldLeft--;
        continue;
      }
      if ((marker === ' ' || line === '') && oldLeft > 0 && newLeft > 0) {
        out.push({ kind: 'context', text, oldLine: oldLine++, newLine: newLine++ });
        oldLeft--;
        newLeft--;
        continue;
      }
      if (marker === '\\') {
        out.push({ kind: 'note', text: line });
        continue;
      }
      // The hunk's counts were wrong: read on as headers.
      oldLeft = 0;
      newLeft = 0;
    }
    const hunk = HUNK.exec(line);
    if (hunk) {
      oldLine = Number(hunk[1]);
      oldLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      newLine = Number(hunk[3]);
      newLeft = hunk[4] === undefined ? 1 : Number(hunk[4]);
      // An empty side starts at line 0 but its next line is 1.
      if (oldLeft === 0) oldLine += 1;
      if (newLeft === 0) newLine += 1;
      out.push({ kind: 'hunk', text: line });
    } else if (line.startsWith('--- ') || line.startsWith('+++ ') || line.startsWith('diff ') || line.startsWith('index ')) {
      out.push({ kind: 'file', text: line });
    } else if (line.startsWith('\\')) {
      out.push({ kind: 'note', text: line });
    } else if (line.startsWith('+')) {
      out.push({ kind: 'add', text: line.slice(1) });
    } else if (line.startsWith('-')) {
      out.push({ kind: 'remove', text: line.slice(1) });
    } else {
      out.push({ kind: 'context', text: line.startsWith(' ') ? line.slice(1) : line });
    }
  }
  return out;
}

/** How many lines a diff adds and removes. */
export function diffStats(lines: readonly DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    if (line.kind === 'add') added++;
    else if (line.kind === 'remove') removed++;
  }
  return { added, removed };
}

/**
 * Whether an approval's preview is a unified diff (a file change) or a plain note (why
 * the call asks, or why it would fail).
 */
export function isUnifiedDiff(preview: string): boolean {
  return /^(--- |\+\+\+ |@@ )/m.test(preview);
}

/**
 * An approval card's preview as a note and a diff: a note the backend put before a diff
 * (a card kept across a restart says so above the agent's diff, a blank line apart), the
 * diff alone, or a note alone.
 */
export function previewParts(preview: string): { note: string | undefined; diff: string | undefined } {
  const gap = preview.indexOf('\n\n');
  if (gap > 0) {
    const head = preview.slice(0, gap);
    const tail = preview.slice(gap + 2);
    if (!isUnifiedDiff(head) && isUnifiedDiff(tail)) return { note: head, diff: tail };
  }
  return isUnifiedDiff(preview) ? { note: undefined, diff: preview } : { note: preview, diff: undefined };
}
