import { useState, type FormEvent } from 'react';
import { toApiFailure } from '../backend/backend';
import type { MatchOp, PolicyDecision, PolicyRule, Topic, ToolRuleInput, UpdateToolRule } from '../protocol.gen';
import { fieldErrorsFrom, NO_ERRORS, type FieldErrors } from '../settings/fieldErrors';
import { draftFromRule, emptyCondition, MATCH_OPS, ruleFields, ruleInputFromDraft, type ConditionDraft, type RuleDraft } from '../settings/ruleForm';
import { useBackend } from './BackendContext';

interface RuleFormProps {
  /** The rule being edited; a new one is created when absent. */
  rule?: PolicyRule;
  topics: Topic[];
  onSaved: (rule: PolicyRule) => void;
  onCancel: () => void;
}

/**
 * One approval rule: which tool (a glob), on which arguments (conditions on JSON
 * pointers), what happens (allow, deny, ask), where (everywhere or one topic) and until
 * when. Errors show next to the field they are about, from this form or the backend.
 */
export function RuleForm({ rule, topics, onSaved, onCancel }: RuleFormProps) {
  const backend = useBackend();
  const [draft, setDraft] = useState<RuleDraft>(() => draftFromRule(rule));
  const [errors, setErrors] = useState<FieldErrors>(NO_ERRORS);
  const [saving, setSaving] = useState(false);

  const change = (patch: Partial<RuleDraft>) => setDraft({ ...draft, ...patch });
  const changeCondition = (index: number, patch: Partial<ConditionDraft>) =>
    change({ conditions: draft.conditions.map((condition, i) => (i === index ? { ...condition, ...patch } : condition)) });

  const save = async (event: FormEvent) => {
    event.preventDefault();
    const checked = ruleInputFromDraft(draft);
    if ('errors' in checked) {
      setErrors(checked.errors);
      return;
    }
    setErrors(NO_ERRORS);
    setSaving(true);
    try {
      const saved = rule
        ? await backend.call('tool_rule_update', { id: rule.id, rule: checked.input } satisfies UpdateToolRule)
        : await backend.call('tool_rule_create', checked.input satisfies ToolRuleInput);
      onSaved(saved);
    } catch (failure) {
      setErrors(fieldErrorsFrom(toApiFailure(failure, 'Could not save the rule'), ruleFields(draft)));
    } finally {
      setSaving(false);
    }
  };

  const errorAt = (field: string) =>
    errors[field] ? (
      <div className="field-error" data-testid="form-error" data-field={field} role="alert">
        {errors[field]}
      </div>
    ) : null;

  return (
    <form className="rule-form" data-testid="rule-form" onSubmit={save} noValidate>
      {errors[''] && (
        <div className="form-error" data-testid="form-error" role="alert">
          {errors['']}
        </div>
      )}
      <label className="field">
        <span className="field-label">Tool</span>
        <input
          data-testid="rule-tool"
          value={draft.tool}
          onChange={(event) => change({ tool: event.target.value })}
          placeholder="write_file, or a glob like *_file or *"
          spellCheck={false}
          autoComplete="off"
        />
        {errorAt('tool')}
      </label>
      <fieldset className="field rule-conditions">
        <legend className="field-label">Only when the arguments match</legend>
        {draft.conditions.length === 0 && <p className="field-help">No conditions: every call of the tool.</p>}
        {draft.conditions.map((condition, index) => (
          <div key={index} className="rule-condition" data-testid="rule-condition">
            <div className="field-row">
              <input
                data-testid="rule-condition-pointer"
                aria-label="JSON pointer"
                value={condition.pointer}
                onChange={(event) => changeCondition(index, { pointer: event.target.value })}
                placeholder="/path"
                spellCheck={false}
              />
              <select
                data-testid="rule-condition-op"
                aria-label="How it matches"
                value={condition.op}
                onChange={(event) => changeCondition(index, { op: event.target.value as MatchOp })}
              >
                {MATCH_OPS.map((op) => (
                  <option key={op.value} value={op.value}>
                    {op.label}
                  </option>
                ))}
              </select>
              <input
                data-testid="rule-condition-value"
                aria-label="Value"
                value={condition.value}
                onChange={(event) => changeCondition(index, { value: event.target.value })}
                placeholder={condition.op === 'equals' ? 'a JSON value or text' : condition.op === 'regex' ? '^docs/.*\\.md$' : 'docs/'}
                spellCheck={false}
              />
              <button
                type="button"
                className="icon-button"
                aria-label="Remove condition"
                title="Remove"
                onClick={() => change({ conditions: draft.conditions.filter((_, i) => i !== index) })}
              >
                ×
              </button>
            </div>
            {errorAt(`conditions.${index}`)}
            {errorAt(`conditions.${index}.pointer`)}
            {errorAt(`conditions.${index}.op`)}
            {errorAt(`conditions.${index}.value`)}
          </div>
        ))}
        <button
          type="button"
          className="button ghost small"
          data-testid="rule-add-condition"
          onClick={() => change({ conditions: [...draft.conditions, emptyCondition()] })}
        >
          + Add condition
        </button>
        <span className="field-help">A JSON pointer names an argument, e.g. /path. “equals” takes any JSON value.</span>
        {errorAt('conditions')}
      </fieldset>
      <div className="field-grid">
        <label className="field">
          <span className="field-label">Then</span>
          <select data-testid="rule-decision" value={draft.decision} onChange={(event) => change({ decision: event.target.value as PolicyDecision })}>
            <option value="allow">Allow without asking</option>
            <option value="ask">Ask me</option>
            <option value="deny">Deny</option>
          </select>
          {errorAt('decision')}
        </label>
        <label className="field">
          <span className="field-label">Where</span>
          <select
            data-testid="rule-scope"
            value={draft.scope === 'topic' ? draft.topicId || '?' : ''}
            onChange={(event) =>
              event.target.value === '' ? change({ scope: 'global', topicId: '' }) : change({ scope: 'topic', topicId: event.target.value === '?' ? '' : event.target.value })
            }
          >
            <option value="">Every topic</option>
            {draft.scope === 'topic' && !draft.topicId && <option value="?">Choose a topic…</option>}
            {draft.scope === 'topic' && draft.topicId && !topics.some((topic) => topic.id === draft.topicId) && (
              <option value={draft.topicId}>(deleted topic)</option>
            )}
            {topics.map((topic) => (
              <option key={topic.id} value={topic.id}>
                Only in “{topic.title || 'Untitled'}”
              </option>
            ))}
          </select>
          {errorAt('scope')}
          {errorAt('scope.topicId')}
        </label>
        <label className="field">
          <span className="field-label">Expires</span>
          <input data-testid="rule-expires" type="datetime-local" value={draft.expiresAt} onChange={(event) => change({ expiresAt: event.target.value })} />
          <span className="field-help">Empty: never.</span>
          {errorAt('expiresAt')}
        </label>
      </div>
      <div className="form-actions">
        <button type="button" className="button ghost" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="button primary" data-testid="rule-save" disabled={saving}>
          {saving ? 'Saving…' : rule ? 'Save rule' : 'Add rule'}
        </button>
      </div>
    </form>
  );
}
