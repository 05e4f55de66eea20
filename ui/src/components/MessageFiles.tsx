import { useEffect, useState } from 'react';
import { dataUrlBytes, formatSize } from '../chat/attachments';
import type { UiPart } from '../protocol.gen';

type FilePart = Extract<UiPart, { type: 'file' }>;

/** The files sent with a message: images as thumbnails (click for full size), others as chips. */
export function MessageFiles({ files }: { files: readonly FilePart[] }) {
  const [open, setOpen] = useState<FilePart>();
  if (files.length === 0) return null;
  return (
    <div className="message-files">
      {files.map((file, index) =>
        file.mediaType.startsWith('image/') ? (
          <button
            key={index}
            type="button"
            className="message-image"
            data-testid="message-file-image"
            data-filename={file.filename}
            title={`${file.filename ?? 'Image'} — click to see it full size`}
            onClick={() => setOpen(file)}
          >
            <img src={file.url} alt={file.filename ?? 'Attached image'} />
          </button>
        ) : (
          <FileChip key={index} file={file} />
        ),
      )}
      {open && <ImageViewer file={open} onClose={() => setOpen(undefined)} />}
    </div>
  );
}

function FileChip({ file }: { file: FilePart }) {
  const bytes = dataUrlBytes(file.url);
  const name = file.filename ?? 'file';
  const content = (
    <>
      <span className="file-chip-name">{name}</span>
      <span className="file-chip-meta">
        {file.mediaType}
        {bytes !== undefined && ` · ${formatSize(bytes)}`}
      </span>
    </>
  );
  return /^https?:/i.test(file.url) ? (
    <a className="file-chip" data-testid="message-file" data-filename={name} href={file.url} target="_blank" rel="noreferrer">
      {content}
    </a>
  ) : (
    <a className="file-chip" data-testid="message-file" data-filename={name} href={file.url} download={name}>
      {content}
    </a>
  );
}

/** An image at full size over the app; Escape or a click closes it. */
function ImageViewer({ file, onClose }: { file: FilePart; onClose: () => void }) {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      // Taken: the window's shortcuts (Esc stops a reply) leave it alone.
      event.preventDefault();
      onClose();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [onClose]);
  return (
    <div className="image-viewer" data-testid="image-viewer" role="dialog" aria-modal="true" aria-label={file.filename ?? 'Image'} onClick={onClose}>
      <img src={file.url} alt={file.filename ?? 'Attached image'} />
      <button type="button" className="button small image-viewer-close" onClick={onClose}>
        Close
      </button>
    </div>
  );
}
