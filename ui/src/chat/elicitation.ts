import type { ElicitationCard, ElicitationForm, ElicitationState, FieldInput, SamplingCard, SamplingState } from '../protocol.gen';

// Servers' questions during a tool call (MCP elicitation and sampling), as reply parts.

/** The kind of the reply part that shows a server's question (MCP elicitation). */
export const ELICITATION_PART = 'data-mcp-elicitation';

const STATES: readonly ElicitationState[] = ['pending', 'accepted', 'declined', 'cancelled', 'expired', 'withdrawn', 'refused'];

/** A `data-mcp-elicitation` part's data as a card; `undefined` when it is not one. */
export function elicitationCard(data: unknown): ElicitationCard | undefined {
  return cardOf<ElicitationCard>(data, STATES, ['elicitationId', 'message', 'serverName']);
}

/**
 * A part's data as a card when it is an object with these string fields, these array fields
 * and one of the card's states; `undefined` otherwise (an older or foreign part is not shown).
 */
function cardOf<Card extends { state: string }>(
  data: unknown,
  states: readonly Card['state'][],
  strings: readonly (keyof Card & string)[],
  arrays: readonly (keyof Card & string)[] = [],
): Card | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  const fields = data as Record<string, unknown>;
  if (!strings.every((key) => typeof fields[key] === 'string')) return undefined;
  if (!arrays.every((key) => Array.isArray(fields[key]))) return undefined;
  return states.some((state) => state === fields.state) ? (data as Card) : undefined;
}

/** What each settled state says on the card. */
export const ELICITATION_STATE_LABEL: Record<Exclude<ElicitationState, 'pending'>, string> = {
  accepted: 'Sent to the server.',
  declined: 'Declined: the server was told you said no.',
  cancelled: 'Cancelled: the server was told you dismissed the question.',
  expired: 'Nobody answered in time, so the server was told the question was dismissed.',
  withdrawn: 'No longer open: the tool call that asked has ended.',
  refused: 'Colloquy could not show this question.',
};

/** A field's value as the form holds it: text and numbers as typed, a checkbox, chosen options. */
export type FieldValue = string | boolean | string[];
export type FormValues = Record<string, FieldValue>;

/** The form filled in with the server's defaults. */
export function initialValues(form: ElicitationForm): FormValues {
  const values: FormValues = {};
  for (const field of form.fields) values[field.name] = defaultValue(field.input);
  return values;
}

function defaultValue(input: FieldInput): FieldValue {
  switch (input.kind) {
    case 'text':
      return input.default ?? '';
    case 'number':
      return input.default === undefined ? '' : String(input.default);
    case 'boolean':
      return input.default ?? false;
    case 'choice':
      return input.default ?? '';
    case 'multi_choice':
      return input.default;
  }
}

/**
 * The form's values as the answer's content: empty fields left out, numbers as numbers.
 * What only the form can tell (a required field left empty, a number that is not one) is
 * an error by field name; everything else is checked by the backend against the schema.
 */
export function formContent(form: ElicitationForm, values: FormValues): { content: Record<string, unknown> } | { errors: Record<string, string> } {
  const content: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const field of form.fields) {
    const value = values[field.name];
    const empty = value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
    if (field.input.kind === 'boolean') {
      content[field.name] = value === true;
      continue;
    }
    if (empty) {
      if (field.required) errors[field.name] = 'Required.';
      continue;
    }
    if (field.input.kind === 'number' && typeof value === 'string') {
      const number = Number(value.trim());
      if (value.trim() === '' || !Number.isFinite(number)) errors[field.name] = 'Enter a number.';
      else content[field.name] = number;
      continue;
    }
    content[field.name] = value;
  }
  return Object.keys(errors).length > 0 ? { errors } : { content };
}

/** An accepted answer's content as lines to show: "Label: value". */
export function contentLines(card: ElicitationCard): string[] {
  const content = card.content ?? {};
  return Object.entries(content).map(([name, value]) => {
    const field = card.form?.fields.find((f) => f.name === name);
    const label = field?.title ?? name;
    const options = field && (field.input.kind === 'choice' || field.input.kind === 'multi_choice') ? field.input.options : [];
    const show = (v: unknown) => options.find((o) => o.value === v)?.label ?? (typeof v === 'string' ? v : JSON.stringify(v));
    const text = Array.isArray(value) ? value.map(show).join(', ') : show(value);
    return `${label}: ${text}`;
  });
}

/** The kind of the reply part that shows a server's sampling request. */
export const SAMPLING_PART = 'data-mcp-sampling';

const SAMPLING_STATES: readonly SamplingState[] = ['pending', 'running', 'done', 'denied', 'failed', 'expired', 'withdrawn'];

/** A `data-mcp-sampling` part's data as a card; `undefined` when it is not one. */
export function samplingCard(data: unknown): SamplingCard | undefined {
  return cardOf<SamplingCard>(data, SAMPLING_STATES, ['samplingId', 'serverName'], ['messages']);
}

/** What each state of a sampling request says on its card. */
export const SAMPLING_STATE_LABEL: Record<Exclude<SamplingState, 'pending'>, string> = {
  running: 'The model is answering…',
  done: 'Answered by the model; the answer went to the server.',
  denied: 'Denied: the server was told no.',
  failed: 'The model could not answer; the server was told why.',
  expired: 'Nobody answered in time, so the server was told no.',
  withdrawn: 'No longer open: the tool call that asked has ended.',
};
