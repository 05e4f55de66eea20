import { useState } from 'react';
import type { ReplyView } from '../chat/conversation';
import { replyActions } from '../chat/features';
import { pauseReason } from '../chat/messages';

interface ReplyActionsProps {
  reply: ReplyView;
  /** Absent where replies cannot be written again (agent sessions). */
  onRetry?: ((messageId: string) => Promise<void>) | undefined;
  onContinue: (messageId: string) => Promise<void>;
}

/**
 * Retry (any finished reply) and Continue (a paused one), under a reply that is not being
 * written. A reply waiting for approvals has no Continue: answering its calls goes on.
 */
export function ReplyActions({ reply, onRetry, onContinue }: ReplyActionsProps) {
  const [pending, setPending] = useState<'retry' | 'continue'>();
  const shown = replyActions(reply.message, reply.live, { retry: onRetry !== undefined });
  if (!shown.continue && !shown.retry) return null;

  const act = (which: 'retry' | 'continue', action: (messageId: string) => Promise<void>) => {
    setPending(which);
    void action(reply.messageId).finally(() => setPending(undefined));
  };

  return (
    <div className="reply-actions">
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
          title="Write this reply again from the start"
          onClick={() => act('retry', onRetry)}
        >
          {pending === 'retry' ? 'Retrying…' : 'Retry'}
        </button>
      )}
    </div>
  );
}
