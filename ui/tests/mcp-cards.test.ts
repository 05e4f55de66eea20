import { describe, expect, it } from 'vitest';
import { elicitationCard, samplingCard } from '../src/chat/elicitation';

describe('server question cards from part data', () => {
  const elicitation = { elicitationId: 'e1', message: 'Your name?', serverName: 'everything', state: 'pending' };
  const sampling = { samplingId: 's1', serverName: 'everything', messages: [], state: 'running' };

  it('reads well-formed data as cards', () => {
    expect(elicitationCard(elicitation)).toBe(elicitation);
    expect(samplingCard(sampling)).toBe(sampling);
  });

  it('refuses data that is not a card: missing fields, wrong types, unknown states', () => {
    for (const data of [null, 'x', [elicitation], { ...elicitation, message: 3 }, { ...elicitation, state: 'lost' }]) {
      expect(elicitationCard(data)).toBeUndefined();
    }
    for (const data of [{ ...sampling, messages: 'hi' }, { ...sampling, samplingId: undefined }, { ...sampling, state: 'pending?' }]) {
      expect(samplingCard(data)).toBeUndefined();
    }
    expect(samplingCard(elicitation)).toBeUndefined();
  });
});
