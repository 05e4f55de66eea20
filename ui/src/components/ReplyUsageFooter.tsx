import { useState } from 'react';
import { footerItems } from '../usage/format';
import { ReplyInspector } from './ReplyInspector';
import { useTopicUsage } from './TopicUsageContext';

interface ReplyUsageFooterProps {
  messageId: string;
}

/**
 * Under a finished reply: its tokens, cost, time to first token and speed, and
 * "Details", which opens the reply inspector below. Nothing when the ledger has nothing
 * for the reply (a demo reply, or one from before usage was kept).
 */
export function ReplyUsageFooter({ messageId }: ReplyUsageFooterProps) {
  const topic = useTopicUsage();
  const [open, setOpen] = useState(false);
  const usage = topic?.usage?.replies.find((reply) => reply.messageId === messageId);
  if (!topic || (!usage && !open)) return null;
  return (
    <>
      <div className="reply-usage small muted" data-testid="reply-usage">
        {usage &&
          footerItems(usage).map((item) => (
            <span key={item.key} className={`reply-usage-${item.key}`} data-testid={`reply-usage-${item.key}`} title={item.title}>
              {item.text}
            </span>
          ))}
        <button
          type="button"
          className="link-button"
          data-testid="reply-details"
          aria-expanded={open}
          onClick={() => setOpen((value) => !value)}
        >
          {open ? 'Hide details' : 'Details'}
        </button>
      </div>
      {open && <ReplyInspector topicId={topic.topicId} messageId={messageId} />}
    </>
  );
}
