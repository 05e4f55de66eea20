import type { ReplyView } from '../chat/conversation';
import { messageStatus } from '../chat/messages';
import { ReplyStatusMark, replyModelName } from './ModelColumn';

interface ModelTabProps {
  reply: ReplyView;
  id: string;
  panelId: string;
  selected: boolean;
  onSelect: () => void;
}

/** One model's tab above its reply, on a narrow window. */
export function ModelTab({ reply, id, panelId, selected, onSelect }: ModelTabProps) {
  const model = replyModelName(reply);
  return (
    <button
      type="button"
      role="tab"
      id={id}
      className="model-tab"
      data-testid="model-tab"
      data-model={model}
      aria-selected={selected}
      aria-controls={panelId}
      tabIndex={selected ? 0 : -1}
      onClick={onSelect}
    >
      <span className="model-tab-name">{model || 'Model'}</span>
      <ReplyStatusMark status={messageStatus(reply.message, reply.live)} />
    </button>
  );
}
