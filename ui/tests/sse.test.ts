import { describe, expect, it } from 'vitest';
import { SseParser, type SseEvent } from '../src/backend/sse';

function parseAll(pieces: string[]): SseEvent[] {
  const parser = new SseParser();
  const events = pieces.flatMap((piece) => parser.push(piece));
  return [...events, ...parser.end()];
}

/** Every way of cutting `text` in two, plus one piece per character. */
function splits(text: string): string[][] {
  const ways = [[text], [...text]];
  for (let i = 1; i < text.length; i++) ways.push([text.slice(0, i), text.slice(i)]);
  return ways;
}

const STREAM = [
  'event: reply',
  'data: {"live":true,"turnId":"turn-1"}',
  '',
  ': keep-alive comment',
  'id: exec-1:1',
  'data: {"kind":"chunk","seq":1}',
  '',
  'data: {"kind":"terminal"}',
  '',
  '',
].join('\n');

const EXPECTED: SseEvent[] = [
  { event: 'reply', data: '{"live":true,"turnId":"turn-1"}' },
  { event: 'message', data: '{"kind":"chunk","seq":1}', id: 'exec-1:1' },
  { event: 'message', data: '{"kind":"terminal"}' },
];

describe('SseParser', () => {
  it('parses events with their event type, data and id', () => {
    expect(parseAll([STREAM])).toEqual(EXPECTED);
  });

  it('yields the same events however the text is split', () => {
    for (const pieces of splits(STREAM)) expect(parseAll(pieces)).toEqual(EXPECTED);
  });

  it('accepts CRLF and lone CR line endings, including a CRLF split across pieces', () => {
    const crlf = STREAM.replace(/\n/g, '\r\n');
    for (const pieces of splits(crlf)) expect(parseAll(pieces)).toEqual(EXPECTED);
    const cr = STREAM.replace(/\n/g, '\r');
    for (const pieces of splits(cr)) expect(parseAll(pieces)).toEqual(EXPECTED);
  });

  it('joins multi-line data with newlines and keeps a value without a space after the colon', () => {
    const text = 'data: first\ndata:second\ndata\ndata:  indented\n\n';
    expect(parseAll([text])).toEqual([{ event: 'message', data: 'first\nsecond\n\n indented' }]);
  });

  it('does not dispatch an event without data lines', () => {
    expect(parseAll(['event: reply\nid: 3\n\n: only a comment\n\n'])).toEqual([]);
  });

  it('delivers a final event that lacks its blank line when the stream ends', () => {
    expect(parseAll(['data: {"kind":"terminal"}\r'])).toEqual([{ event: 'message', data: '{"kind":"terminal"}' }]);
  });

  it('keeps multi-byte text intact (decoding happens before the parser)', () => {
    const bytes = new TextEncoder().encode('data: Ünïcödé ✓ 🎉\n\n');
    const decoder = new TextDecoder();
    const parser = new SseParser();
    const events = [...bytes].flatMap((byte) => parser.push(decoder.decode(new Uint8Array([byte]), { stream: true })));
    expect(events).toEqual([{ event: 'message', data: 'Ünïcödé ✓ 🎉' }]);
  });
});
