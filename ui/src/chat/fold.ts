import type { JsonValue, MessageMetadata, UiChunk, UiMessage, UiPart } from '../protocol.gen';

type ToolPart = Extract<UiPart, { type: 'dynamic-tool' }>;
type Metadata = { [key: string]: JsonValue };

/**
 * Folds one reply's chunks into its message with the AI SDK's rules (the same ones as
 * `readUIMessageStream` and the backend's `MessageAccumulator`), synchronously, so a
 * snapshot can replace the state at once and every chunk lands in order.
 *
 * The message is immutable from the outside: a chunk that changes it yields a new
 * message object whose unchanged parts are shared, so views of finished parts can be
 * memoized.
 */
export class MessageFold {
  private state: UiMessage;
  /** Open text / reasoning parts: chunk id → index in `parts`. */
  private readonly activeText = new Map<string, number>();
  private readonly activeReasoning = new Map<string, number>();
  /** Raw tool input text per tool call, while it streams. */
  private readonly toolInput = new Map<string, string>();

  constructor(messageId: string) {
    this.state = { id: messageId, role: 'assistant', parts: [] };
  }

  /**
   * Continues from a snapshot. The backend names the parts a snapshot leaves open
   * `t<index>` (text) and `r<index>` (reasoning, unless the part keeps its own id), so
   * later chunks find them.
   */
  static fromSnapshot(message: UiMessage): MessageFold {
    const fold = new MessageFold(message.id);
    fold.state = message;
    message.parts.forEach((part, index) => {
      if (part.type === 'text' && part.state === 'streaming') fold.activeText.set(`t${index}`, index);
      if (part.type === 'reasoning' && part.state === 'streaming') fold.activeReasoning.set(part.id ?? `r${index}`, index);
    });
    return fold;
  }

  get message(): UiMessage {
    return this.state;
  }

  /** Applies one chunk; false when it does not fit the message (it is then dropped). */
  apply(chunk: UiChunk): boolean {
    switch (chunk.type) {
      case 'start':
        if (chunk.messageId !== undefined) this.state = { ...this.state, id: chunk.messageId };
        this.mergeMetadata(chunk.messageMetadata);
        return true;
      case 'start-step':
        this.push({ type: 'step-start' });
        return true;
      case 'finish-step':
        this.activeText.clear();
        this.activeReasoning.clear();
        return true;
      case 'text-start':
        this.activeText.set(chunk.id, this.push({ type: 'text', text: '', state: 'streaming' }));
        return true;
      case 'text-delta':
        return this.updateOpen(this.activeText, chunk.id, (part) => (part.type === 'text' ? { ...part, text: part.text + chunk.delta } : part));
      case 'text-end':
        return this.closeOpen(this.activeText, chunk.id);
      case 'reasoning-start': {
        const part: UiPart = { type: 'reasoning', id: chunk.id, text: '', state: 'streaming' };
        // A signature (or redacted data) the provider needs back; may also come at the end.
        if (chunk.providerMetadata !== undefined) part.providerMetadata = chunk.providerMetadata;
        this.activeReasoning.set(chunk.id, this.push(part));
        return true;
      }
      case 'reasoning-delta':
        return this.updateOpen(this.activeReasoning, chunk.id, (part) =>
          part.type === 'reasoning' ? { ...part, text: part.text + chunk.delta } : part,
        );
      case 'reasoning-end': {
        const metadata = chunk.providerMetadata;
        if (metadata !== undefined) {
          this.updateOpen(this.activeReasoning, chunk.id, (part) => (part.type === 'reasoning' ? { ...part, providerMetadata: metadata } : part));
        }
        return this.closeOpen(this.activeReasoning, chunk.id);
      }
      case 'tool-input-start':
        this.toolInput.set(chunk.toolCallId, '');
        this.upsertTool(chunk.toolCallId, chunk.toolName, (part) => ({ ...part, state: 'input-streaming' }));
        return true;
      case 'tool-input-delta': {
        const text = this.toolInput.get(chunk.toolCallId);
        if (text === undefined) return false;
        const joined = text + chunk.inputTextDelta;
        this.toolInput.set(chunk.toolCallId, joined);
        const input = parseJson(joined);
        if (input !== undefined) this.updateTool(chunk.toolCallId, (part) => ({ ...part, input }));
        return true;
      }
      case 'tool-input-available':
        this.upsertTool(chunk.toolCallId, chunk.toolName, (part) => ({ ...part, state: 'input-available', input: chunk.input }));
        return true;
      case 'tool-input-error':
        this.upsertTool(chunk.toolCallId, chunk.toolName, (part) => ({
          ...part,
          state: 'output-error',
          input: chunk.input,
          errorText: chunk.errorText,
        }));
        return true;
      case 'tool-approval-request':
        return this.updateTool(chunk.toolCallId, (part) => ({ ...part, state: 'approval-requested', approval: { id: chunk.approvalId } }));
      case 'tool-output-available':
        return this.updateTool(chunk.toolCallId, (part) => ({ ...part, state: 'output-available', output: chunk.output }));
      case 'tool-output-error':
        return this.updateTool(chunk.toolCallId, (part) => ({ ...part, state: 'output-error', errorText: chunk.errorText }));
      case 'tool-output-denied':
        return this.updateTool(chunk.toolCallId, (part) => ({ ...part, state: 'output-denied' }));
      case 'source-url': {
        const part: UiPart = { type: 'source-url', sourceId: chunk.sourceId, url: chunk.url };
        if (chunk.title !== undefined) part.title = chunk.title;
        this.push(part);
        return true;
      }
      case 'file':
        this.push({ type: 'file', mediaType: chunk.mediaType, url: chunk.url });
        return true;
      case 'message-metadata':
        this.mergeMetadata(chunk.messageMetadata);
        return true;
      case 'finish':
        this.mergeMetadata(chunk.messageMetadata);
        return true;
      case 'error':
      case 'abort':
        // The reply's `data-error` part and its final metadata say what happened.
        return true;
      default:
        return this.applyData(chunk);
    }
  }

  private applyData(chunk: Extract<UiChunk, { type: `data-${string}` }>): boolean {
    if (chunk.transient === true) return true;
    const parts = this.state.parts;
    const index =
      chunk.id === undefined ? -1 : parts.findIndex((part) => part.type === chunk.type && 'id' in part && part.id === chunk.id);
    const part = { type: chunk.type, data: chunk.data } as UiPart & { id?: string };
    if (chunk.id !== undefined) part.id = chunk.id;
    if (index === -1) this.push(part);
    else this.replace(index, part);
    return true;
  }

  private push(part: UiPart): number {
    this.state = { ...this.state, parts: [...this.state.parts, part] };
    return this.state.parts.length - 1;
  }

  private replace(index: number, part: UiPart): void {
    const parts = this.state.parts.slice();
    parts[index] = part;
    this.state = { ...this.state, parts };
  }

  private updateOpen(active: Map<string, number>, id: string, update: (part: UiPart) => UiPart): boolean {
    const index = openIndex(active, id);
    const part = index === undefined ? undefined : this.state.parts[index];
    if (index === undefined || !part) return false;
    this.replace(index, update(part));
    return true;
  }

  private closeOpen(active: Map<string, number>, id: string): boolean {
    const index = openIndex(active, id);
    const part = index === undefined ? undefined : this.state.parts[index];
    if (index === undefined || !part) return false;
    if (part.type === 'text' || part.type === 'reasoning') this.replace(index, { ...part, state: 'done' });
    active.delete(active.has(id) ? id : (onlyKey(active) ?? id));
    return true;
  }

  private updateTool(toolCallId: string, update: (part: ToolPart) => ToolPart): boolean {
    const index = this.state.parts.findIndex((part) => part.type === 'dynamic-tool' && part.toolCallId === toolCallId);
    const part = this.state.parts[index];
    if (index === -1 || part?.type !== 'dynamic-tool') return false;
    this.replace(index, update(part));
    return true;
  }

  private upsertTool(toolCallId: string, toolName: string, update: (part: ToolPart) => ToolPart): void {
    const exists = this.state.parts.some((part) => part.type === 'dynamic-tool' && part.toolCallId === toolCallId);
    if (!exists) this.push({ type: 'dynamic-tool', toolName, toolCallId, state: 'input-streaming' });
    this.updateTool(toolCallId, update);
  }

  private mergeMetadata(patch: MessageMetadata | undefined): void {
    if (patch === undefined) return;
    const base = this.state.metadata as Metadata | undefined;
    const merged = base === undefined ? patch : (mergeObjects(base, patch as Metadata) as MessageMetadata);
    this.state = { ...this.state, metadata: merged };
  }
}

/**
 * The part a chunk id names. Should a chunk use another id while exactly one part of its
 * kind is open, it continues that part rather than being lost.
 */
function openIndex(active: Map<string, number>, id: string): number | undefined {
  const index = active.get(id);
  if (index !== undefined) return index;
  const only = onlyKey(active);
  return only === undefined ? undefined : active.get(only);
}

function onlyKey(active: Map<string, number>): string | undefined {
  return active.size === 1 ? active.keys().next().value : undefined;
}

function parseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

/** Deep merge as the AI SDK merges metadata: objects key by key, anything else replaces. */
function mergeObjects(base: Metadata, patch: Metadata): Metadata {
  const result: Metadata = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const current = result[key];
    result[key] = isObject(value) && isObject(current) ? mergeObjects(current, value) : value;
  }
  return result;
}

function isObject(value: JsonValue | undefined): value is Metadata {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
