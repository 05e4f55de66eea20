import type { MessageMetadata, MessageStatus, StoredMessage, UiMessage } from '../protocol.gen';

/** A message as the conversation shows it: the AI SDK's UI message shape, with our metadata. */
export type ChatMessage = UiMessage & { metadata?: MessageMetadata };

const shown = new WeakMap<StoredMessage, ChatMessage>();

/**
 * A stored row as a chat message. The row's status and reason are the truth, so they
 * overwrite whatever the message's own metadata last said. The same row object always
 * gives the same message object, so finished messages are not re-rendered.
 */
export function storedToChat(stored: StoredMessage): ChatMessage {
  const cached = shown.get(stored);
  if (cached) return cached;
  const metadata: MessageMetadata = { ...(stored.message.metadata ?? {}), status: stored.status };
  if (stored.statusReason !== undefined) metadata.statusReason = stored.statusReason;
  if (metadata.model === undefined && stored.model) metadata.model = stored.model.model;
  if (metadata.turnId === undefined && stored.turnId) metadata.turnId = stored.turnId;
  const message: ChatMessage = { id: stored.id, role: stored.message.role, parts: stored.message.parts, metadata };
  shown.set(stored, message);
  return message;
}

export function isLiveStatus(status: MessageStatus | undefined): boolean {
  return status === 'pending' || status === 'streaming';
}

/** What `data-status` shows: the stored or streamed status, or a guess for the live reply. */
export function messageStatus(message: ChatMessage, isLive: boolean): MessageStatus {
  const status = message.metadata?.status;
  if (status) return status;
  if (message.role !== 'assistant') return 'success';
  if (isLive) return message.parts.length === 0 ? 'pending' : 'streaming';
  return 'success';
}

/** The label of the marker on a reply that stopped before its end. */
export function stoppedLabel(reason: string | undefined): string {
  switch (reason) {
    case 'interrupted':
      return 'Interrupted';
    case 'stalled':
      return 'Stalled';
    default:
      return 'Stopped';
  }
}

/** A short explanation under the marker: what happened and what the user can do. */
export function stoppedHint(reason: string | undefined): string {
  switch (reason) {
    case 'interrupted':
      return 'The app closed while this reply was being written. Continue it, or retry it from the start.';
    case 'stalled':
      return 'The model stopped sending text. Continue it, or retry it from the start.';
    default:
      return 'You stopped this reply. The text so far is kept; Continue picks up where it ended.';
  }
}

/** The user-visible text of a message (its text parts joined). */
export function messageText(message: ChatMessage): string {
  return message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
