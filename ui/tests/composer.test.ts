import { describe, expect, it } from 'vitest';
import { tokenFromPaste } from '../src/backend/token';
import type { ReplyView, TurnView } from '../src/chat/conversation';
import { steerExplanation, steerTiming } from '../src/chat/inbox';
import { savesAsTopicModel, turnModels } from '../src/chat/turnModels';
import { modelsWithoutVision, visionWarning } from '../src/chat/vision';
import type { ModelCapabilities, Provider, UiPart } from '../src/protocol.gen';

const caps = (vision: boolean): ModelCapabilities => ({ tools: true, reasoning: false, vision, custom: false });

function provider(id: string, models: Record<string, boolean>): Provider {
  const names = Object.keys(models);
  return {
    id,
    name: id.toUpperCase(),
    kind: 'openai_compatible',
    format: 'openai_chat',
    baseUrl: 'http://127.0.0.1:1/v1',
    hasApiKey: false,
    models: names,
    defaultModel: names[0] ?? '',
    capabilities: Object.fromEntries(names.map((name) => [name, caps(models[name] ?? false)])),
    createdAt: '2025-01-01T00:00:00Z',
  };
}

const A = provider('a', { alpha: false, seeing: true });
const B = provider('b', { beta: false });
const alpha = { providerId: 'a', model: 'alpha' };
const seeing = { providerId: 'a', model: 'seeing' };
const beta = { providerId: 'b', model: 'beta' };

describe('turnModels: the one answer to "which models get my next message"', () => {
  it('falls back to the first provider’s default, then the topic’s model, then the assistant’s models', () => {
    expect(turnModels(undefined, undefined, [A, B], [])).toMatchObject({ models: [alpha], source: 'default' });
    expect(turnModels(beta, undefined, [A, B], [])).toMatchObject({ models: [beta], source: 'topic', standing: [beta] });
    expect(turnModels(beta, { models: [seeing, alpha] }, [A, B], [])).toMatchObject({ models: [seeing, alpha], source: 'assistant' });
  });

  it('a pick wins over the standing choice; a pick equal to it is no pick; a removed provider’s model is dropped', () => {
    expect(turnModels(alpha, undefined, [A, B], [alpha, beta])).toMatchObject({ models: [alpha, beta], standing: [alpha], source: 'picked' });
    expect(turnModels(alpha, undefined, [A, B], [alpha])).toMatchObject({ source: 'topic' });
    expect(turnModels(alpha, undefined, [A], [beta])).toMatchObject({ models: [alpha], source: 'topic' });
    expect(turnModels(undefined, { models: [beta] }, [A], [])).toMatchObject({ models: [alpha], source: 'default' });
  });

  it('one model picked is saved as the topic’s model, unless an assistant chooses the models or it already is', () => {
    expect(savesAsTopicModel([beta], 'topic', alpha)).toEqual(beta);
    expect(savesAsTopicModel([alpha], 'default', undefined)).toEqual(alpha);
    expect(savesAsTopicModel([alpha], 'topic', alpha)).toBeUndefined();
    expect(savesAsTopicModel([alpha, beta], 'topic', alpha)).toBeUndefined();
    expect(savesAsTopicModel([beta], 'assistant', alpha)).toBeUndefined();
  });
});

describe('vision warning', () => {
  it('names the models that cannot see images and says what they get instead', () => {
    expect(modelsWithoutVision([alpha, seeing, beta], [A, B])).toEqual([alpha, beta]);
    expect(visionWarning([seeing], [A, B], ['dot.png'])).toBeUndefined();
    expect(visionWarning([alpha], [A, B], [])).toBeUndefined();
    const one = visionWarning([alpha], [A, B], ['dot.png']);
    expect(one).toContain('alpha cannot see images');
    expect(one).toContain('“[dot.png was attached, but this model cannot see images]”');
    const two = visionWarning([alpha, beta, seeing], [A, B], ['a.png', 'b.png']);
    expect(two).toContain('alpha and beta cannot see images: instead of each of the 2 images, they are sent');
    expect(two).toContain('seeing gets the images');
  });
});

describe('steer timing', () => {
  const reply = (parts: UiPart[], live = true): ReplyView => ({ messageId: 'r', live, message: { id: 'r', role: 'assistant', parts } });
  const turn = (...replies: ReplyView[]): TurnView => ({ key: 't', replies });
  const tool: UiPart = { type: 'dynamic-tool', toolName: 'current_time', toolCallId: 'c1', state: 'input-available', input: {} } as UiPart;

  it('a live reply without a tool call has no step to stop at', () => {
    expect(steerTiming([turn(reply([{ type: 'text', text: 'hi' } as UiPart]))])).toBe('after-reply');
    expect(steerTiming([turn(reply([tool], false)), turn(reply([]))])).toBe('after-reply');
    expect(steerTiming([turn(reply([tool]))])).toBe('next-step');
    expect(steerTiming([turn(reply([]))], 'mid-turn')).toBe('agent');
    expect(steerTiming([turn(reply([tool]))], 'after-turn')).toBe('after-turn');
    expect(steerExplanation('after-reply')).toMatch(/no step to stop at/);
    expect(steerExplanation('agent')).toMatch(/before its next tool call/);
    expect(steerExplanation('after-turn')).toMatch(/next prompt when this turn ends/);
  });
});

describe('a pasted token', () => {
  it('is the token itself, or the one in the printed link', () => {
    expect(tokenFromPaste('  abc123 ')).toBe('abc123');
    expect(tokenFromPaste('http://127.0.0.1:8787/#token=abc123')).toBe('abc123');
    expect(tokenFromPaste('http://127.0.0.1:8787/#topic=t&token=abc123')).toBe('abc123');
    expect(tokenFromPaste('token=abc123')).toBe('abc123');
    expect(tokenFromPaste('http://127.0.0.1:8787/')).toBeUndefined();
    expect(tokenFromPaste('two words')).toBeUndefined();
    expect(tokenFromPaste('')).toBeUndefined();
  });
});
