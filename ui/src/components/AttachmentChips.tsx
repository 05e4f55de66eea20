import { useEffect, useMemo } from 'react';
import { formatSize, type PendingFile } from '../chat/attachments';
import { FileIcon } from './Icons';

interface AttachmentChipsProps {
  files: readonly PendingFile[];
  onRemove: (id: string) => void;
  disabled?: boolean;
}

/** The files that go with the next message: name, size, a thumbnail for images, and remove. */
export function AttachmentChips({ files, onRemove, disabled }: AttachmentChipsProps) {
  if (files.length === 0) return null;
  return (
    <ul className="attachment-chips" aria-label="Files to send">
      {files.map((pending) => (
        <li key={pending.id} className="attachment-chip" data-testid="attachment-chip" data-filename={pending.file.name}>
          {pending.mediaType.startsWith('image/') ? <Thumbnail file={pending.file} /> : <FileIcon />}
          <span className="attachment-name" title={pending.file.name}>
            {pending.file.name}
          </span>
          <span className="attachment-size">{formatSize(pending.file.size)}</span>
          <button
            type="button"
            className="icon-button"
            data-testid="attachment-remove"
            aria-label={`Remove ${pending.file.name}`}
            title="Remove"
            disabled={disabled}
            onClick={() => onRemove(pending.id)}
          >
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}

/** Why picked files were left out (too large, too many, not a kind models read). */
export function AttachmentProblems({ problems, onDismiss }: { problems: readonly string[]; onDismiss: () => void }) {
  if (problems.length === 0) return null;
  return (
    <div className="attachment-problems" data-testid="attachment-error" role="alert">
      {problems.map((problem, index) => (
        <div key={index}>{problem}</div>
      ))}
      <button type="button" className="button ghost small" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}

function Thumbnail({ file }: { file: File }) {
  const url = useMemo(() => URL.createObjectURL(file), [file]);
  useEffect(() => () => URL.revokeObjectURL(url), [url]);
  return <img className="attachment-thumb" src={url} alt="" />;
}
