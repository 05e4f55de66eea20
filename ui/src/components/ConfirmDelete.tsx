import { useEffect, useRef, type KeyboardEvent } from 'react';

interface ConfirmDeleteProps {
  /** What is deleted, as a question ("Delete this reply?"). */
  question: string;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

/**
 * Asks before deleting, in place (as the topic list does): Delete or Cancel. Focus starts
 * on Cancel, and Esc cancels.
 */
export function ConfirmDelete({ question, busy, onConfirm, onCancel }: ConfirmDeleteProps) {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => cancel.current?.focus(), []);
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    onCancel();
  };
  return (
    <div className="confirm-delete" role="alertdialog" aria-label="Confirm delete" data-testid="confirm-delete" onKeyDown={onKeyDown}>
      <span className="small">{question}</span>
      <button type="button" className="button danger small" data-testid="message-delete-confirm" disabled={busy} onClick={onConfirm}>
        {busy ? 'Deleting…' : 'Delete'}
      </button>
      <button ref={cancel} type="button" className="button ghost small" data-testid="message-delete-cancel" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}
