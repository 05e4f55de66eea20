import { messageTimeLabel, messageTimeTitle } from '../chat/messageTime';

/** When the message was written (nothing until it is stored). */
export function MessageTime({ createdAt }: { createdAt: string | undefined }) {
  const label = createdAt === undefined ? undefined : messageTimeLabel(createdAt);
  if (createdAt === undefined || label === undefined) return null;
  return (
    <time className="message-time" dateTime={createdAt} title={messageTimeTitle(createdAt)} data-testid="message-time">
      {label}
    </time>
  );
}
