import { describe, expect, it } from 'vitest';
import { contentLines, elicitationCard, formContent, initialValues } from '../src/chat/elicitation';
import { replyBlocks } from '../src/chat/messages';
import type { ElicitationCard, ElicitationForm, UiMessage } from '../src/protocol.gen';

const form: ElicitationForm = {
  fields: [
    { name: 'name', title: 'Name', required: true, input: { kind: 'text' } },
    { name: 'age', required: false, input: { kind: 'number', integer: true, default: 42 } },
    { name: 'ok', required: false, input: { kind: 'boolean' } },
    { name: 'pet', required: false, input: { kind: 'choice', options: [{ value: 'c', label: 'Cat' }], default: 'c' } },
    { name: 'tools', required: false, input: { kind: 'multi_choice', options: [{ value: 'a', label: 'Awl' }], default: [] } },
  ],
};

describe('elicitation forms', () => {
  it('start from the server’s defaults', () => {
    expect(initialValues(form)).toEqual({ name: '', age: '42', ok: false, pet: 'c', tools: [] });
  });

  it('send typed values and leave empty fields out; a required empty field or a non-number is caught here', () => {
    expect(formContent(form, { ...initialValues(form), name: 'Ada' })).toEqual({ content: { name: 'Ada', age: 42, ok: false, pet: 'c' } });
    expect(formContent(form, initialValues(form))).toEqual({ errors: { name: 'Required.' } });
    expect(formContent(form, { ...initialValues(form), name: 'Ada', age: 'x' })).toEqual({ errors: { age: 'Enter a number.' } });
  });

  it('are read from reply parts, and accepted content shows with labels', () => {
    const card: ElicitationCard = {
      elicitationId: 'e1',
      toolCallId: 'c1',
      serverName: 'S',
      message: 'Who?',
      form,
      state: 'accepted',
      content: { name: 'Ada', pet: 'c', tools: ['a'] },
    };
    expect(contentLines(card)).toEqual(['Name: Ada', 'pet: Cat', 'tools: Awl']);
    expect(elicitationCard({ state: 'pending' })).toBeUndefined();
    const parts = [{ type: 'data-mcp-elicitation', id: 'e1', data: card }] as UiMessage['parts'];
    expect(replyBlocks(parts)).toEqual([{ kind: 'elicitation', card }]);
  });
});
