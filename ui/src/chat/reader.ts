import type { UIMessageChunk } from 'ai';
import type { ExecutionTerminal, StreamMessage, UiMessage } from '../protocol.gen';
import { SeqGuard } from './seq';
import { reasoningPartId, snapshotToChunks, textPartId } from './snapshot';

export interface ChunkSink {
  chunk(chunk: UIMessageChunk): void;
  terminal(terminal: ExecutionTerminal): void;
}

/**
 * Turns a listener's StreamMessages into the AI SDK's chunk stream: a snapshot becomes
 * the chunks that rebuild it, later chunks pass through once each (by `seq`), and a
 * terminal ends the stream.
 */
export class StreamMessageReader {
  private readonly guard = new SeqGuard();
  /** Per execution: ids of text/reasoning parts the snapshot left open. */
  private readonly openParts = new Map<string, OpenParts>();

  constructor(private readonly sink: ChunkSink) {}

  read(message: StreamMessage): void {
    switch (message.kind) {
      case 'snapshot': {
        this.guard.covered(message.executionId, message.seq);
        this.openParts.set(message.executionId, openPartsOf(message.message));
        for (const chunk of snapshotToChunks(message.message)) this.sink.chunk(chunk);
        break;
      }
      case 'chunk': {
        if (!this.guard.accept(message.executionId, message.seq)) return;
        const chunk = message.chunk as UIMessageChunk;
        // The `data-error` part before it is what we show; an `error` chunk would make
        // the AI SDK abandon the stream before its terminal.
        if (chunk.type === 'error') return;
        const open = this.openParts.get(message.executionId);
        this.sink.chunk(open ? open.continueChunk(chunk) : chunk);
        break;
      }
      case 'terminal':
        this.sink.terminal(message);
        break;
    }
  }
}

/**
 * The snapshot's still-open text and reasoning parts. The backend names them `t<index>`
 * and `r<index>`; should a later chunk use another id for the only open part of its
 * kind, it is mapped onto that part instead of failing the whole stream.
 */
class OpenParts {
  private readonly seenText = new Set<string>();
  private readonly seenReasoning = new Set<string>();

  constructor(
    private readonly text: string[],
    private readonly reasoning: string[],
  ) {
    text.forEach((id) => this.seenText.add(id));
    reasoning.forEach((id) => this.seenReasoning.add(id));
  }

  continueChunk(chunk: UIMessageChunk): UIMessageChunk {
    switch (chunk.type) {
      case 'text-start':
        this.seenText.add(chunk.id);
        return chunk;
      case 'reasoning-start':
        this.seenReasoning.add(chunk.id);
        return chunk;
      case 'text-delta':
      case 'text-end':
        return this.seenText.has(chunk.id) || this.text.length !== 1 ? chunk : { ...chunk, id: this.text[0] as string };
      case 'reasoning-delta':
      case 'reasoning-end':
        return this.seenReasoning.has(chunk.id) || this.reasoning.length !== 1 ? chunk : { ...chunk, id: this.reasoning[0] as string };
      default:
        return chunk;
    }
  }
}

function openPartsOf(message: UiMessage): OpenParts {
  const text: string[] = [];
  const reasoning: string[] = [];
  message.parts.forEach((part, index) => {
    if (part.type === 'text' && part.state === 'streaming') text.push(textPartId(index));
    if (part.type === 'reasoning' && part.state === 'streaming') reasoning.push(reasoningPartId(index));
  });
  return new OpenParts(text, reasoning);
}
