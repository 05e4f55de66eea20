import { isAgentTopic } from '../agents/sessions';
import { canContinue, messageStatus, type ChatMessage } from './messages';

/**
 * What a conversation offers besides sending, stopping, steering and continuing. Chat
 * topics offer everything; an agent session's agent keeps its own model, context and
 * files, and its history stays one line, so the backend refuses retrying a reply, adding
 * a model, attachments and every change to the history's tree there.
 */
export interface ConversationFeatures {
  retry: boolean;
  addModel: boolean;
  attachments: boolean;
  /** Picking the models of the next message in the composer. */
  pickModels: boolean;
  /** Versions (`‹ n/m ›`), editing a sent message, forking and deleting messages. */
  tree: boolean;
}

export const CHAT_FEATURES: ConversationFeatures = { retry: true, addModel: true, attachments: true, pickModels: true, tree: true };
export const AGENT_FEATURES: ConversationFeatures = { retry: false, addModel: false, attachments: false, pickModels: false, tree: false };
/** An ACP agent takes files as its `promptCapabilities` allow (the backend refuses one it cannot take, naming it). */
export const ACP_FEATURES: ConversationFeatures = { ...AGENT_FEATURES, attachments: true };

export function featuresFor(topicId: string): ConversationFeatures {
  return isAgentTopic(topicId) ? AGENT_FEATURES : CHAT_FEATURES;
}

/** The buttons under a reply; none while it is written. */
export interface ReplyActionSet {
  continue: boolean;
  retry: boolean;
}

export function replyActions(message: ChatMessage, isLive: boolean, features: Pick<ConversationFeatures, 'retry'>): ReplyActionSet {
  const status = messageStatus(message, isLive);
  if (isLive || status === 'pending' || status === 'streaming') return { continue: false, retry: false };
  return { continue: canContinue(message, isLive), retry: features.retry };
}
