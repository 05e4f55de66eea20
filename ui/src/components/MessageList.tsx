import { useLayoutEffect, useRef } from 'react';
import type { ChatMessage } from '../chat/messages';
import { MessageView } from './MessageView';

interface MessageListProps {
  messages: ChatMessage[];
  /** Id of the reply that is streaming now, if any. */
  liveId: string | undefined;
  /** The message was sent and the reply has not started yet. */
  waiting: boolean;
}

/** The conversation, oldest first; keeps to the bottom while the user has not scrolled up. */
export function MessageList({ messages, liveId, waiting }: MessageListProps) {
  const scroller = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);

  useLayoutEffect(() => {
    const element = scroller.current;
    if (element && pinned.current) element.scrollTop = element.scrollHeight;
  });

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
        {messages.length === 0 && !waiting && <p className="muted empty-chat">Send a message to start the conversation.</p>}
        {messages.map((message) => (
          <MessageView key={message.id} message={message} isLive={message.id === liveId} />
        ))}
        {waiting && (
          <div className="waiting muted small" role="status">
            Waiting for the model…
          </div>
        )}
      </div>
    </div>
  );
}
