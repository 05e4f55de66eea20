import { useId, useState, type KeyboardEvent } from 'react';
import type { ReplyView } from '../chat/conversation';
import type { Provider } from '../protocol.gen';
import { ModelColumn } from './ModelColumn';
import { ModelTab } from './ModelTab';

interface SideBySideRepliesProps {
  replies: ReplyView[];
  providers: Provider[];
  onRetry?: ((messageId: string) => Promise<void>) | undefined;
  onContinue: (messageId: string) => Promise<void>;
}

/**
 * Several models' replies to one message: columns side by side on a wide window, tabs
 * on a narrow one (the stylesheet decides). Every column stays mounted, so a reply in a
 * tab that is not selected goes on streaming and is complete when the user switches.
 */
export function SideBySideReplies({ replies, providers, onRetry, onContinue }: SideBySideRepliesProps) {
  const [chosen, setChosen] = useState<string>();
  const selected = replies.some((reply) => reply.messageId === chosen) ? chosen : replies[0]?.messageId;
  const baseId = useId();
  const tabId = (index: number) => `${baseId}-tab-${index}`;
  const panelId = (index: number) => `${baseId}-panel-${index}`;

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
    const index = replies.findIndex((reply) => reply.messageId === selected);
    const next = replies[(index + (event.key === 'ArrowRight' ? 1 : replies.length - 1)) % replies.length];
    if (!next) return;
    event.preventDefault();
    setChosen(next.messageId);
    document.getElementById(tabId(replies.indexOf(next)))?.focus();
  };

  return (
    <div className="side-by-side" style={{ '--columns': replies.length } as React.CSSProperties}>
      <div className="model-tabs" role="tablist" aria-label="Replies by model" onKeyDown={onKeyDown}>
        {replies.map((reply, index) => (
          <ModelTab
            key={reply.messageId}
            reply={reply}
            id={tabId(index)}
            panelId={panelId(index)}
            selected={reply.messageId === selected}
            onSelect={() => setChosen(reply.messageId)}
          />
        ))}
      </div>
      <div className="model-columns">
        {replies.map((reply, index) => (
          <ModelColumn
            key={reply.messageId}
            reply={reply}
            providers={providers}
            id={panelId(index)}
            tabId={tabId(index)}
            selected={reply.messageId === selected}
            onRetry={onRetry}
            onContinue={onContinue}
          />
        ))}
      </div>
    </div>
  );
}
