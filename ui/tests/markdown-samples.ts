/** A long markdown reply as lines, the shape `bench/ui-bench.mjs` streams: headings, lists, tables, code. */
export function longReply(lines: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < lines; i += 1) {
    switch (i % 5) {
      case 0:
        out.push(`## Section ${i}\n`, '\n');
        break;
      case 1:
        out.push(`- item ${i} with **bold** text\n`, `- item ${i}b with \`code\`\n`, '\n');
        break;
      case 2:
        out.push('| name | value |\n', '| --- | --- |\n', `| row ${i} | ${i * 7} |\n`, '\n');
        break;
      case 3:
        out.push('```rust\n', `fn f${i}() -> u32 { ${i} }\n`, '```\n', '\n');
        break;
      default:
        out.push(`A paragraph line ${i} with some words to wrap and render.\n`, '\n');
    }
  }
  return out.slice(0, lines);
}

/** A small deterministic random source (mulberry32), so a failing split can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `text` cut into chunks of 1 to `longest` characters. */
export function randomChunks(text: string, random: () => number, longest: number): string[] {
  const chunks: string[] = [];
  for (let at = 0; at < text.length; ) {
    const size = 1 + Math.floor(random() * longest);
    chunks.push(text.slice(at, at + size));
    at += size;
  }
  return chunks;
}
