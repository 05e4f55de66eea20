import { describe, expect, it } from 'vitest';
import { diffStats, isUnifiedDiff, parseUnifiedDiff, previewParts } from '../src/chat/diff';

describe('parseUnifiedDiff', () => {
  it('reads a new file preview as the backend writes it for write_file', () => {
    const lines = parseUnifiedDiff('--- a/notes.md\n+++ b/notes.md\n@@ -0,0 +1 @@\n+hello\n\\ No newline at end of file\n');
    expect(lines.map((line) => [line.kind, line.text])).toEqual([
      ['file', '--- a/notes.md'],
      ['file', '+++ b/notes.md'],
      ['hunk', '@@ -0,0 +1 @@'],
      ['add', 'hello'],
      ['note', '\\ No newline at end of file'],
    ]);
    expect(lines[3]?.newLine).toBe(1);
    expect(diffStats(lines)).toEqual({ added: 1, removed: 0 });
  });

  it('numbers lines and uses the hunk counts, so a removed "-- x" line is not a file header', () => {
    const diff = ['--- a/a.md', '+++ b/a.md', '@@ -3,3 +3,3 @@', ' keep', '--- a rule', '+++ a new rule', ' tail', ''].join('\n');
    const lines = parseUnifiedDiff(diff);
    expect(lines.slice(2).map((line) => [line.kind, line.text, line.oldLine, line.newLine])).toEqual([
      ['hunk', '@@ -3,3 +3,3 @@', undefined, undefined],
      ['context', 'keep', 3, 3],
      ['remove', '-- a rule', 4, undefined],
      ['add', '++ a new rule', undefined, 4],
      ['context', 'tail', 5, 5],
    ]);
    expect(diffStats(lines)).toEqual({ added: 1, removed: 1 });
  });

  it('keeps empty context lines and a second hunk', () => {
    const lines = parseUnifiedDiff('@@ -1,2 +1,2 @@\n-a\n+b\n\n@@ -10 +10 @@\n-x\n+y\n');
    expect(lines.map((line) => line.kind)).toEqual(['hunk', 'remove', 'add', 'context', 'hunk', 'remove', 'add']);
    expect(lines[5]?.oldLine).toBe(10);
  });
});

describe('isUnifiedDiff', () => {
  it('tells a file change from a plain note', () => {
    expect(isUnifiedDiff('--- a/notes.md\n+++ b/notes.md\n@@ -0,0 +1 @@\n+hello\n')).toBe(true);
    expect(isUnifiedDiff('localhost leads to 127.0.0.1, an address on this computer or the local network')).toBe(false);
    expect(isUnifiedDiff('this edit will fail: old_text was not found in a.md')).toBe(false);
  });
});

describe('previewParts', () => {
  const diff = '--- a/notes.md\n+++ b/notes.md\n@@ -0,0 +1 @@\n+hello\n';
  it('keeps a note put before a diff apart from it, and either alone whole', () => {
    const note = 'Colloquy was restarted while Fake agent waited for this answer, so its request is no longer open.';
    expect(previewParts(`${note}\n\n${diff}`)).toEqual({ note, diff });
    expect(previewParts(diff)).toEqual({ note: undefined, diff });
    expect(previewParts(note)).toEqual({ note, diff: undefined });
    // A diff with a blank line inside stays one diff.
    const spaced = `--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n+a\n\n+b\n`;
    expect(previewParts(spaced)).toEqual({ note: undefined, diff: spaced });
  });
});
