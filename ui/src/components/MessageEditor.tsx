import { useState, type KeyboardEvent } from 'react';
import { storedFile, type PendingFile } from '../chat/attachments';
import { messageText, type ChatMessage } from '../chat/messages';
import { APPLE } from '../keyboard/keyHandler';
import { isShortcut, shortcutText } from '../keyboard/shortcuts';
import { AttachButton } from './AttachButton';
import { AttachmentChips, AttachmentProblems } from './AttachmentChips';
import type { OutgoingMessage } from './Composer';
import { pendingFile, usePendingFiles } from './usePendingFiles';

interface MessageEditorProps {
  message: ChatMessage;
  /** Files can go with a message (the composer's rule). */
  attachments: boolean;
  /** Sends the new version; resolves once it was sent or refused (the editor then stays). */
  onSend: (message: OutgoingMessage) => Promise<void>;
  onCancel: () => void;
}

/**
 * A sent message being edited, in its place: its text and files (removable, more can be
 * added). Send makes a new version of it that the models answer; Cancel (or Esc) leaves
 * everything as it was. Ctrl/Cmd+Enter sends (keys from the shortcuts table).
 */
export function MessageEditor({ message, attachments, onSend, onCancel }: MessageEditorProps) {
  const [text, setText] = useState(() => messageText(message));
  const [kept] = useState(() => keptFiles(message));
  const { files, problems, setProblems, addFiles, remove } = usePendingFiles(() => kept.files);
  const [lost, setLost] = useState(kept.lost);
  const [sending, setSending] = useState(false);
  const empty = text.trim() === '' && files.length === 0;

  const send = () => {
    if (empty || sending) return;
    setSending(true);
    void onSend({ text: text.trim(), files }).finally(() => setSending(false));
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (isShortcut('edit-cancel', event.nativeEvent)) {
      event.preventDefault();
      onCancel();
    } else if (isShortcut('edit-send', event.nativeEvent)) {
      event.preventDefault();
      send();
    }
  };

  return (
    <form
      className="message-editor"
      data-testid="message-editor"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <AttachmentChips files={files} disabled={sending} onRemove={remove} />
      <AttachmentProblems problems={problems} onDismiss={() => setProblems([])} />
      <AttachmentProblems problems={lost} onDismiss={() => setLost([])} />
      <textarea
        data-testid="message-edit-input"
        aria-label="Edit your message"
        // The editor opens because the user asked to type here.
        autoFocus
        value={text}
        rows={Math.min(10, Math.max(2, text.split('\n').length))}
        disabled={sending}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <div className="message-editor-bar">
        {attachments && <AttachButton disabled={sending} onFiles={addFiles} />}
        <span className="small muted message-editor-hint">
          {shortcutText('edit-send', APPLE)} sends a new version; {shortcutText('edit-cancel', APPLE)} cancels
        </span>
        <button type="button" className="button ghost small" data-testid="message-edit-cancel" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="button primary small" data-testid="message-edit-send" disabled={empty || sending}>
          {sending ? 'Sending…' : 'Send'}
        </button>
      </div>
    </form>
  );
}

/** The message's files, to be sent again unless removed; and why some cannot be. */
function keptFiles(message: ChatMessage): { files: PendingFile[]; lost: string[] } {
  const files: PendingFile[] = [];
  const lost: string[] = [];
  for (const part of message.parts) {
    if (part.type !== 'file') continue;
    const file = storedFile(part);
    if (file) files.push(pendingFile(file, part.mediaType));
    else lost.push(`${part.filename ?? 'A file'} cannot be sent again from here: attach it again to keep it.`);
  }
  return { files, lost };
}
