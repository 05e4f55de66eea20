import type { ModelRef, Provider } from '../protocol.gen';

interface ModelPickerProps {
  providers: Provider[];
  /** The topic's own model; the first provider's default model is used when absent. */
  value: ModelRef | undefined;
  disabled?: boolean;
  onChange: (model: ModelRef) => void;
}

const DEFAULT = '';

/** Picks the model this topic's new turns go to. */
export function ModelPicker({ providers, value, disabled, onChange }: ModelPickerProps) {
  const options = providers.flatMap((provider) =>
    modelsOf(provider).map((model) => ({ key: keyOf({ providerId: provider.id, model }), provider, model })),
  );
  const current = value ? keyOf(value) : DEFAULT;
  const fallback = providers[0];
  const known = current === DEFAULT || options.some((option) => option.key === current);

  return (
    <label className="model-picker">
      <span className="visually-hidden">Model for this topic</span>
      <select
        data-testid="model-picker"
        value={current}
        disabled={disabled}
        onChange={(event) => {
          const option = options.find((o) => o.key === event.target.value);
          if (option) onChange({ providerId: option.provider.id, model: option.model });
        }}
      >
        {current === DEFAULT && fallback && (
          <option value={DEFAULT}>
            Default — {fallback.defaultModel} ({fallback.name})
          </option>
        )}
        {!known && value && <option value={current}>{value.model} (provider removed)</option>}
        {providers.map((provider) => (
          <optgroup key={provider.id} label={provider.name}>
            {modelsOf(provider).map((model) => (
              <option key={model} value={keyOf({ providerId: provider.id, model })}>
                {model}
              </option>
            ))}
          </optgroup>
        ))}
      </select>
    </label>
  );
}

function modelsOf(provider: Provider): string[] {
  return provider.models.includes(provider.defaultModel) ? provider.models : [provider.defaultModel, ...provider.models];
}

function keyOf(model: ModelRef): string {
  return JSON.stringify([model.providerId, model.model]);
}

/** The model a turn in this topic goes to: the topic's, else the first provider's default. */
export function effectiveModel(topicModel: ModelRef | undefined, providers: Provider[]): ModelRef | undefined {
  if (topicModel) return topicModel;
  const first = providers[0];
  return first ? { providerId: first.id, model: first.defaultModel } : undefined;
}
