import { useId, useState, type KeyboardEvent } from 'react';
import type { ReplyView } from '../chat/conversation';
import { isLiveStatus, messageStatus } from '../chat/messages';
import type { BranchHandlers } from './BranchActions';
import type { Provider } from '../protocol.gen';
import { ModelColumn } from './ModelColumn';
import { modelKey } from './ModelPicker';
import { ModelTab } from './ModelTab';

interface SideBySideRepliesProps {
  replies: ReplyView[];
  providers: Provider[];
  onRetry?: ((messageId: string) => Promise<void>) | undefined;
  /** Writes every model's reply again (absent where replies cannot be retried). */
  onRetryAll?: (() => Promise<void>) | undefined;
  onStop: (messageId: string) => Promise<void>;
  onContinue: (messageId: string) => Promise<void>;
  branch?: BranchHandlers | undefined;
}

/** A column stands for a model: switching its reply's version keeps the column (and the tab chosen). */
function columnKey(reply: ReplyView): string {
  return reply.model ? modelKey(reply.model) : reply.messageId;
}

/**
 * Several models' replies to one message: columns side by side on a wide window, tabs
 * on a narrow one (the stylesheet decides). Every column stays mounted, so a reply in a
 * tab that is not selected goes on streaming and is complete when the user switches.
 */
export function SideBySideReplies({ replies, providers, onRetry, onRetryAll, onStop, onContinue, branch }: SideBySideRepliesProps) {
  const [chosen, setChosen] = useState<string>();
  const [retrying, setRetrying] = useState(false);
  const anyLive = replies.some((reply) => reply.live || isLiveStatus(messageStatus(reply.message, reply.live)));
  const keys = replies.map(columnKey);
  const selected = chosen !== undefined && keys.includes(chosen) ? chosen : keys[0];
  const baseId = useId();
  const tabId = (index: number) => `${baseId}-tab-${index}`;
  const panelId = (index: number) => `${baseId}-panel-${index}`;

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
    const index = keys.findIndex((key) => key === selected);
    const nextIndex = (index + (event.key === 'ArrowRight' ? 1 : replies.length - 1)) % replies.length;
    const next = keys[nextIndex];
    if (next === undefined) return;
    event.preventDefault();
    setChosen(next);
    document.getElementById(tabId(nextIndex))?.focus();
  };

  return (
    <div className="side-by-side" style={{ '--columns': replies.length } as React.CSSProperties}>
      {onRetryAll && !anyLive && (
        <div className="side-by-side-actions">
          <button
            type="button"
            className="button ghost small"
            data-testid="turn-retry-all"
            disabled={retrying}
            title="Write every model's reply again; these versions stay one click away"
            onClick={() => {
              setRetrying(true);
              void onRetryAll().finally(() => setRetrying(false));
            }}
          >
            {retrying ? 'Retrying…' : `Retry all ${replies.length}`}
          </button>
        </div>
      )}
      <div className="model-tabs" role="tablist" aria-label="Replies by model" onKeyDown={onKeyDown}>
        {replies.map((reply, index) => (
          <ModelTab
            key={keys[index]}
            reply={reply}
            id={tabId(index)}
            panelId={panelId(index)}
            selected={keys[index] === selected}
            onSelect={() => setChosen(keys[index])}
          />
        ))}
      </div>
      <div className="model-columns">
        {replies.map((reply, index) => (
          <ModelColumn
            key={keys[index]}
            reply={reply}
            providers={providers}
            id={panelId(index)}
            tabId={tabId(index)}
            selected={keys[index] === selected}
            onRetry={onRetry}
            onStop={onStop}
            onContinue={onContinue}
            branch={branch}
          />
        ))}
      </div>
    </div>
  );
}
