import {
  STATUS_REASONS,
  type MessageMetadata,
  type MessageStatus,
  type StatusReason,
  type StoredMessage,
  type UiMessage,
  type ElicitationCard,
  type SamplingCard,
} from '../protocol.gen';
import { planEntries, type PlanEntry } from './agentSession';
import { compactionMarker, steerNote, type CompactionMarker, type SteerNote } from './replyNotes';
import { ELICITATION_PART, elicitationCard, SAMPLING_PART, samplingCard } from './elicitation';

/**
 * A message as the conversation shows it: the AI SDK's UI message shape, with our
 * metadata, and when it was written once it is stored (a live reply has no row yet).
 */
export type ChatMessage = UiMessage & { metadata?: MessageMetadata; createdAt?: string };

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
  // The row's reason is the truth: a reply that waited for approval and then finished
  // keeps the old reason in its message metadata.
  if (stored.statusReason !== undefined) metadata.statusReason = stored.statusReason;
  else delete metadata.statusReason;
  if (metadata.model === undefined && stored.model) metadata.model = stored.model.model;
  if (metadata.turnId === undefined && stored.turnId) metadata.turnId = stored.turnId;
  const message: ChatMessage = {
    id: stored.id,
    role: stored.message.role,
    parts: stored.message.parts,
    metadata,
    createdAt: stored.createdAt,
  };
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

/**
 * The message's reason as a `StatusReason`: undefined when it has none, or when it holds
 * something else (an error's code shares the field).
 */
export function statusReason(message: ChatMessage): StatusReason | undefined {
  const reason = message.metadata?.statusReason;
  return STATUS_REASONS.find((known) => known === reason);
}

/** Why a paused reply stopped, or undefined when it is not paused. */
export function pauseReason(message: ChatMessage, isLive: boolean): StatusReason | undefined {
  if (messageStatus(message, isLive) !== 'paused') return undefined;
  return statusReason(message) ?? 'user_stop';
}

/** A reply waiting for the user to answer its tool calls: answering goes on, not Continue. */
export function isAwaitingApproval(message: ChatMessage, isLive: boolean): boolean {
  return pauseReason(message, isLive) === 'awaiting_approval';
}

/**
 * The model's output limit (max tokens) cut this reply short. It is stored as finished
 * (`success`) with reason `length`: what it has is kept, and Continue can go on from it.
 */
export function cutAtLength(message: ChatMessage, isLive: boolean): boolean {
  return messageStatus(message, isLive) === 'success' && statusReason(message) === 'length';
}

/**
 * Why a reply ended before its natural end, for the marker under it: a paused reply's
 * reason (but a pending approval, which has its own card), or `length` for one the
 * output limit cut. Undefined for a reply that ended normally.
 */
export function endedEarlyReason(message: ChatMessage, isLive: boolean): StatusReason | undefined {
  if (cutAtLength(message, isLive)) return 'length';
  const reason = pauseReason(message, isLive);
  return reason === 'awaiting_approval' ? undefined : reason;
}

/** Continue can pick this reply up: it ended early for any reason but a pending approval. */
export function canContinue(message: ChatMessage, isLive: boolean): boolean {
  return endedEarlyReason(message, isLive) !== undefined;
}

/** The reply ended early to let the user's steering message go next. */
export function yieldedToSteering(message: ChatMessage, isLive: boolean): boolean {
  return messageStatus(message, isLive) === 'success' && statusReason(message) === 'steered';
}

/** The user stopped this reply with Interrupt, to send a message now (a `data-steer` `interrupted` marker). */
export function interruptedForMessage(message: ChatMessage): boolean {
  return message.parts.some((part) => part.type === 'data-steer' && steerNote(part.data)?.state === 'interrupted');
}

/** The label of the marker on a reply that stopped before its end. */
export function stoppedLabel(reason: StatusReason | undefined): string {
  switch (reason) {
    case 'interrupted':
      return 'Interrupted';
    case 'stalled':
      return 'Stalled';
    case 'tool_limit':
      return 'Tool-call limit reached — continue?';
    case 'length':
      return 'Cut off at the length limit';
    case 'user_stop':
    case 'awaiting_approval':
    case 'steered':
    case undefined:
      return 'Stopped';
    default:
      return unknownReason(reason, 'Stopped');
  }
}

/** A short explanation under the marker: what happened and what the user can do. */
export function stoppedHint(reason: StatusReason | undefined): string {
  const stopped = 'You stopped this reply. The text so far is kept; Continue picks up where it ended.';
  switch (reason) {
    case 'interrupted':
      return 'The app closed while this reply was being written. Continue it, or retry it from the start.';
    case 'stalled':
      return 'The model stopped sending text. Continue it, or retry it from the start.';
    case 'tool_limit':
      return 'The reply made as many tool calls as it may in one go. Continue lets it go on with a fresh allowance.';
    case 'length':
      return 'The model reached its output limit (max tokens) before it finished. Continue picks up where it ended, or ask for a shorter answer.';
    case 'user_stop':
    case 'awaiting_approval':
    case 'steered':
    case undefined:
      return stopped;
    default:
      return unknownReason(reason, stopped);
  }
}

/** Every `StatusReason` has a case above: a new one fails `tsc` here until it gets one. */
function unknownReason(reason: never, fallback: string): string {
  void reason;
  return fallback;
}

/** The user-visible text of a message (its text parts joined). */
export function messageText(message: ChatMessage): string {
  return message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/**
 * The message as Markdown, for the clipboard: each run of text as the reply shows it, a
 * blank line apart; thinking, tool calls and files are left out.
 */
export function messageMarkdown(message: ChatMessage): string {
  return replyBlocks(message.parts)
    .flatMap((block) => (block.kind === 'text' ? [blockText(block)] : []))
    .join('\n\n');
}

type Part = UiMessage['parts'][number];
type TextPart = Extract<Part, { type: 'text' }>;

/**
 * What a reply shows, in order: runs of text, thinking, tool calls, files, and an agent
 * session's markers (context compacted, a steering message delivered).
 */
export type ReplyBlock =
  | { kind: 'text'; parts: TextPart[] }
  | { kind: 'reasoning'; part: Extract<Part, { type: 'reasoning' }> }
  | { kind: 'tool'; part: Extract<Part, { type: 'dynamic-tool' }> }
  | { kind: 'file'; part: Extract<Part, { type: 'file' }> }
  | { kind: 'compaction'; marker: CompactionMarker }
  | { kind: 'steer'; note: SteerNote }
  /** An agent's plan (ACP), as it last revised it. */
  | { kind: 'plan'; entries: PlanEntry[] }
  | { kind: 'elicitation'; card: ElicitationCard }
  | { kind: 'sampling'; card: SamplingCard };

/**
 * The markdown of a text block: its parts joined as they are. Text parts next to each
 * other without anything between them are one text the model wrote in pieces: a
 * continued reply's new part (the backend starts it after the kept one) goes on where the
 * kept text stopped, which may be mid-word ("by cu" + "stomer id").
 */
export function blockText(block: Extract<ReplyBlock, { kind: 'text' }>): string {
  return block.parts.length === 1 ? (block.parts[0]?.text ?? '') : block.parts.map((part) => part.text).join('');
}

/**
 * A reply's parts as blocks to show, in order. Text parts next to each other (also across
 * steps) form one block; reasoning without text (a provider's signature only) is not shown;
 * `data-compaction` and `data-steer` parts are markers where they happened, and
 * `data-mcp-elicitation` and `data-mcp-sampling` parts the cards of servers' questions; sources, errors
 * and other data parts are shown apart.
 */
export function replyBlocks(parts: readonly Part[]): ReplyBlock[] {
  const blocks: ReplyBlock[] = [];
  for (const part of parts) {
    const last = blocks.at(-1);
    switch (part.type) {
      case 'text':
        if (part.text === '') break;
        if (last?.kind === 'text') last.parts.push(part);
        else blocks.push({ kind: 'text', parts: [part] });
        break;
      case 'reasoning':
        if (part.text.trim() !== '') blocks.push({ kind: 'reasoning', part });
        break;
      case 'dynamic-tool':
        blocks.push({ kind: 'tool', part });
        break;
      case 'file':
        blocks.push({ kind: 'file', part });
        break;
      default: {
        const marker = part.type === 'data-compaction' ? compactionMarker(part.data) : undefined;
        if (marker) blocks.push({ kind: 'compaction', marker });
        const note = part.type === 'data-steer' ? steerNote(part.data) : undefined;
        if (note) blocks.push({ kind: 'steer', note });
        const plan = part.type === 'data-plan' ? planEntries(part.data) : undefined;
        if (plan && plan.length > 0) blocks.push({ kind: 'plan', entries: plan });
        const card = part.type === ELICITATION_PART ? elicitationCard(part.data) : undefined;
        if (card) blocks.push({ kind: 'elicitation', card });
        const sampling = part.type === SAMPLING_PART ? samplingCard(part.data) : undefined;
        if (sampling) blocks.push({ kind: 'sampling', card: sampling });
        break;
      }
    }
  }
  return blocks;
}
