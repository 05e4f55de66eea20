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
  const options = modelOptions(providers);
  const current = value ? modelKey(value) : DEFAULT;
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
          if (option) onChange(option.ref);
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
              <option key={model} value={modelKey({ providerId: provider.id, model })}>
                {model}
              </option>
            ))}
          </optgroup>
        ))}
      </select>
    </label>
  );
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

/** A stable string for a model of a provider (two providers may offer the same model). */
export function modelKey(model: ModelRef): string {
  return JSON.stringify([model.providerId, model.model]);
}

/** The model a turn in this topic goes to: the topic's, else the first provider's default. */
export function effectiveModel(topicModel: ModelRef | undefined, providers: Provider[]): ModelRef | undefined {
  if (topicModel) return topicModel;
  const first = providers[0];
  return first ? { providerId: first.id, model: first.defaultModel } : undefined;
}
