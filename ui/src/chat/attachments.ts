import type { Attachment, UiPart } from '../protocol.gen';

/** What the backend accepts with one message (`stream_open`'s `attachments`). */
export const ATTACHMENT_LIMITS = {
  maxFiles: 10,
  maxFileBytes: 20 * 1024 * 1024,
  maxTotalBytes: 40 * 1024 * 1024,
} as const;

/** The parts of a picked, pasted or dropped file the checks need (a `File` has them). */
export interface FileFacts {
  name: string;
  size: number;
  type: string;
}

/** Media types browsers often leave empty, by file extension. */
const BY_EXTENSION: Record<string, string> = {
  txt: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  log: 'text/plain',
  json: 'application/json',
  pdf: 'application/pdf',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  xml: 'text/xml',
  yaml: 'text/yaml',
  yml: 'text/yaml',
  toml: 'text/plain',
  ini: 'text/plain',
  js: 'text/javascript',
  mjs: 'text/javascript',
  ts: 'text/plain',
  tsx: 'text/plain',
  jsx: 'text/plain',
  py: 'text/x-python',
  rs: 'text/plain',
  go: 'text/plain',
  java: 'text/plain',
  c: 'text/plain',
  h: 'text/plain',
  cpp: 'text/plain',
  sh: 'text/plain',
  sql: 'text/plain',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
};

/** Images, PDFs, text and JSON: what models are sent. */
export function isAllowedMediaType(mediaType: string): boolean {
  return mediaType.startsWith('image/') || mediaType.startsWith('text/') || mediaType === 'application/pdf' || mediaType === 'application/json';
}

/**
 * The media type to send a file as: the browser's (without parameters), or one guessed
 * from the extension when the browser gave none or a generic one. Undefined when the file
 * cannot be attached.
 */
export function attachmentMediaType(file: Pick<FileFacts, 'name' | 'type'>): string | undefined {
  const given = file.type.split(';')[0]?.trim().toLowerCase() ?? '';
  if (given && isAllowedMediaType(given)) return given;
  const extension = file.name.includes('.') ? file.name.split('.').pop()?.toLowerCase() : undefined;
  const guessed = extension ? BY_EXTENSION[extension] : undefined;
  return guessed && isAllowedMediaType(guessed) ? guessed : undefined;
}

export interface CheckedFiles<F extends FileFacts> {
  /** The files that fit, with the media type to send them as. */
  accepted: { file: F; mediaType: string }[];
  /** One sentence per file (or limit) that did not fit. */
  problems: string[];
}

/**
 * Which of `incoming` can join the `current` attachments within the backend's limits,
 * in order; the rest are explained.
 */
export function checkAttachments<F extends FileFacts>(current: readonly Pick<FileFacts, 'size'>[], incoming: readonly F[]): CheckedFiles<F> {
  const accepted: CheckedFiles<F>['accepted'] = [];
  const problems: string[] = [];
  let count = current.length;
  let total = current.reduce((sum, file) => sum + file.size, 0);
  let tooMany = 0;
  for (const file of incoming) {
    const mediaType = attachmentMediaType(file);
    if (!mediaType) {
      problems.push(`${file.name} cannot be attached: only images, PDFs, text and JSON files can.`);
    } else if (file.size > ATTACHMENT_LIMITS.maxFileBytes) {
      problems.push(`${file.name} is ${formatSize(file.size)}; a file can be at most 20 MB.`);
    } else if (count >= ATTACHMENT_LIMITS.maxFiles) {
      tooMany++;
    } else if (total + file.size > ATTACHMENT_LIMITS.maxTotalBytes) {
      problems.push(`${file.name} was left out: the files of one message can add up to at most 40 MB.`);
    } else {
      accepted.push({ file, mediaType });
      count++;
      total += file.size;
    }
  }
  if (tooMany > 0) {
    problems.push(`At most ${ATTACHMENT_LIMITS.maxFiles} files per message: ${tooMany} ${tooMany === 1 ? 'was' : 'were'} left out.`);
  }
  return { accepted, problems };
}

/** Standard base64 (no `data:` prefix), in slices so large files do not overflow the call stack. */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  const slice = 0x8000;
  for (let start = 0; start < bytes.length; start += slice) {
    binary += String.fromCharCode(...bytes.subarray(start, start + slice));
  }
  return btoa(binary);
}

/** "512 B", "12.3 KB", "4.0 MB". */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** The file parts a sent message shows before the stored one is read back (as the backend stores them). */
export function attachmentParts(attachments: readonly Attachment[]): UiPart[] {
  return attachments.map((attachment) => ({
    type: 'file',
    mediaType: attachment.mediaType,
    url: `data:${attachment.mediaType};base64,${attachment.data}`,
    filename: attachment.filename,
  }));
}

/** Bytes of a `data:` URL's base64 payload (for a size label), without decoding it. */
export function dataUrlBytes(url: string): number | undefined {
  const comma = url.indexOf(',');
  if (!url.startsWith('data:') || comma === -1 || !url.slice(0, comma).endsWith(';base64')) return undefined;
  const data = url.slice(comma + 1);
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * A stored message's file as a file to send again (editing the message keeps it unless
 * removed). Undefined when the part holds no `data:` URL to rebuild the bytes from.
 */
export function storedFile(part: Extract<UiPart, { type: 'file' }>): File | undefined {
  const comma = part.url.indexOf(',');
  if (!part.url.startsWith('data:') || comma === -1 || !part.url.slice(0, comma).endsWith(';base64')) return undefined;
  let binary: string;
  try {
    binary = atob(part.url.slice(comma + 1));
  } catch {
    return undefined;
  }
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  return new File([bytes], part.filename ?? 'attachment', { type: part.mediaType });
}

/** A file picked, pasted or dropped into the composer, not sent yet. */
export interface PendingFile {
  id: string;
  file: File;
  mediaType: string;
}

/** A picked file as `stream_open` sends it (standard base64, no `data:` prefix). */
export async function encodeAttachment(pending: Pick<PendingFile, 'file' | 'mediaType'>): Promise<Attachment> {
  const bytes = new Uint8Array(await pending.file.arrayBuffer());
  return { mediaType: pending.mediaType, filename: pending.file.name || 'attachment', data: bytesToBase64(bytes) };
}
