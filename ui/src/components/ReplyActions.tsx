import { useState } from 'react';
import type { ReplyView } from '../chat/conversation';
import { replyActions } from '../chat/features';
import { isLiveStatus, messageStatus, pauseReason } from '../chat/messages';
import { BranchActions, type BranchHandlers } from './BranchActions';
import { CopyMessageButton } from './CopyMessageButton';
import { VersionSwitcher } from './VersionSwitcher';

interface ReplyActionsProps {
  reply: ReplyView;
  /** Absent where replies cannot be written again (agent sessions). */
  onRetry?: ((messageId: string) => Promise<void>) | undefined;
  onContinue: (messageId: string) => Promise<void>;
  /** Versions, fork and delete; absent where the history stays one line (agent sessions). */
  branch?: BranchHandlers | undefined;
}

/**
 * Under a reply: `‹ n/m ›` when it has several versions (also while one is written), and
 * for a reply that is not being written Continue (a paused one), Retry (a new version),
 * Copy (as Markdown), Fork from here and Delete. A reply waiting for approvals has no Continue: answering its
 * calls goes on.
 */
export function ReplyActions({ reply, onRetry, onContinue, branch }: ReplyActionsProps) {
  const [pending, setPending] = useState<'retry' | 'continue'>();
  const shown = replyActions(reply.message, reply.live, { retry: onRetry !== undefined });
  const versions = branch && reply.versions && reply.versions.length > 1 ? reply.versions : undefined;
  const settled = !reply.live && !isLiveStatus(messageStatus(reply.message, reply.live));
  if (!shown.continue && !shown.retry && !versions && !settled) return null;

  const act = (which: 'retry' | 'continue', action: (messageId: string) => Promise<void>) => {
    setPending(which);
    void action(reply.messageId).finally(() => setPending(undefined));
  };

  return (
    <div className="reply-actions">
      {versions && branch && <VersionSwitcher versions={versions} current={reply.messageId} onSelect={branch.select} />}
      {shown.continue && (
        <button
          type="button"
          className="button small"
          data-testid="reply-continue"
          disabled={pending !== undefined}
          title={
            pauseReason(reply.message, reply.live) === 'tool_limit'
              ? 'Let the model go on with a fresh allowance of tool calls'
              : 'Let the model go on after the text it kept'
          }
          onClick={() => act('continue', onContinue)}
        >
          {pending === 'continue' ? 'Continuing…' : 'Continue'}
        </button>
      )}
      {shown.retry && onRetry && (
        <button
          type="button"
          className="button ghost small"
          data-testid="reply-retry"
          disabled={pending !== undefined}
          title="Write this reply again; this version stays one click away"
          onClick={() => act('retry', onRetry)}
        >
          {pending === 'retry' ? 'Retrying…' : 'Retry'}
        </button>
      )}
      {settled && <CopyMessageButton message={reply.message} />}
      {branch && settled && (
        <BranchActions
          messageId={reply.messageId}
          handlers={branch}
          deleteQuestion={versions ? 'Delete this version of the reply?' : 'Delete this reply?'}
        />
      )}
    </div>
  );
}
