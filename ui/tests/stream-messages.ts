import type { ExecutionTerminal, ModelRef, StreamMessage, UiChunk, UiMessage } from '../src/protocol.gen';

/** Builders for the StreamMessages a listener receives. */
const MODEL: ModelRef = { providerId: 'p1', model: 'scripted' };
const ids = { topicId: 'topic-1', turnId: 'turn-1', executionId: 'exec-1', messageId: 'msg-1' };

export function snapshot(seq: number, message: UiMessage, executionId = ids.executionId): StreamMessage {
  return { kind: 'snapshot', ...ids, executionId, model: MODEL, seq, message };
}
export function chunk(seq: number, c: UiChunk, executionId = ids.executionId): StreamMessage {
  return { kind: 'chunk', ...ids, executionId, model: MODEL, seq, chunk: c };
}
export function terminal(status: ExecutionTerminal['status'] = 'success'): StreamMessage {
  return { kind: 'terminal', ...ids, status, isTopicDone: true };
}

