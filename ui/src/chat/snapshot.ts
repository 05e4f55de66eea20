import type { UIMessageChunk } from 'ai';
import type { UiMessage, UiPart } from '../protocol.gen';

/**
 * Chunk ids the backend uses for parts that are still open, so chunks after a snapshot
 * continue the right part: `t<partIndex>` for text, `r<partIndex>` for reasoning, where
 * `partIndex` is the part's index in `message.parts`.
 */
export const textPartId = (partIndex: number) => `t${partIndex}`;
export const reasoningPartId = (partIndex: number) => `r${partIndex}`;

/**
 * The chunks that rebuild `message` from nothing: folding them with the AI SDK's
 * `readUIMessageStream` yields the same message. Text and reasoning parts that are
 * still streaming are left open (no `*-end`) so the live tail can continue them.
 */
export function snapshotToChunks(message: UiMessage): UIMessageChunk[] {
  const start: UIMessageChunk = { type: 'start', messageId: message.id };
  if (message.metadata !== undefined) start.messageMetadata = message.metadata;
  const chunks: UIMessageChunk[] = [start];
  message.parts.forEach((part, index) => chunks.push(...partToChunks(part, index)));
  return chunks;
}

function partToChunks(part: UiPart, index: number): UIMessageChunk[] {
  switch (part.type) {
    case 'text': {
      const id = textPartId(index);
      const chunks: UIMessageChunk[] = [{ type: 'text-start', id }];
      if (part.text !== '') chunks.push({ type: 'text-delta', id, delta: part.text });
      if (part.state !== 'streaming') chunks.push({ type: 'text-end', id });
      return chunks;
    }
    case 'reasoning': {
      const id = part.id ?? reasoningPartId(index);
      const start: UIMessageChunk = { type: 'reasoning-start', id };
      if (part.providerMetadata !== undefined) start.providerMetadata = part.providerMetadata as typeof start.providerMetadata;
      const chunks: UIMessageChunk[] = [start];
      if (part.text !== '') chunks.push({ type: 'reasoning-delta', id, delta: part.text });
      if (part.state !== 'streaming') chunks.push({ type: 'reasoning-end', id });
      return chunks;
    }
    case 'step-start':
      return [{ type: 'start-step' }];
    case 'source-url': {
      const chunk: UIMessageChunk = { type: 'source-url', sourceId: part.sourceId, url: part.url };
      if (part.title !== undefined) chunk.title = part.title;
      return [chunk];
    }
    case 'file':
      return [{ type: 'file', url: part.url, mediaType: part.mediaType }];
    case 'dynamic-tool':
      return toolToChunks(part);
    default: {
      // `data-*` parts.
      const chunk = { type: part.type, data: part.data } as UIMessageChunk & { id?: string };
      if (part.id !== undefined) chunk.id = part.id;
      return [chunk];
    }
  }
}

type ToolPart = Extract<UiPart, { type: 'dynamic-tool' }>;

function toolToChunks(part: ToolPart): UIMessageChunk[] {
  const { toolCallId, toolName } = part;
  const input = part.input ?? {};
  if (part.state === 'input-streaming') {
    const chunks: UIMessageChunk[] = [{ type: 'tool-input-start', toolCallId, toolName, dynamic: true }];
    if (part.input !== undefined) {
      chunks.push({ type: 'tool-input-delta', toolCallId, inputTextDelta: JSON.stringify(part.input) });
    }
    return chunks;
  }
  const chunks: UIMessageChunk[] = [{ type: 'tool-input-available', toolCallId, toolName, input, dynamic: true }];
  switch (part.state) {
    case 'approval-requested':
    case 'approval-responded':
      if (part.approval) chunks.push({ type: 'tool-approval-request', approvalId: part.approval.id, toolCallId });
      break;
    case 'output-available':
      chunks.push({ type: 'tool-output-available', toolCallId, output: part.output ?? null, dynamic: true });
      break;
    case 'output-error':
      chunks.push({ type: 'tool-output-error', toolCallId, errorText: part.errorText ?? 'Tool failed', dynamic: true });
      break;
    case 'output-denied':
      chunks.push({ type: 'tool-output-denied', toolCallId });
      break;
    default:
      break;
  }
  return chunks;
}
