import { describe, expect, it } from 'vitest';
import type { AppSettings, PolicyRule, Provider } from '../src/protocol.gen';
import { assistantInputFromDraft, draftFromAssistant, draftWithoutDefaults } from '../src/settings/assistantForm';
import { capabilitiesToSend, capabilityRows, toggleCapability } from '../src/settings/capabilities';
import { fieldErrorsFrom } from '../src/settings/fieldErrors';
import { describeParams, draftFromParams, paramsFromDraft } from '../src/settings/modelParams';
import { draftFromSettings, effectiveIdleTimeout, formatDuration, settingsInputFromDraft } from '../src/settings/generalForm';
import { describeRule, draftFromRule, ruleFields, ruleInputFromDraft, type RuleDraft } from '../src/settings/ruleForm';

const NOW = new Date('2025-06-01T12:00:00Z');

const draft = (patch: Partial<RuleDraft> = {}): RuleDraft => ({ ...draftFromRule(), tool: 'write_file', ...patch });

describe('rule form', () => {
  it('builds the rule the backend takes; "equals" values are JSON when they parse', () => {
    const result = ruleInputFromDraft(
      draft({
        conditions: [
          { pointer: '/path', op: 'prefix', value: 'docs/' },
          { pointer: '/overwrite', op: 'equals', value: 'true' },
          { pointer: '/path', op: 'equals', value: 'notes.md' },
        ],
        decision: 'deny',
        scope: 'topic',
        topicId: 'topic-1',
        expiresAt: '2030-01-02T03:04',
      }),
      NOW,
    );
    expect(result).toEqual({
      input: {
        tool: 'write_file',
        conditions: [
          { pointer: '/path', op: 'prefix', value: 'docs/' },
          { pointer: '/overwrite', op: 'equals', value: true },
          { pointer: '/path', op: 'equals', value: 'notes.md' },
        ],
        decision: 'deny',
        scope: { kind: 'topic', topicId: 'topic-1' },
        expiresAt: new Date('2030-01-02T03:04').toISOString(),
      },
    });
  });

  it('names the fields it refuses with the paths the backend uses', () => {
    const result = ruleInputFromDraft(
      draft({ tool: ' ', conditions: [{ pointer: 'path', op: 'glob', value: '*' }], scope: 'topic', topicId: '', expiresAt: '2020-01-01T00:00' }),
      NOW,
    );
    expect(result).toEqual({
      errors: {
        tool: expect.any(String),
        'conditions.0.pointer': expect.stringContaining('/'),
        'scope.topicId': expect.any(String),
        expiresAt: expect.stringContaining('future'),
      },
    });
  });

  it('puts a backend error under its field, or the closest field the form shows, else on top', () => {
    const fields = ruleFields(draft({ conditions: [{ pointer: '/path', op: 'regex', value: '(' }] }));
    const bad = (field: string | undefined) => ({ kind: 'bad_request' as const, message: 'bad', retryable: false, ...(field ? { field } : {}) });
    expect(fieldErrorsFrom(bad('conditions.0.value'), fields)).toEqual({ 'conditions.0.value': 'bad' });
    expect(fieldErrorsFrom(bad('conditions.0.value.flags'), fields)).toEqual({ 'conditions.0.value': 'bad' });
    expect(fieldErrorsFrom(bad('scope.topicId'), fields)).toEqual({ 'scope.topicId': 'bad' });
    expect(fieldErrorsFrom(bad('somethingElse'), fields)).toEqual({ '': 'bad' });
    expect(fieldErrorsFrom({ kind: 'internal', message: 'down', retryable: true, field: 'tool' }, fields)).toEqual({ '': 'down' });
    // The backend's message names the field; next to the field it need not.
    const named = { kind: 'bad_request' as const, message: 'conditions.0.value: not a valid regular expression', retryable: false, field: 'conditions.0.value' };
    expect(fieldErrorsFrom(named, fields)).toEqual({ 'conditions.0.value': 'not a valid regular expression' });
    expect(fieldErrorsFrom({ ...named, field: 'other' }, fields)).toEqual({ '': named.message });
  });

  it('edits an existing rule as it was saved, and describes it in one line', () => {
    const rule: PolicyRule = {
      id: 'r1',
      tool: 'write_file',
      conditions: [{ pointer: '/path', op: 'equals', value: 42 }],
      decision: 'allow',
      scope: { kind: 'topic', topicId: 't1' },
      createdAt: '2025-01-01T00:00:00Z',
    };
    const edited = draftFromRule(rule);
    expect(edited).toMatchObject({ tool: 'write_file', scope: 'topic', topicId: 't1', conditions: [{ value: '42' }] });
    expect(ruleInputFromDraft(edited, NOW)).toEqual({
      input: { tool: 'write_file', conditions: rule.conditions, decision: 'allow', scope: rule.scope },
    });
    expect(describeRule(rule, 'Notes')).toBe('write_file when /path equals 42 → allow, in “Notes”');
  });
});

describe('capabilities editor', () => {
  const known: Provider['capabilities'] = {
    'gpt-4o': { tools: true, reasoning: false, vision: true, custom: false },
    local: { tools: false, reasoning: false, vision: false, custom: true },
  };

  it('shows set, guessed and not-yet-saved models, and sends only what the user changed', () => {
    const rows = capabilityRows(['gpt-4o', 'local', 'new-model'], known, {});
    expect(rows.map((row) => [row.model, row.source, row.vision])).toEqual([
      ['gpt-4o', 'guessed', true],
      ['local', 'set', false],
      ['new-model', 'new', false],
    ]);
    expect(capabilitiesToSend({}, ['gpt-4o'])).toBeUndefined();

    const edits = toggleCapability({}, rows[0]!, 'reasoning');
    expect(capabilityRows(['gpt-4o'], known, edits)[0]).toEqual({ model: 'gpt-4o', tools: true, reasoning: true, vision: true, source: 'set' });
    expect(capabilitiesToSend(edits, ['gpt-4o', 'local'])).toEqual({ 'gpt-4o': { tools: true, reasoning: true, vision: true, custom: true } });
    // A model removed from the list takes its edits with it.
    expect(capabilitiesToSend(edits, ['local'])).toBeUndefined();
  });
});

describe('assistant form', () => {
  it('absent tools mean every enabled tool; the tool-call allowance is 1 to 100', () => {
    const fresh = draftFromAssistant();
    expect(fresh.maxToolCalls).toBe('20');
    expect(assistantInputFromDraft({ ...fresh, name: 'Helper' })).toEqual({
      input: { name: 'Helper', systemPrompt: '', models: [], maxToolCalls: 20, params: {} },
    });
    expect(assistantInputFromDraft({ ...fresh, name: 'Reader', toolChoice: 'some', tools: ['read_file'], workspace: ' /srv/x ' })).toEqual({
      input: { name: 'Reader', systemPrompt: '', models: [], maxToolCalls: 20, tools: ['read_file'], workspace: '/srv/x', params: {} },
    });
    expect(assistantInputFromDraft({ ...fresh, name: '', maxToolCalls: '101' })).toEqual({
      errors: { name: expect.any(String), maxToolCalls: 'A whole number from 1 to 100.' },
    });
    expect(assistantInputFromDraft({ ...fresh, name: 'x', maxToolCalls: '2.5' })).toMatchObject({ errors: { maxToolCalls: expect.any(String) } });
  });

  it('sends reply strategies only when the defaults are not used; an empty list is kept', () => {
    const fresh = draftFromAssistant();
    expect(fresh.featureChoice).toBe('defaults');
    expect(fresh.features).toEqual([]);
    const strategies = [
      { name: 'context-rounds', description: 'a' },
      { name: 'tool-loop', description: 'b' },
    ];
    expect(draftWithoutDefaults(fresh, strategies)).toMatchObject({ featureChoice: 'some', features: ['context-rounds', 'tool-loop'] });
    expect(assistantInputFromDraft({ ...fresh, name: 'A', features: ['tool-loop'] })).toEqual({
      input: { name: 'A', systemPrompt: '', models: [], maxToolCalls: 20, params: {} },
    });
    expect(assistantInputFromDraft({ ...fresh, name: 'A', featureChoice: 'some', features: ['context-rounds'] })).toEqual({
      input: { name: 'A', systemPrompt: '', models: [], maxToolCalls: 20, features: ['context-rounds'], params: {} },
    });
    expect(assistantInputFromDraft({ ...fresh, name: 'A', featureChoice: 'some', features: [] })).toMatchObject({ input: { features: [] } });

    const saved = { id: 'a', name: 'A', systemPrompt: '', models: [], maxToolCalls: 20, createdAt: '', updatedAt: '' };
    expect(draftFromAssistant(saved).featureChoice).toBe('defaults');
    expect(draftFromAssistant({ ...saved, features: [] })).toMatchObject({ featureChoice: 'some', features: [] });
    // Leaving the defaults keeps a list the assistant already has, even an empty one.
    const savedEmpty = { ...saved, features: [] };
    expect(draftWithoutDefaults({ ...draftFromAssistant(savedEmpty), featureChoice: 'defaults' }, strategies, savedEmpty).features).toEqual([]);
    const savedOne = { ...saved, features: ['tool-loop'] };
    expect(draftWithoutDefaults({ ...draftFromAssistant(savedOne), featureChoice: 'defaults' }, strategies, savedOne).features).toEqual(['tool-loop']);
  });
});

describe('model settings', () => {
  it('sends only what is typed, within the bounds the backend enforces', () => {
    const empty = draftFromParams(undefined);
    expect(paramsFromDraft(empty)).toEqual({ params: {} });
    expect(paramsFromDraft({ ...empty, temperature: ' 0.3 ', topP: '1', maxOutputTokens: '500', reasoningEffort: 'off' })).toEqual({
      params: { temperature: 0.3, topP: 1, maxOutputTokens: 500, reasoningEffort: 'off' },
    });
    expect(paramsFromDraft({ ...empty, temperature: '2.1', topP: '0', maxOutputTokens: '1.5' })).toEqual({
      errors: {
        'params.temperature': 'A number from 0 to 2.',
        'params.topP': 'A number above 0, at most 1.',
        'params.maxOutputTokens': 'A whole number from 1 to 1,000,000.',
      },
    });
    expect(paramsFromDraft({ ...empty, temperature: 'warm' })).toMatchObject({ errors: { 'params.temperature': expect.any(String) } });
    expect(paramsFromDraft({ ...empty, temperature: '-1' })).toMatchObject({ errors: { 'params.temperature': expect.any(String) } });
  });

  it('round-trips saved settings through the form and describes them', () => {
    const saved = { temperature: 0.5, maxOutputTokens: 64, reasoningEffort: 'high' as const };
    expect(paramsFromDraft(draftFromParams(saved))).toEqual({ params: saved });
    expect(describeParams(saved)).toBe('temperature 0.5 · at most 64 tokens · reasoning high');
    expect(describeParams({})).toBe('');
  });
});

describe('general settings form', () => {
  const settings: AppSettings = { defaultIdleTimeoutSeconds: 120, minIdleTimeoutSeconds: 10, maxIdleTimeoutSeconds: 3600 };

  it('shows the chosen idle timeout, or nothing for the default', () => {
    expect(draftFromSettings(settings)).toEqual({ idleTimeoutSeconds: '' });
    expect(draftFromSettings({ ...settings, idleTimeoutSeconds: 300 })).toEqual({ idleTimeoutSeconds: '300' });
    expect(effectiveIdleTimeout(settings)).toBe(120);
    expect(effectiveIdleTimeout({ ...settings, idleTimeoutSeconds: 300 })).toBe(300);
  });

  it('sends whole seconds within the bounds, and empty as "back to the default"', () => {
    expect(settingsInputFromDraft({ idleTimeoutSeconds: ' 45 ' }, settings)).toEqual({ input: { idleTimeoutSeconds: 45 } });
    expect(settingsInputFromDraft({ idleTimeoutSeconds: '' }, settings)).toEqual({ input: {} });
  });

  it('refuses what the backend would, under the field, saying what is allowed', () => {
    for (const typed of ['1.5', '-3', 'soon', '2m']) {
      expect(settingsInputFromDraft({ idleTimeoutSeconds: typed }, settings)).toEqual({
        errors: { idleTimeoutSeconds: expect.stringContaining('whole number') },
      });
    }
    for (const typed of ['9', '3601']) {
      expect(settingsInputFromDraft({ idleTimeoutSeconds: typed }, settings)).toEqual({
        errors: { idleTimeoutSeconds: 'Choose between 10 and 3600 seconds (10 s to 1 h).' },
      });
    }
    // The backend's own refusal lands under the same field.
    const refused = { kind: 'bad_request' as const, field: 'idleTimeoutSeconds', message: 'idleTimeoutSeconds: must be between 10 and 3600 seconds (was 5)', retryable: false };
    expect(fieldErrorsFrom(refused, ['idleTimeoutSeconds'])).toEqual({ idleTimeoutSeconds: 'must be between 10 and 3600 seconds (was 5)' });
  });

  it('writes durations the way people say them', () => {
    expect([45, 60, 90, 120, 3600].map(formatDuration)).toEqual(['45 s', '1 min', '1 min 30 s', '2 min', '1 h']);
  });
});
