import { describe, expect, it } from 'vitest';
import {
  ATTACHMENT_LIMITS,
  attachmentMediaType,
  attachmentParts,
  bytesToBase64,
  checkAttachments,
  dataUrlBytes,
  encodeAttachment,
  formatSize,
  storedFile,
} from '../src/chat/attachments';

const MB = 1024 * 1024;
const file = (name: string, size: number, type = '') => ({ name, size, type });

describe('attachmentMediaType', () => {
  it('takes the browser type when it is allowed, else guesses from the extension', () => {
    expect(attachmentMediaType(file('a.png', 1, 'image/png'))).toBe('image/png');
    expect(attachmentMediaType(file('notes.md', 1))).toBe('text/markdown');
    expect(attachmentMediaType(file('data.json', 1, 'application/json'))).toBe('application/json');
    expect(attachmentMediaType(file('a.txt', 1, 'text/plain; charset=utf-8'))).toBe('text/plain');
    expect(attachmentMediaType(file('main.rs', 1, 'application/octet-stream'))).toBe('text/plain');
    expect(attachmentMediaType(file('setup.exe', 1, 'application/x-msdownload'))).toBeUndefined();
    expect(attachmentMediaType(file('archive.zip', 1, 'application/zip'))).toBeUndefined();
    expect(attachmentMediaType(file('README', 1))).toBeUndefined();
  });
});

describe('checkAttachments', () => {
  it('accepts what fits and says why the rest does not', () => {
    const result = checkAttachments([], [file('a.png', 1, 'image/png'), file('b.zip', 1, 'application/zip'), file('huge.pdf', 21 * MB, 'application/pdf')]);
    expect(result.accepted.map((a) => [a.file.name, a.mediaType])).toEqual([['a.png', 'image/png']]);
    expect(result.problems).toEqual([
      'b.zip cannot be attached: only images, PDFs, text and JSON files can.',
      'huge.pdf is 21.0 MB; a file can be at most 20 MB.',
    ]);
  });

  it('counts the files already attached against the limit of 10 per message', () => {
    const current = Array.from({ length: 8 }, () => ({ size: 10 }));
    const incoming = Array.from({ length: 4 }, (_, i) => file(`f${i}.txt`, 10, 'text/plain'));
    const result = checkAttachments(current, incoming);
    expect(result.accepted).toHaveLength(ATTACHMENT_LIMITS.maxFiles - 8);
    expect(result.problems).toEqual(['At most 10 files per message: 2 were left out.']);
  });

  it('keeps the total within 40 MB', () => {
    const result = checkAttachments([{ size: 15 * MB }], [file('a.pdf', 15 * MB, 'application/pdf'), file('b.pdf', 15 * MB, 'application/pdf'), file('c.txt', 1, 'text/plain')]);
    expect(result.accepted.map((a) => a.file.name)).toEqual(['a.pdf', 'c.txt']);
    expect(result.problems).toEqual(['b.pdf was left out: the files of one message can add up to at most 40 MB.']);
  });

  it('takes a file of exactly 20 MB', () => {
    expect(checkAttachments([], [file('edge.png', 20 * MB, 'image/png')]).accepted).toHaveLength(1);
  });
});

describe('encoding', () => {
  it('is standard base64 without a data: prefix, also for files larger than one slice', async () => {
    const bytes = new Uint8Array(100_000).map((_, i) => (i * 7919) % 256);
    expect(bytesToBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    expect(bytesToBase64(new Uint8Array())).toBe('');

    const picked = new File([bytes], 'blob.bin.txt', { type: 'text/plain' });
    const attachment = await encodeAttachment({ file: picked, mediaType: 'text/plain' });
    expect(attachment).toEqual({ mediaType: 'text/plain', filename: 'blob.bin.txt', data: Buffer.from(bytes).toString('base64') });
  });

  it('shows a sent file as the stored message will (a data: URL) and knows its size', () => {
    const data = Buffer.from('hello world').toString('base64');
    const [part] = attachmentParts([{ mediaType: 'text/plain', filename: 'hi.txt', data }]);
    expect(part).toEqual({ type: 'file', mediaType: 'text/plain', url: `data:text/plain;base64,${data}`, filename: 'hi.txt' });
    expect(dataUrlBytes(part && part.type === 'file' ? part.url : '')).toBe(11);
    expect(dataUrlBytes('https://example.com/a.png')).toBeUndefined();
  });

  it('writes sizes for people', () => {
    expect(formatSize(512)).toBe('512 B');
    expect(formatSize(1536)).toBe('1.5 KB');
    expect(formatSize(4 * MB)).toBe('4.0 MB');
  });

  it('rebuilds a stored file as the same attachment when an edited message keeps it', async () => {
    const data = Buffer.from([0, 1, 2, 250, 255]).toString('base64');
    const [part] = attachmentParts([{ mediaType: 'image/png', filename: 'dot.png', data }]);
    const file = part?.type === 'file' ? storedFile(part) : undefined;
    expect(file).toMatchObject({ name: 'dot.png', type: 'image/png', size: 5 });
    expect(file && (await encodeAttachment({ file, mediaType: file.type }))).toEqual({ mediaType: 'image/png', filename: 'dot.png', data });
    // A file stored elsewhere than in a data: URL cannot be sent again from the browser.
    expect(storedFile({ type: 'file', mediaType: 'image/png', url: 'https://example.com/a.png' })).toBeUndefined();
  });
});
