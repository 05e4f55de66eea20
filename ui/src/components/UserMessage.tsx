import { useState } from 'react';
import type { ChatMessage } from '../chat/messages';
import { BranchActions, type BranchHandlers } from './BranchActions';
import { CopyMessageButton } from './CopyMessageButton';
import type { OutgoingMessage } from './Composer';
import { MessageEditor } from './MessageEditor';
import { MessageView } from './MessageView';
import { VersionSwitcher } from './VersionSwitcher';

interface UserMessageProps {
  message: ChatMessage;
  /** Its versions (edits), oldest first, when there are several. */
  versions?: readonly string[] | undefined;
  /** Absent where the history cannot branch (an agent session), or before the message is stored. */
  handlers?: BranchHandlers | undefined;
  /** Sends a new version of the message; resolves true once it was sent. */
  onEdit?: ((message: OutgoingMessage) => Promise<boolean>) | undefined;
  attachments: boolean;
}

/** A message the user sent, with `‹ n/m ›`, Edit, Copy, Fork from here and Delete; or its editor. */
export function UserMessage({ message, versions, handlers, onEdit, attachments }: UserMessageProps) {
  const [editing, setEditing] = useState(false);
  if (editing && onEdit) {
    const send = async (edited: OutgoingMessage) => {
      if (await onEdit(edited)) setEditing(false);
    };
    return <MessageEditor message={message} attachments={attachments} onSend={send} onCancel={() => setEditing(false)} />;
  }
  return (
    <div className="user-message">
      <MessageView message={message} isLive={false} />
      {handlers && (
        <div className="message-actions user-actions" data-testid="user-actions">
          {versions && versions.length > 1 && <VersionSwitcher versions={versions} current={message.id} onSelect={handlers.select} />}
          {onEdit && (
            <button type="button" className="button ghost small" data-testid="message-edit" title="Change this message and get new replies" onClick={() => setEditing(true)}>
              Edit
            </button>
          )}
          <CopyMessageButton message={message} />
          <BranchActions
            messageId={message.id}
            handlers={handlers}
            deleteQuestion="Delete this message, its replies and everything after it on this branch?"
          />
        </div>
      )}
    </div>
  );
}
