import type { ExecutionTerminal, ModelRef, StreamMessage, UiChunk, UiMessage } from '../src/protocol.gen';

/** Builders for the StreamMessages a listener receives. */
export const MODEL: ModelRef = { providerId: 'p1', model: 'scripted' };

/** Which execution a message belongs to; defaults describe a one-model turn. */
export interface Execution {
  executionId: string;
  messageId: string;
  turnId?: string;
  model?: ModelRef;
}

const ONE: Execution = { executionId: 'exec-1', messageId: 'msg-1' };

function ids(execution: Execution) {
  return {
    topicId: 'topic-1',
    turnId: execution.turnId ?? 'turn-1',
    executionId: execution.executionId,
    messageId: execution.messageId,
  };
}

export function snapshot(seq: number, message: UiMessage, execution: Execution = ONE): StreamMessage {
  return { kind: 'snapshot', ...ids(execution), model: execution.model ?? MODEL, seq, message };
}

export function chunk(seq: number, c: UiChunk, execution: Execution = ONE): StreamMessage {
  return { kind: 'chunk', ...ids(execution), model: execution.model ?? MODEL, seq, chunk: c };
}

export function terminal(status: ExecutionTerminal['status'] = 'success', execution: Execution = ONE, isTopicDone = true): StreamMessage {
  return { kind: 'terminal', ...ids(execution), status, isTopicDone };
}

export function lagged(): StreamMessage {
  return { kind: 'lagged', topicId: 'topic-1' };
}

/**
 * The chunks of a plain text reply, `words` streamed one per chunk, numbered from 1:
 * start, start-step, text-start, one delta per word, text-end, finish.
 */
export function textReply(words: string[], execution: Execution = ONE): StreamMessage[] {
  const id = 't1';
  const chunks: UiChunk[] = [
    { type: 'start', messageId: execution.messageId, messageMetadata: { model: (execution.model ?? MODEL).model, status: 'streaming' } },
    { type: 'start-step' },
    { type: 'text-start', id },
    ...words.map((delta): UiChunk => ({ type: 'text-delta', id, delta })),
    { type: 'text-end', id },
    { type: 'message-metadata', messageMetadata: { status: 'success' } },
    { type: 'finish', finishReason: 'stop' },
  ];
  return chunks.map((c, index) => chunk(index + 1, c, execution));
}
