import { modelKey, type TurnModels } from '../chat/turnModels';
import type { ModelRef, Provider } from '../protocol.gen';
import { usePopover } from './usePopover';

interface ModelPickerProps {
  providers: Provider[];
  /** The models of the next message, where they come from, and the topic's standing choice. */
  turn: TurnModels;
  /** The topic's assistant, when it chooses the models. */
  assistantName?: string | undefined;
  disabled?: boolean | undefined;
  onChange: (models: ModelRef[]) => void;
}

/**
 * The one place that says (and picks) which models answer the next message: one, or
 * several side by side. Clicking a model asks it alone; ticking boxes adds more. What it
 * shows is what the composer sends.
 */
export function ModelPicker({ providers, turn, assistantName, disabled, onChange }: ModelPickerProps) {
  const { open, setOpen, ref, panelRef } = usePopover<HTMLDivElement>({ side: 'above' });
  const value = turn.models;
  const options = modelOptions(providers);
  const chosen = new Set(value.map(modelKey));
  const missing = value.filter((model) => !options.some((option) => option.key === modelKey(model)));
  const name = (model: ModelRef) => (missing.includes(model) ? `${model.model} (provider removed)` : model.model);
  const summary = value.length === 0 ? 'No model' : value.map(name).join(' + ');

  const only = (model: ModelRef) => {
    setOpen(false);
    // Even the model already shown: picking the first provider's default keeps it as the topic's.
    onChange([model]);
  };
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
    <div className="model-select" data-testid="model-select" data-source={turn.source} ref={ref}>
      <button
        type="button"
        className="button ghost small model-select-button"
        data-testid="model-select-button"
        aria-haspopup="true"
        aria-expanded={open}
        disabled={disabled}
        title={`Your next message goes to ${summary}. Click to choose another model, or several to answer side by side.`}
        onClick={() => setOpen(!open)}
      >
        <span className="visually-hidden">Models for your next message: </span>
        <span className="model-select-summary">{summary}</span>
        {value.length > 1 && <span className="badge">{value.length} models</span>}
        <span aria-hidden="true">▾</span>
      </button>
      {open && (
        <fieldset className="popover-menu model-select-menu" ref={panelRef}>
          <legend>Models for your next message</legend>
          {options.map((option) => {
            const checked = chosen.has(option.key);
            return (
              <div key={option.key} className={`model-select-option${checked ? ' chosen' : ''}`}>
                <input
                  type="checkbox"
                  checked={checked}
                  disabled={checked && value.length === 1}
                  aria-label={checked ? `${option.model} answers (untick to leave it out)` : `Also ask ${option.model}`}
                  title={checked ? 'Answers your next message' : 'Also ask this model, side by side'}
                  data-provider-id={option.provider.id}
                  data-model={option.model}
                  onChange={() => toggle(option.ref)}
                />
                <button
                  type="button"
                  className="model-select-only"
                  data-testid="model-option"
                  data-provider-id={option.provider.id}
                  data-model={option.model}
                  title={`Ask only ${option.model}`}
                  onClick={() => only(option.ref)}
                >
                  <span>{option.model}</span>
                  <span className="muted small">{option.provider.name}</span>
                </button>
              </div>
            );
          })}
          <p className="model-select-note muted small" data-testid="model-select-note">
            {sourceNote(turn, assistantName)}
          </p>
        </fieldset>
      )}
    </div>
  );
}

/** Where the models come from and who else uses them, in words. */
function sourceNote(turn: TurnModels, assistantName: string | undefined): string {
  const standing = turn.standing.map((model) => model.model).join(' + ');
  switch (turn.source) {
    case 'picked':
      return `Picked for messages you send from this window. Queued messages and other windows use ${
        turn.standingSource === 'assistant' ? `the assistant's choice (${standing})` : `the topic's model (${standing})`
      }.`;
    case 'assistant':
      return `Chosen by ${assistantName ? `the assistant ${assistantName}` : "the topic's assistant"}. A model picked here answers the messages you send from this window.`;
    case 'topic':
      return "This topic's model. Tick more models to ask several side by side.";
    case 'default':
      return "The first provider's default model. A model you pick is kept as this topic's model.";
  }
}

/** Every model a provider offers, its default first if it is not listed. */
function modelsOf(provider: Provider): string[] {
  return provider.models.includes(provider.defaultModel) ? provider.models : [provider.defaultModel, ...provider.models];
}

export interface ModelOption {
  key: string;
  ref: ModelRef;
  provider: Provider;
  model: string;
}

/** Every model of every provider, in the providers' order. */
export function modelOptions(providers: Provider[]): ModelOption[] {
  return providers.flatMap((provider) =>
    modelsOf(provider).map((model) => {
      const ref = { providerId: provider.id, model };
      return { key: modelKey(ref), ref, provider, model };
    }),
  );
}
