import type { ReplyView } from '../chat/conversation';
import type { BranchHandlers } from './BranchActions';
import { ReplyMessage } from './ReplyMessage';
import { ReplyActions } from './ReplyActions';

interface ReplyProps {
  reply: ReplyView;
  onRetry?: ((messageId: string) => Promise<void>) | undefined;
  onContinue: (messageId: string) => Promise<void>;
  branch?: BranchHandlers | undefined;
}

/** The only reply of a turn: the message and what can be done with it. */
export function Reply({ reply, onRetry, onContinue, branch }: ReplyProps) {
  return (
    <div className="single-reply" data-execution-id={reply.executionId}>
      <ReplyMessage reply={reply} />
      <ReplyActions reply={reply} onRetry={onRetry} onContinue={onContinue} branch={branch} />
    </div>
  );
}
