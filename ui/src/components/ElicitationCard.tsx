import { useState, type FormEvent } from 'react';
import { isApiError } from '../backend/backend';
import { contentLines, ELICITATION_STATE_LABEL, formContent, initialValues, type FieldValue, type FormValues } from '../chat/elicitation';
import type { ApiError, ElicitationAction, ElicitationCard as Card, ElicitationField } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';

interface ElicitationCardProps {
  card: Card;
  /** The reply is running: only then can a pending question still be answered. */
  isLive: boolean;
}

/**
 * A form an MCP server asks the user to fill in while one of its tool calls runs: the
 * server's message, the form built from its schema, and Submit / Decline / Cancel. The
 * backend checks what is submitted against the schema; what does not fit is shown here and
 * the question stays open.
 */
export function ElicitationCard({ card, isLive }: ElicitationCardProps) {
  const open = card.state === 'pending' && isLive;
  return (
    <section
      className={`elicitation-card ${open ? 'open' : card.state}`}
      data-testid="elicitation-card"
      data-elicitation-id={card.elicitationId}
      data-state={card.state}
      aria-label={`Question from the ${card.serverName} MCP server`}
    >
      <header className="elicitation-header">
        <span className="elicitation-server">{card.serverName}</span>
        <span className="small muted">asks during its tool call</span>
      </header>
      <p className="elicitation-message" data-testid="elicitation-message">
        {card.message}
      </p>
      {card.problem && (
        <p className="elicitation-problem small" data-testid="elicitation-problem" role="note">
          {card.problem}
        </p>
      )}
      {open && card.form ? <OpenQuestion card={card} /> : <Settled card={card} isLive={isLive} />}
    </section>
  );
}

function Settled({ card, isLive }: ElicitationCardProps) {
  if (card.state === 'pending') {
    return (
      <p className="elicitation-outcome small muted" data-testid="elicitation-outcome" role="status">
        {isLive ? 'Waiting…' : 'No longer open: the reply that asked has ended.'}
      </p>
    );
  }
  const lines = card.state === 'accepted' ? contentLines(card) : [];
  return (
    <div className={`elicitation-outcome ${card.state}`} data-testid="elicitation-outcome" role="status">
      <span>{ELICITATION_STATE_LABEL[card.state]}</span>
      {lines.length > 0 && (
        <ul className="elicitation-content small" data-testid="elicitation-content">
          {lines.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

function OpenQuestion({ card }: { card: Card }) {
  const backend = useBackend();
  const form = card.form;
  const [values, setValues] = useState<FormValues>(() => (form ? initialValues(form) : {}));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<ApiError>();
  // Sent and taken: the card shows the outcome once the reply says it.
  const [sent, setSent] = useState<ElicitationAction>();
  if (!form) return null;

  const respond = async (action: ElicitationAction, content?: Record<string, unknown>) => {
    setBusy(true);
    setFailure(undefined);
    try {
      await backend.call('mcp_elicitation_respond', content === undefined ? { elicitationId: card.elicitationId, action } : { elicitationId: card.elicitationId, action, content });
      setSent(action);
    } catch (error) {
      setFailure(isApiError(error) ? error : { kind: 'internal', message: String(error), retryable: true });
    } finally {
      setBusy(false);
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const filled = formContent(form, values);
    if ('errors' in filled) {
      setErrors(filled.errors);
      return;
    }
    setErrors({});
    void respond('accept', filled.content);
  };
  const set = (name: string, value: FieldValue) => {
    setValues((current) => ({ ...current, [name]: value }));
    setErrors((current) => {
      if (!(name in current)) return current;
      const next = { ...current };
      delete next[name];
      return next;
    });
  };

  if (sent) {
    return (
      <p className="elicitation-outcome small muted" data-testid="elicitation-outcome" role="status">
        {sent === 'accept' ? 'Sending your answer…' : sent === 'decline' ? 'Declining…' : 'Cancelling…'}
      </p>
    );
  }
  return (
    <form className="elicitation-form" onSubmit={submit} noValidate aria-busy={busy}>
      {form.title && <p className="elicitation-form-title">{form.title}</p>}
      {form.fields.map((field) => (
        <Field key={field.name} idPrefix={card.elicitationId} field={field} value={values[field.name]} error={errors[field.name]} onChange={(value) => set(field.name, value)} />
      ))}
      {failure && (
        <div data-testid="elicitation-error">
          <ErrorNotice error={failure} hint={failure.kind === 'bad_request' ? 'Fix the answer and submit again.' : 'Nothing was sent. The tool call that asked may have ended.'} />
        </div>
      )}
      <div className="approval-actions" role="group" aria-label={`Answer ${card.serverName}`}>
        <button type="submit" className="button primary small" data-testid="elicitation-accept" disabled={busy}>
          {busy ? 'Sending…' : 'Submit'}
        </button>
        <button type="button" className="button small" data-testid="elicitation-decline" disabled={busy} title="Tell the server you will not give this" onClick={() => void respond('decline')}>
          Decline
        </button>
        <button type="button" className="button ghost small" data-testid="elicitation-cancel" disabled={busy} title="Dismiss the question without an answer" onClick={() => void respond('cancel')}>
          Cancel
        </button>
      </div>
    </form>
  );
}

interface FieldProps {
  /** Keeps the ids of two cards' fields apart. */
  idPrefix: string;
  field: ElicitationField;
  value: FieldValue | undefined;
  error: string | undefined;
  onChange: (value: FieldValue) => void;
}

function Field({ idPrefix, field, value, error, onChange }: FieldProps) {
  const label = field.title ?? field.name;
  const id = `elicitation-${idPrefix}-${field.name}`;
  const input = field.input;
  const text = typeof value === 'string' ? value : '';
  const common = { id, 'data-testid': `elicitation-field-${field.name}`, 'aria-invalid': error !== undefined, required: field.required };
  let control;
  switch (input.kind) {
    case 'text': {
      const type = input.format === 'email' ? 'email' : input.format === 'uri' ? 'url' : input.format === 'date' ? 'date' : 'text';
      control = (
        <input
          {...common}
          type={type}
          value={text}
          minLength={input.minLength}
          maxLength={input.maxLength}
          placeholder={input.format === 'date-time' ? '2026-01-31T09:30:00Z' : input.format === 'uri' ? 'https://' : undefined}
          onChange={(event) => onChange(event.target.value)}
        />
      );
      break;
    }
    case 'number':
      control = (
        <input {...common} type="number" step={input.integer ? 1 : 'any'} min={input.minimum} max={input.maximum} value={text} onChange={(event) => onChange(event.target.value)} />
      );
      break;
    case 'boolean':
      return (
        <div className="field elicitation-field">
          <label className="check">
            <input {...common} type="checkbox" checked={value === true} onChange={(event) => onChange(event.target.checked)} />
            <span className="field-label">{label}</span>
          </label>
          {field.description && <span className="field-help">{field.description}</span>}
          {error && <span className="field-error">{error}</span>}
        </div>
      );
    case 'choice':
      control = (
        <select {...common} value={text} onChange={(event) => onChange(event.target.value)}>
          <option value="">{field.required ? 'Choose…' : '—'}</option>
          {input.options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      );
      break;
    case 'multi_choice': {
      const chosen = Array.isArray(value) ? value : [];
      return (
        <fieldset className="field elicitation-field" data-testid={`elicitation-field-${field.name}`} aria-invalid={error !== undefined}>
          <legend className="field-label">
            {label}
            {field.required && <span aria-hidden="true"> *</span>}
          </legend>
          {input.options.map((option) => (
            <label key={option.value} className="check">
              <input
                type="checkbox"
                checked={chosen.includes(option.value)}
                onChange={(event) => onChange(event.target.checked ? [...chosen, option.value] : chosen.filter((v) => v !== option.value))}
              />
              <span>{option.label}</span>
            </label>
          ))}
          {field.description && <span className="field-help">{field.description}</span>}
          {error && <span className="field-error">{error}</span>}
        </fieldset>
      );
    }
  }
  return (
    <div className="field elicitation-field">
      <label className="field-label" htmlFor={id}>
        {label}
        {field.required && <span aria-hidden="true"> *</span>}
      </label>
      {control}
      {field.description && <span className="field-help">{field.description}</span>}
      {error && <span className="field-error">{error}</span>}
    </div>
  );
}
