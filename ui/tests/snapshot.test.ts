import { readFileSync } from 'node:fs';
import { uiMessageChunkSchema, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { snapshotToChunks } from '../src/chat/snapshot';
import type { UiMessage } from '../src/protocol.gen';
import { fold } from './helpers';

const fixture = JSON.parse(readFileSync(new URL('./fixtures/ui-stream.json', import.meta.url), 'utf8')) as { message: UiMessage };

async function expectValidChunks(chunks: UIMessageChunk[]) {
  for (const chunk of chunks) {
    const result = await uiMessageChunkSchema().validate!(chunk);
    expect(result.success, JSON.stringify(chunk)).toBe(true);
  }
}

async function expectRebuilds(message: UiMessage) {
  const chunks = snapshotToChunks(message);
  await expectValidChunks(chunks);
  const folded = await fold(chunks);
  expect(folded).toEqual(message);
}

describe('snapshotToChunks', () => {
  it('rebuilds the finished message of the Rust transcript', async () => {
    await expectRebuilds(fixture.message);
  });

  it('rebuilds a reply caught mid-stream, leaving open parts open', async () => {
    const message: UiMessage = {
      id: 'msg-2',
      role: 'assistant',
      metadata: { model: 'scripted', status: 'streaming' },
      parts: [
        { type: 'step-start' },
        { type: 'reasoning', id: 'r1', text: 'Weighing options', state: 'streaming' },
        { type: 'text', text: 'Half a sent', state: 'streaming' },
      ],
    };
    const chunks = snapshotToChunks(message);
    expect(chunks.some((chunk) => chunk.type === 'text-end' || chunk.type === 'reasoning-end')).toBe(false);
    await expectRebuilds(message);
  });

  it('names open parts t<index> / r<index> so the live tail continues them', async () => {
    const message: UiMessage = {
      id: 'msg-3',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'reasoning', id: 'r1', text: 'Hmm', state: 'streaming' },
        { type: 'text', text: 'Hel', state: 'streaming' },
      ],
    };
    const tail: UIMessageChunk[] = [
      { type: 'reasoning-delta', id: 'r1', delta: ', yes' },
      { type: 'reasoning-end', id: 'r1' },
      { type: 'text-delta', id: 't2', delta: 'lo' },
      { type: 'text-end', id: 't2' },
      { type: 'finish-step' },
      { type: 'finish', messageMetadata: { status: 'success' } },
    ];
    const folded = (await fold([...snapshotToChunks(message), ...tail])) as UiMessage;
    expect(folded.parts).toEqual([
      { type: 'step-start' },
      { type: 'reasoning', id: 'r1', text: 'Hmm, yes', state: 'done' },
      { type: 'text', text: 'Hello', state: 'done' },
    ]);
    expect(folded.metadata).toEqual({ status: 'success' });
  });

  it('rebuilds empty text, data parts with and without ids, sources, files and tools', async () => {
    const message: UiMessage = {
      id: 'msg-4',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'text', text: '', state: 'done' },
        { type: 'data-progress', id: 'p', data: { done: 3 } },
        { type: 'source-url', sourceId: 's1', url: 'https://example.com' },
        { type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,AA==' },
        { type: 'dynamic-tool', toolName: 'search', toolCallId: 'c1', state: 'output-available', input: { q: 'x' }, output: { hits: 1 } },
        { type: 'dynamic-tool', toolName: 'search', toolCallId: 'c2', state: 'output-error', input: { q: 'y' }, errorText: 'boom' },
        { type: 'data-error', data: { kind: 'provider', message: 'connection reset', retryable: true } },
      ],
    };
    await expectRebuilds(message);
  });
});
