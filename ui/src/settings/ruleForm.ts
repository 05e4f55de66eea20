import type { MatchOp, PolicyDecision, PolicyRule, RuleCondition, ToolRuleInput } from '../protocol.gen';
import type { FieldErrors } from './fieldErrors';

/** One condition as the form edits it: the value is text until it is saved. */
export interface ConditionDraft {
  pointer: string;
  op: MatchOp;
  value: string;
}

/** A policy rule as the form edits it. */
export interface RuleDraft {
  tool: string;
  conditions: ConditionDraft[];
  decision: PolicyDecision;
  scope: 'global' | 'topic';
  topicId: string;
  /** A `datetime-local` value (local time, no zone), or '' for never. */
  expiresAt: string;
}

export const MATCH_OPS: readonly { value: MatchOp; label: string }[] = [
  { value: 'equals', label: 'equals' },
  { value: 'prefix', label: 'starts with' },
  { value: 'glob', label: 'matches glob' },
  { value: 'regex', label: 'matches regex' },
];

export function emptyCondition(): ConditionDraft {
  return { pointer: '/path', op: 'prefix', value: '' };
}

/** The form's start: a new rule, or an existing one to edit. */
export function draftFromRule(rule?: PolicyRule): RuleDraft {
  if (!rule) return { tool: '', conditions: [], decision: 'allow', scope: 'global', topicId: '', expiresAt: '' };
  return {
    tool: rule.tool,
    conditions: rule.conditions.map((condition) => ({
      pointer: condition.pointer,
      op: condition.op,
      value: typeof condition.value === 'string' ? condition.value : JSON.stringify(condition.value),
    })),
    decision: rule.decision,
    scope: rule.scope.kind,
    topicId: rule.scope.kind === 'topic' ? rule.scope.topicId : '',
    expiresAt: rule.expiresAt ? toLocalInput(rule.expiresAt) : '',
  };
}

/**
 * The value a condition sends: `equals` takes any JSON value (`true`, `3`, `"x"`), so text
 * that parses as JSON is sent parsed and anything else as a string; the other operators
 * take a string.
 */
export function conditionValue(condition: ConditionDraft): unknown {
  if (condition.op !== 'equals') return condition.value;
  try {
    return JSON.parse(condition.value) as unknown;
  } catch {
    return condition.value;
  }
}

/**
 * The rule to save, or the errors that keep it from being saved, by the same field paths
 * the backend uses (so its errors land in the same places).
 */
export function ruleInputFromDraft(draft: RuleDraft, now: Date = new Date()): { input: ToolRuleInput } | { errors: FieldErrors } {
  const errors: Record<string, string> = {};
  const tool = draft.tool.trim();
  if (!tool) errors.tool = 'Name the tool, or use * for every tool.';
  const conditions: RuleCondition[] = draft.conditions.map((condition, index) => {
    const pointer = condition.pointer.trim();
    if (pointer !== '' && !pointer.startsWith('/')) {
      errors[`conditions.${index}.pointer`] = 'A JSON pointer starts with /, e.g. /path.';
    }
    return { pointer, op: condition.op, value: conditionValue(condition) };
  });
  if (draft.scope === 'topic' && !draft.topicId) errors['scope.topicId'] = 'Choose the topic this rule is for.';
  let expiresAt: string | undefined;
  if (draft.expiresAt) {
    const when = new Date(draft.expiresAt);
    if (Number.isNaN(when.getTime())) errors.expiresAt = 'Not a valid date and time.';
    else if (when.getTime() <= now.getTime()) errors.expiresAt = 'Choose a time in the future, or no expiry.';
    else expiresAt = when.toISOString();
  }
  if (Object.keys(errors).length > 0) return { errors };
  const input: ToolRuleInput = {
    tool,
    conditions,
    decision: draft.decision,
    scope: draft.scope === 'topic' ? { kind: 'topic', topicId: draft.topicId } : { kind: 'global' },
  };
  if (expiresAt) input.expiresAt = expiresAt;
  return { input };
}

/** Every field path the rule form shows an error under. */
export function ruleFields(draft: RuleDraft): string[] {
  const fields = ['tool', 'decision', 'scope', 'scope.topicId', 'expiresAt', 'conditions'];
  draft.conditions.forEach((_, index) => {
    fields.push(`conditions.${index}`, `conditions.${index}.pointer`, `conditions.${index}.op`, `conditions.${index}.value`);
  });
  return fields;
}

/** An RFC 3339 time as a `datetime-local` input value, in local time. */
export function toLocalInput(rfc3339: string): string {
  const date = new Date(rfc3339);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** A rule in one line: `write_file when /path starts with "docs/" → allow, in "Topic"`. */
export function describeRule(rule: PolicyRule, topicTitle?: string): string {
  const conditions = rule.conditions
    .map((condition) => {
      const op = MATCH_OPS.find((candidate) => candidate.value === condition.op)?.label ?? condition.op;
      return `${condition.pointer || '(whole input)'} ${op} ${JSON.stringify(condition.value)}`;
    })
    .join(' and ');
  const where = rule.scope.kind === 'topic' ? `in “${topicTitle ?? 'a deleted topic'}”` : 'everywhere';
  return `${rule.tool}${conditions ? ` when ${conditions}` : ''} → ${rule.decision}, ${where}`;
}
