import { memo } from 'react';

/** One block of a message, in the shapes a chat reply has once rendered. */
export type Block =
  | { kind: 'paragraph'; text: string }
  | { kind: 'bullets'; items: string[] }
  | { kind: 'code'; lines: string[] }
  /** A reply being streamed: one line per chunk received. */
  | { kind: 'streamed'; lines: string[] };

export interface ChatMessage {
  key: string;
  role: 'user' | 'assistant';
  blocks: Block[];
}

const WORDS =
  'the a model reply stream token window list scroll render message topic chunk provider answer question because which would could should while after before every some many other first last value error result state number browser layout frame paint height width text code line function return const async await'.split(
    ' ',
  );

/** Seeded (mulberry32), so every library renders the same 10,000 messages. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function between(next: () => number, low: number, high: number): number {
  return low + Math.floor(next() * (high - low + 1));
}

function sentence(next: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i += 1) out.push(WORDS[Math.floor(next() * WORDS.length)]);
  const text = out.join(' ');
  return `${text[0].toUpperCase()}${text.slice(1)}.`;
}

function replyBlocks(next: () => number): Block[] {
  const shape = next();
  if (shape < 0.3) return [{ kind: 'paragraph', text: sentence(next, between(next, 8, 40)) }];
  if (shape < 0.55) {
    return [
      { kind: 'paragraph', text: sentence(next, between(next, 6, 20)) },
      { kind: 'bullets', items: Array.from({ length: between(next, 3, 8) }, () => sentence(next, between(next, 4, 18))) },
    ];
  }
  if (shape < 0.8) {
    return [
      { kind: 'paragraph', text: sentence(next, between(next, 6, 20)) },
      { kind: 'code', lines: Array.from({ length: between(next, 4, 30) }, (_, i) => `${'  '.repeat(i % 3)}let value${i} = compute(${i}, "${sentence(next, 2)}");`) },
    ];
  }
  return Array.from({ length: between(next, 2, 5) }, () => ({ kind: 'paragraph', text: sentence(next, between(next, 60, 150)) }));
}

/** `count` messages, a question and a reply in turn; `prefix` keeps keys apart across calls. */
export function makeMessages(count: number, seed: number, prefix: string): ChatMessage[] {
  const next = random(seed);
  return Array.from({ length: count }, (_, i) => {
    const role = i % 2 === 0 ? 'user' : 'assistant';
    const blocks: Block[] = role === 'user' ? [{ kind: 'paragraph', text: sentence(next, between(next, 4, 30)) }] : replyBlocks(next);
    return { key: `${prefix}${i}`, role, blocks };
  });
}

/** The last message with one more streamed line. */
export function grown(message: ChatMessage, step: number): ChatMessage {
  const next = random(step + 1);
  const last = message.blocks[message.blocks.length - 1];
  const line = sentence(next, between(next, 6, 14));
  const blocks =
    last?.kind === 'streamed'
      ? [...message.blocks.slice(0, -1), { kind: 'streamed' as const, lines: [...last.lines, line] }]
      : [...message.blocks, { kind: 'streamed' as const, lines: [line] }];
  return { ...message, blocks };
}

/** A rendered message; `data-key` lets the driver find it whatever the library's DOM. */
export const Message = memo(function Message({ message }: { message: ChatMessage }) {
  return (
    <article className={`message ${message.role}`} data-key={message.key}>
      {message.blocks.map((block, i) => {
        switch (block.kind) {
          case 'paragraph':
            return <p key={i}>{block.text}</p>;
          case 'bullets':
            return (
              <ul key={i}>
                {block.items.map((item, j) => (
                  <li key={j}>{item}</li>
                ))}
              </ul>
            );
          case 'code':
            return (
              <pre key={i}>
                <code>{block.lines.join('\n')}</code>
              </pre>
            );
          case 'streamed':
            return (
              <div key={i} className="streamed">
                {block.lines.map((line, j) => (
                  <div key={j}>{line}</div>
                ))}
              </div>
            );
        }
      })}
    </article>
  );
});
