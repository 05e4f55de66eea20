import { describe, expect, it } from 'vitest';
import type { AcpAgent } from '../src/protocol.gen';
import { acpInputFromDraft, draftFromAgent } from '../src/settings/acpForm';

const agent: AcpAgent = {
  id: 'a1',
  name: 'Qwen Code',
  command: 'qwen',
  args: ['--acp'],
  variables: [
    { name: 'OPENAI_BASE_URL', secret: false, value: 'http://localhost:9/v1', set: true },
    { name: 'OPENAI_API_KEY', secret: true, set: true },
  ],
  createdAt: '',
  updatedAt: '',
};

describe('ACP agent form', () => {
  it('keeps a stored secret when its value is left empty, and plain variables as typed', () => {
    const draft = draftFromAgent(agent);
    expect(draft.plain).toBe('OPENAI_BASE_URL=http://localhost:9/v1');
    expect(acpInputFromDraft(draft)).toEqual({
      input: {
        name: 'Qwen Code',
        command: 'qwen',
        args: ['--acp'],
        variables: [
          { name: 'OPENAI_BASE_URL', secret: false, value: 'http://localhost:9/v1' },
          { name: 'OPENAI_API_KEY', secret: true, value: null },
        ],
      },
    });
  });

  it('says what is wrong before anything is sent', () => {
    const draft = { ...draftFromAgent(), name: ' ', command: '', plain: 'no equals sign' };
    expect(acpInputFromDraft(draft)).toEqual({
      errors: { name: expect.any(String), command: expect.any(String), variables: expect.stringContaining('NAME=value') },
    });
  });
});
