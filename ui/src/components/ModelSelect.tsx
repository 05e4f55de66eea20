import type { ModelRef, Provider } from '../protocol.gen';
import { modelKey, modelOptions } from './ModelPicker';
import { usePopover } from './usePopover';

interface ModelSelectProps {
  providers: Provider[];
  /** The models the next message goes to; never empty while a provider exists. */
  value: ModelRef[];
  disabled?: boolean;
  onChange: (models: ModelRef[]) => void;
}

/** Picks which models answer the next message: one, or several side by side. */
export function ModelSelect({ providers, value, disabled, onChange }: ModelSelectProps) {
  const { open, setOpen, ref, panelRef } = usePopover<HTMLDivElement>({ side: 'above' });
  const options = modelOptions(providers);
  const chosen = new Set(value.map(modelKey));
  const summary = value.length === 0 ? 'No model' : value.map((model) => model.model).join(' + ');

  const toggle = (model: ModelRef) => {
    const key = modelKey(model);
    if (chosen.has(key)) {
      // At least one model answers every message.
      if (value.length > 1) onChange(value.filter((m) => modelKey(m) !== key));
    } else {
      onChange([...value, model]);
    }
  };

  return (
    <div className="model-select" data-testid="model-select" ref={ref}>
      <button
        type="button"
        className="button ghost small model-select-button"
        aria-haspopup="true"
        aria-expanded={open}
        disabled={disabled}
        title="Choose the models that answer your message; several answer side by side"
        onClick={() => setOpen(!open)}
      >
        <span className="model-select-summary">{summary}</span>
        {value.length > 1 && <span className="badge">{value.length} models</span>}
        <span aria-hidden="true">▾</span>
      </button>
      {open && (
        <fieldset className="popover-menu model-select-menu" ref={panelRef}>
          <legend>Models for this message</legend>
          {options.map((option) => {
            const checked = chosen.has(option.key);
            return (
              <label key={option.key} className="model-select-option">
                <input
                  type="checkbox"
                  checked={checked}
                  disabled={checked && value.length === 1}
                  data-provider-id={option.provider.id}
                  data-model={option.model}
                  onChange={() => toggle(option.ref)}
                />
                <span>{option.model}</span>
                <span className="muted small">{option.provider.name}</span>
              </label>
            );
          })}
        </fieldset>
      )}
    </div>
  );
}
