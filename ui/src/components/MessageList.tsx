import { useLayoutEffect, useRef } from 'react';
import type { TurnView } from '../chat/conversation';
import type { Provider } from '../protocol.gen';
import { Turn, type ReplyCommands } from './Turn';

interface MessageListProps {
  turns: TurnView[];
  /** A message was sent and no reply has started yet. */
  waiting: boolean;
  providers: Provider[];
  commands: ReplyCommands;
}

/** The conversation, oldest first; keeps to the bottom while the user has not scrolled up. */
export function MessageList({ turns, waiting, providers, commands }: MessageListProps) {
  const scroller = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);

  useLayoutEffect(() => {
    const element = scroller.current;
    if (element && pinned.current) element.scrollTop = element.scrollHeight;
  });

  const last = turns[turns.length - 1];
  const showWaiting = waiting && (!last || last.replies.length === 0);

  return (
    <div
      className="message-list"
      ref={scroller}
      onScroll={(event) => {
        const element = event.currentTarget;
        pinned.current = element.scrollHeight - element.scrollTop - element.clientHeight < 48;
      }}
    >
      <div className="message-column">
        {turns.length === 0 && !waiting && <p className="muted empty-chat">Send a message to start the conversation.</p>}
        {turns.map((turn) => (
          <Turn key={turn.key} turn={turn} providers={providers} commands={commands} />
        ))}
        {showWaiting && (
          <div className="waiting muted small" role="status">
            Waiting for the model…
          </div>
        )}
      </div>
    </div>
  );
}
