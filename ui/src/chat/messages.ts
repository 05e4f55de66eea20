import type { UIMessage } from 'ai';
import type { MessageMetadata, MessageStatus, StoredMessage } from '../protocol.gen';

/** A message as `useChat` holds it: the AI SDK's shape with our metadata. */
export type ChatMessage = UIMessage<MessageMetadata>;

/**
 * A stored row as a chat message. The row's status and reason are the truth, so they
 * overwrite whatever the message's own metadata last said.
 */
export function storedToChat(stored: StoredMessage): ChatMessage {
  const metadata: MessageMetadata = { ...(stored.message.metadata ?? {}), status: stored.status };
  if (stored.statusReason !== undefined) metadata.statusReason = stored.statusReason;
  if (metadata.model === undefined && stored.model) metadata.model = stored.model.model;
  return {
    id: stored.id,
    role: stored.message.role,
    parts: stored.message.parts as ChatMessage['parts'],
    metadata,
  };
}

export function isLiveStatus(status: MessageStatus): boolean {
  return status === 'pending' || status === 'streaming';
}

/**
 * History for `useChat`. A trailing assistant reply that is still pending or streaming
 * is left out: reattaching rebuilds it from the snapshot plus the live tail, and the AI
 * SDK would otherwise append the resumed chunks to the stale copy.
 */
export function chatHistory(stored: readonly StoredMessage[]): { messages: ChatMessage[]; liveReplyDropped: boolean } {
  const messages = stored.map(storedToChat);
  const last = stored[stored.length - 1];
  if (last && last.message.role === 'assistant' && isLiveStatus(last.status)) {
    return { messages: messages.slice(0, -1), liveReplyDropped: true };
  }
  return { messages, liveReplyDropped: false };
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
      return 'The app closed while this reply was being written. Send a new message to continue.';
    case 'stalled':
      return 'The model stopped sending text. Send a new message to try again.';
    default:
      return 'You stopped this reply. The text so far is kept.';
  }
}

/** The user-visible text of a message (its text parts joined). */
export function messageText(message: ChatMessage): string {
  return message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
