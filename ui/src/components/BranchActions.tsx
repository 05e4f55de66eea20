import { useRef, useState } from 'react';
import { ConfirmDelete } from './ConfirmDelete';

/** What can be done to any message of a topic's tree; each resolves once done (errors are shown by the turn). */
export interface BranchHandlers {
  select(messageId: string): Promise<void>;
  fork(messageId: string): Promise<void>;
  remove(messageId: string): Promise<void>;
}

interface BranchActionsProps {
  messageId: string;
  handlers: BranchHandlers;
  /** The question the delete confirmation asks. */
  deleteQuestion: string;
}

/** "Fork from here" and "Delete" (after a confirmation) under a user message or a reply. */
export function BranchActions({ messageId, handlers, deleteQuestion }: BranchActionsProps) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState<'fork' | 'delete'>();
  const deleteButton = useRef<HTMLButtonElement>(null);
  const cancel = () => {
    setConfirming(false);
    // Back where the user was, for the keyboard.
    requestAnimationFrame(() => deleteButton.current?.focus());
  };
  const act = (which: 'fork' | 'delete', action: (messageId: string) => Promise<void>) => {
    setBusy(which);
    void action(messageId).finally(() => {
      setBusy(undefined);
      setConfirming(false);
    });
  };
  return (
    <>
      <button
        type="button"
        className="button ghost small"
        data-testid="message-fork"
        title="Start a new topic with the conversation up to here"
        disabled={busy !== undefined}
        onClick={() => act('fork', handlers.fork)}
      >
        {busy === 'fork' ? 'Forking…' : 'Fork from here'}
      </button>
      {confirming ? (
        <ConfirmDelete
          question={deleteQuestion}
          busy={busy === 'delete'}
          onConfirm={() => act('delete', handlers.remove)}
          onCancel={cancel}
        />
      ) : (
        <button
          ref={deleteButton}
          type="button"
          className="button ghost small"
          data-testid="message-delete"
          disabled={busy !== undefined}
          onClick={() => setConfirming(true)}
        >
          Delete
        </button>
      )}
    </>
  );
}
