import { useEffect, useId, useState, type FormEvent } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type {
  ApiFormat,
  ListModelsRequest,
  Provider,
  ProviderInput,
  ProviderPresetInfo,
  UpdateProvider,
} from '../protocol.gen';
import { capabilitiesToSend, capabilityRows, toggleCapability, type CapabilityEdits } from '../settings/capabilities';
import { useBackend } from './BackendContext';
import { CapabilitiesEditor } from './CapabilitiesEditor';
import { useSecretStore } from './useSecretStore';

type Field = 'name' | 'baseUrl' | 'format' | 'apiKey' | 'model';

interface FormError {
  /** Where to show it; at the top of the form when absent. */
  field?: Field;
  message: string;
}

/** The wire formats a provider can speak, as the form offers them. */
export const API_FORMATS: readonly { value: ApiFormat; label: string }[] = [
  { value: 'openai_chat', label: 'OpenAI Chat Completions' },
  { value: 'openai_responses', label: 'OpenAI Responses' },
  { value: 'anthropic', label: 'Anthropic' },
  { value: 'gemini', label: 'Gemini' },
];

export function formatLabel(format: ApiFormat | undefined): string {
  return API_FORMATS.find((f) => f.value === (format ?? 'openai_chat'))?.label ?? String(format);
}

/** The "Service" choice that leaves every field to the user. */
const CUSTOM = 'custom';

const FORMAT_HELP: Record<ApiFormat, string> = {
  openai_chat: 'Any endpoint that speaks the OpenAI Chat Completions API, e.g. https://api.openai.com/v1.',
  openai_responses: 'An endpoint that speaks the OpenAI Responses API, e.g. https://api.openai.com/v1.',
  anthropic: 'The Anthropic Messages API, e.g. https://api.anthropic.com/v1.',
  gemini: 'The Gemini API, e.g. https://generativelanguage.googleapis.com/v1beta.',
};

interface ProviderFormProps {
  /** The provider being edited; a new one is created when absent. */
  provider?: Provider;
  onSaved: (provider: Provider) => void;
  onCancel?: () => void;
}

/**
 * Add or edit a provider. "Service" fills name, base URL and API format from a known
 * preset (`provider_presets`); "Custom" leaves them to the user. "Load models" asks the
 * endpoint (in its format) which models it has; a model name can also be typed.
 */
export function ProviderForm({ provider, onSaved, onCancel }: ProviderFormProps) {
  const backend = useBackend();
  const ids = useId();
  const [name, setName] = useState(provider?.name ?? '');
  const [baseUrl, setBaseUrl] = useState(provider?.baseUrl ?? '');
  const [format, setFormat] = useState<ApiFormat>(provider?.format ?? 'openai_chat');
  const [presets, setPresets] = useState<ProviderPresetInfo[]>([]);
  const [preset, setPreset] = useState<string>(CUSTOM);
  const [apiKey, setApiKey] = useState('');
  const [model, setModel] = useState(provider?.defaultModel ?? '');
  const [models, setModels] = useState<string[]>(provider?.models ?? []);
  const [loadingModels, setLoadingModels] = useState(false);
  const [modelsNote, setModelsNote] = useState<string>();
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<FormError>();
  const [capabilityEdits, setCapabilityEdits] = useState<CapabilityEdits>({});
  const secretStore = useSecretStore();
  const chosenModel = model.trim();
  const modelsToSave = chosenModel === '' || models.includes(chosenModel) ? models : [chosenModel, ...models];

  useEffect(() => {
    let cancelled = false;
    backend
      .call('provider_presets')
      .then((list) => {
        if (cancelled) return;
        // A preset without a base URL is the custom choice, offered separately.
        const known = list.filter((p) => p.baseUrl !== '');
        setPresets(known);
        if (provider) {
          const match = known.find((p) => p.baseUrl === provider.baseUrl && p.format === provider.format);
          if (match) setPreset(match.id);
        }
      })
      .catch(() => {
        // Without presets every field is still free to fill in.
      });
    return () => {
      cancelled = true;
    };
  }, [backend, provider]);

  const choosePreset = (id: string) => {
    setPreset(id);
    const chosen = presets.find((p) => p.id === id);
    if (!chosen) return;
    setName(chosen.name);
    setBaseUrl(chosen.baseUrl);
    setFormat(chosen.format);
    setError(undefined);
  };

  const show = (failure: ApiFailure) => setError({ field: fieldOf(failure.field), message: failure.message });

  const loadModels = async () => {
    if (!baseUrl.trim()) {
      setError({ field: 'baseUrl', message: 'Enter the base URL first, e.g. https://api.openai.com/v1.' });
      return;
    }
    setError(undefined);
    setModelsNote(undefined);
    setLoadingModels(true);
    try {
      const request: ListModelsRequest = { baseUrl: baseUrl.trim(), format };
      if (apiKey) request.apiKey = apiKey;
      else if (provider) request.providerId = provider.id;
      const list = await backend.call('provider_models', request);
      setModels(list.models);
      if (!model && list.models[0]) setModel(list.models[0]);
      setModelsNote(
        list.models.length === 0
          ? 'The endpoint lists no models. Type the model name instead.'
          : `Loaded ${list.models.length} model${list.models.length === 1 ? '' : 's'}. Pick one or type a name.`,
      );
    } catch (failure) {
      show(toApiFailure(failure, 'Could not load the models'));
    } finally {
      setLoadingModels(false);
    }
  };

  const save = async (event: FormEvent) => {
    event.preventDefault();
    const url = baseUrl.trim();
    const chosen = model.trim();
    if (!url) return setError({ field: 'baseUrl', message: 'Enter the base URL of the API.' });
    if (!chosen) return setError({ field: 'model', message: 'Choose or type the model to use.' });
    const input: ProviderInput = {
      name: name.trim() || hostOf(url),
      format,
      baseUrl: url,
      models: modelsToSave,
      defaultModel: chosen,
    };
    const capabilities = capabilitiesToSend(capabilityEdits, modelsToSave);
    if (capabilities) input.capabilities = capabilities;
    // A blank key field keeps the stored key when editing.
    if (apiKey) input.apiKey = apiKey;
    setError(undefined);
    setSaving(true);
    try {
      const saved = provider
        ? await backend.call('provider_update', { id: provider.id, provider: input } satisfies UpdateProvider)
        : await backend.call('provider_create', input);
      onSaved(saved);
    } catch (failure) {
      show(toApiFailure(failure, 'Could not save the provider'));
    } finally {
      setSaving(false);
    }
  };

  const fieldError = (field: Field) =>
    error?.field === field ? (
      <div className="field-error" data-testid="form-error" data-field={field} role="alert">
        {error.message}
      </div>
    ) : null;

  return (
    <form className="provider-form" onSubmit={save} noValidate>
      {error && !error.field && (
        <div className="form-error" data-testid="form-error" role="alert">
          {error.message}
        </div>
      )}
      <label className="field">
        <span className="field-label">Service</span>
        <select data-testid="provider-preset" value={preset} onChange={(e) => choosePreset(e.target.value)}>
          <option value={CUSTOM}>Custom (OpenAI-compatible)</option>
          {presets.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
        <span className="field-help">Fills in the name, base URL and API format; every field stays editable.</span>
      </label>
      <label className="field">
        <span className="field-label">Name</span>
        <input
          data-testid="provider-name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          placeholder="e.g. OpenAI, Ollama, OpenRouter"
          autoComplete="off"
        />
        {fieldError('name')}
      </label>
      <label className="field">
        <span className="field-label">Base URL</span>
        <input
          data-testid="provider-base-url"
          value={baseUrl}
          onChange={(e) => setBaseUrl(e.target.value)}
          placeholder="https://api.openai.com/v1"
          inputMode="url"
          autoComplete="off"
          spellCheck={false}
        />
        <span className="field-help">{FORMAT_HELP[format]}</span>
        {fieldError('baseUrl')}
      </label>
      <label className="field">
        <span className="field-label">API format</span>
        <select data-testid="provider-format" value={format} onChange={(e) => setFormat(e.target.value as ApiFormat)}>
          {API_FORMATS.map((f) => (
            <option key={f.value} value={f.value}>
              {f.label}
            </option>
          ))}
        </select>
        {fieldError('format')}
      </label>
      <label className="field">
        <span className="field-label">API key</span>
        <input
          data-testid="provider-api-key"
          type="password"
          value={apiKey}
          onChange={(e) => setApiKey(e.target.value)}
          placeholder={provider?.hasApiKey ? 'Stored key is kept — type to replace it' : 'Leave empty if the endpoint needs none'}
          autoComplete="off"
        />
        {secretStore && <span className="field-help">Keys are stored in {secretStore}.</span>}
        {fieldError('apiKey')}
      </label>
      <div className="field">
        <label className="field-label" htmlFor={`${ids}-model`}>
          Model
        </label>
        <div className="field-row">
          <input
            id={`${ids}-model`}
            data-testid="provider-model"
            value={model}
            onChange={(e) => setModel(e.target.value)}
            list={`${ids}-models`}
            placeholder="Type a model or load the list"
            autoComplete="off"
            spellCheck={false}
          />
          <datalist id={`${ids}-models`}>
            {models.map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
          <button type="button" className="button" data-testid="provider-load-models" onClick={loadModels} disabled={loadingModels}>
            {loadingModels ? 'Loading…' : 'Load models'}
          </button>
        </div>
        {modelsNote && <span className="field-help">{modelsNote}</span>}
        {fieldError('model')}
      </div>
      <CapabilitiesEditor
        rows={capabilityRows(modelsToSave, provider?.capabilities, capabilityEdits)}
        onToggle={(row, capability) => setCapabilityEdits(toggleCapability(capabilityEdits, row, capability))}
      />
      <div className="form-actions">
        {onCancel && (
          <button type="button" className="button ghost" onClick={onCancel}>
            Cancel
          </button>
        )}
        <button type="submit" className="button primary" data-testid="provider-save" disabled={saving}>
          {saving ? 'Saving…' : provider ? 'Save changes' : 'Save provider'}
        </button>
      </div>
    </form>
  );
}

/** Maps an ApiError's dotted `field` (camelCase or snake_case) onto a form field. */
function fieldOf(field: string | undefined): Field | undefined {
  if (!field) return undefined;
  const last = (field.split('.').pop() ?? '').replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  switch (last) {
    case 'name':
      return 'name';
    case 'baseUrl':
      return 'baseUrl';
    case 'apiKey':
      return 'apiKey';
    case 'format':
      return 'format';
    case 'model':
    case 'models':
    case 'defaultModel':
      return 'model';
    default:
      return undefined;
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}
