import { readFileSync } from 'node:fs';
import { uiMessageChunkSchema, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import type { UiChunk, UiMessage } from '../src/protocol.gen';
import { fold } from './helpers';

// Produced by the Rust protocol crate: our chunks must be what the `ai` package accepts.
const fixture = JSON.parse(readFileSync(new URL('./fixtures/ui-stream.json', import.meta.url), 'utf8')) as {
  chunks: UiChunk[];
  message: UiMessage;
};

describe('the Rust chunk transcript', () => {
  it('passes the AI SDK chunk schema, chunk by chunk', async () => {
    const schema = uiMessageChunkSchema();
    expect(schema.validate).toBeDefined();
    expect(fixture.chunks.length).toBeGreaterThan(0);
    for (const chunk of fixture.chunks) {
      const result = await schema.validate!(chunk);
      expect(result.success, `${JSON.stringify(chunk)}: ${result.success ? '' : String(result.error)}`).toBe(true);
    }
  });

  it('folds with readUIMessageStream into the message Rust built', async () => {
    const message = await fold(fixture.chunks as UIMessageChunk[]);
    expect(message).toEqual(fixture.message);
  });

  it('is rejected by the schema when a chunk is malformed (the check can fail)', async () => {
    const result = await uiMessageChunkSchema().validate!({ type: 'text-delta', id: 't0' });
    expect(result.success).toBe(false);
  });
});

