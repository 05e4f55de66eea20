import { useRef } from 'react';
import { PaperclipIcon } from './Icons';

interface AttachButtonProps {
  disabled?: boolean | undefined;
  /** The files the user picked (checked by the caller against the backend's limits). */
  onFiles: (files: File[]) => void;
}

/** The paperclip that opens the file picker, for a message being written or edited. */
export function AttachButton({ disabled, onFiles }: AttachButtonProps) {
  const picker = useRef<HTMLInputElement>(null);
  return (
    <>
      <button
        type="button"
        className="icon-button attach-button"
        data-testid="attach-button"
        aria-label="Attach files"
        title="Attach images, PDFs or text files (up to 10, 20 MB each)"
        disabled={disabled}
        onClick={() => picker.current?.click()}
      >
        <PaperclipIcon />
      </button>
      <input
        ref={picker}
        type="file"
        multiple
        hidden
        data-testid="attach-input"
        accept="image/*,application/pdf,text/*,application/json,.md,.csv,.json,.txt,.log,.yaml,.yml,.toml"
        onChange={(event) => {
          onFiles(Array.from(event.target.files ?? []));
          event.target.value = '';
        }}
      />
    </>
  );
}
