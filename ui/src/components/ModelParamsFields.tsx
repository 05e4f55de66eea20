import { REASONING_LEVELS, type ModelParamsDraft } from '../settings/modelParams';
import type { FieldErrors } from '../settings/fieldErrors';

interface ModelParamsFieldsProps {
  draft: ModelParamsDraft;
  errors: FieldErrors;
  disabled?: boolean;
  onChange: (draft: ModelParamsDraft) => void;
  /** Prefixes the fields' test ids (`topic-param-temperature`, …). */
  testIdPrefix: string;
}

/** Temperature, top-p, longest answer and reasoning effort; an empty field sends nothing. */
export function ModelParamsFields({ draft, errors, disabled, onChange, testIdPrefix }: ModelParamsFieldsProps) {
  const errorAt = (field: string) =>
    errors[field] ? (
      <div className="field-error" data-testid="form-error" data-field={field} role="alert">
        {errors[field]}
      </div>
    ) : null;
  const numberField = (key: 'temperature' | 'topP' | 'maxOutputTokens', label: string, help: string, placeholder: string) => (
    <label className="field">
      <span className="field-label">{label}</span>
      <input
        data-testid={`${testIdPrefix}-${key}`}
        inputMode="decimal"
        value={draft[key]}
        disabled={disabled}
        placeholder={placeholder}
        onChange={(event) => onChange({ ...draft, [key]: event.target.value })}
      />
      <span className="field-help">{help}</span>
      {errorAt(`params.${key}`)}
    </label>
  );
  return (
    <div className="model-params">
      {numberField('temperature', 'Temperature', '0–2; lower is more focused, higher more varied.', 'model default')}
      {numberField('topP', 'Top-p', 'Above 0, at most 1. Anthropic models take a temperature or a top-p, not both.', 'model default')}
      {numberField('maxOutputTokens', 'Longest answer (tokens)', 'The most a reply may write.', 'model default')}
      <label className="field">
        <span className="field-label">Reasoning effort</span>
        <select
          data-testid={`${testIdPrefix}-reasoningEffort`}
          value={draft.reasoningEffort}
          disabled={disabled}
          onChange={(event) => onChange({ ...draft, reasoningEffort: event.target.value as ModelParamsDraft['reasoningEffort'] })}
        >
          {REASONING_LEVELS.map((level) => (
            <option key={level.value} value={level.value}>
              {level.label}
            </option>
          ))}
        </select>
        <span className="field-help">Only for models marked as reasoning in their provider's settings.</span>
        {errorAt('params.reasoningEffort')}
      </label>
    </div>
  );
}
