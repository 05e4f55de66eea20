import { useContext, useState } from 'react';
import type { ChatMessage } from '../chat/messages';
import { BranchActions, type BranchHandlers } from './BranchActions';
import { CopyMessageButton } from './CopyMessageButton';
import { EditRequestContext, type EditRequest } from './EditRequestContext';
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
  // An edit asked for from the keyboard (↑ in an empty message box); a request made
  // before this message was shown is not for it.
  const request = useContext(EditRequestContext);
  const [seenRequest, setSeenRequest] = useState(request);
  const [requested, setRequested] = useState<EditRequest>();
  if (request !== seenRequest) {
    setSeenRequest(request);
    if (request?.messageId === message.id && onEdit) {
      setEditing(true);
      setRequested(request);
    }
  }
  if (editing && onEdit) {
    const close = () => {
      setEditing(false);
      requested?.done();
      setRequested(undefined);
    };
    const send = async (edited: OutgoingMessage) => {
      if (await onEdit(edited)) close();
    };
    return <MessageEditor message={message} attachments={attachments} onSend={send} onCancel={close} />;
  }
  return (
    <div className="user-message">
      <MessageView message={message} isLive={false} />
      {handlers && (
        <div className="message-actions user-actions" data-testid="user-actions">
          {versions && versions.length > 1 && <VersionSwitcher versions={versions} current={message.id} onSelect={handlers.select} />}
          {onEdit && (
            <button
              type="button"
              className="button ghost small"
              data-testid="message-edit"
              title="Change this message and get new replies (↑ in an empty message box edits your last one)"
              onClick={() => setEditing(true)}
            >
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
