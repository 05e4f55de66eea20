import { useState } from 'react';
import type { ReplyView } from '../chat/conversation';
import type { BranchHandlers } from './BranchActions';
import { isLiveStatus, messageStatus } from '../chat/messages';
import type { MessageStatus, Provider } from '../protocol.gen';
import { ReplyMessage } from './ReplyMessage';
import { ReplyActions } from './ReplyActions';

interface ModelColumnProps {
  reply: ReplyView;
  providers: Provider[];
  id: string;
  tabId: string;
  /** The column shown when the window is too narrow for all of them. */
  selected: boolean;
  onRetry?: ((messageId: string) => Promise<void>) | undefined;
  /** Stops this model's reply; the other models go on. */
  onStop: (messageId: string) => Promise<void>;
  onContinue: (messageId: string) => Promise<void>;
  branch?: BranchHandlers | undefined;
}

/** One model's reply to a message that several models answer. */
export function ModelColumn({ reply, providers, id, tabId, selected, onRetry, onStop, onContinue, branch }: ModelColumnProps) {
  const [stopping, setStopping] = useState(false);
  const model = replyModelName(reply);
  const provider =
    reply.message.metadata?.providerName ?? providers.find((candidate) => candidate.id === reply.model?.providerId)?.name;
  const status = messageStatus(reply.message, reply.live);
  return (
    <section
      className="model-column"
      id={id}
      role="tabpanel"
      aria-labelledby={tabId}
      data-testid="model-column"
      data-execution-id={reply.executionId}
      data-model={model}
      data-selected={selected}
    >
      <header className="model-column-header">
        <span className="model-column-name">{model || 'Model'}</span>
        {provider && <span className="muted small">{provider}</span>}
        <ReplyStatusMark status={status} />
        {isLiveStatus(status) && (
          <button
            type="button"
            className="button ghost small model-column-stop"
            data-testid="model-column-stop"
            disabled={stopping}
            title={`Stop ${model || 'this model'}'s reply; the other models go on`}
            onClick={() => {
              setStopping(true);
              void onStop(reply.messageId).finally(() => setStopping(false));
            }}
          >
            {stopping ? 'Stopping…' : 'Stop'}
          </button>
        )}
      </header>
      <ReplyMessage reply={reply} />
      <ReplyActions reply={reply} onRetry={onRetry} onContinue={onContinue} branch={branch} />
    </section>
  );
}

/** The model's name as the backend reported it for this reply. */
export function replyModelName(reply: ReplyView): string {
  return reply.model?.model ?? reply.message.metadata?.model ?? '';
}

const STATUS_LABEL: Record<MessageStatus, string> = {
  pending: 'Waiting',
  streaming: 'Writing',
  success: 'Done',
  paused: 'Stopped',
  error: 'Failed',
};

/** A small mark for a reply's state: a pulsing dot while it is written, ! when it failed. */
export function ReplyStatusMark({ status }: { status: MessageStatus }) {
  return (
    <span className={`reply-status ${status}`} title={STATUS_LABEL[status]} aria-label={STATUS_LABEL[status]}>
      {status === 'error' ? '!' : status === 'paused' ? '❚❚' : ''}
    </span>
  );
}
