import { useEffect, useState, type FormEvent } from 'react';
import { toApiFailure } from '../backend/backend';
import type { Assistant, FeatureInfo, ModelRef, Provider, ToolInfo, UpdateAssistant } from '../protocol.gen';
import { ASSISTANT_FIELDS, assistantInputFromDraft, draftFromAssistant, draftWithoutDefaults, type AssistantDraft } from '../settings/assistantForm';
import { fieldErrorsFrom, NO_ERRORS, type FieldErrors } from '../settings/fieldErrors';
import { useBackend } from './BackendContext';
import { FolderField } from './FolderField';
import { ModelParamsFields } from './ModelParamsFields';
import { modelKey, modelOptions } from './ModelPicker';

interface AssistantFormProps {
  assistant?: Assistant;
  providers: Provider[];
  onSaved: (assistant: Assistant) => void;
  onCancel: () => void;
}

/** An assistant: its name, instructions, models, tools, tool-call allowance and workspace folder. */
export function AssistantForm({ assistant, providers, onSaved, onCancel }: AssistantFormProps) {
  const backend = useBackend();
  const [draft, setDraft] = useState<AssistantDraft>(() => draftFromAssistant(assistant));
  const [errors, setErrors] = useState<FieldErrors>(NO_ERRORS);
  const [saving, setSaving] = useState(false);
  const [tools, setTools] = useState<ToolInfo[]>([]);
  /** The reply strategies the backend knows; `undefined` while loading, `null` if they could not be read. */
  const [strategies, setStrategies] = useState<FeatureInfo[] | null | undefined>(undefined);
  const change = (patch: Partial<AssistantDraft>) => setDraft({ ...draft, ...patch });

  useEffect(() => {
    let current = true;
    backend
      .call('tools_list')
      .then((list) => {
        if (current) setTools(list);
      })
      .catch(() => {
        // The checklist stays empty; "all enabled tools" still works.
      });
    backend
      .call('assistant_features_list')
      .then((list) => {
        if (current) setStrategies(list);
      })
      .catch(() => {
        if (current) setStrategies(null);
      });
    return () => {
      current = false;
    };
  }, [backend]);

  const chosen = new Set(draft.models.map(modelKey));
  const toggleModel = (model: ModelRef) =>
    change({ models: chosen.has(modelKey(model)) ? draft.models.filter((m) => modelKey(m) !== modelKey(model)) : [...draft.models, model] });
  const toggleTool = (name: string) =>
    change({ tools: draft.tools.includes(name) ? draft.tools.filter((tool) => tool !== name) : [...draft.tools, name] });
  const toggleFeature = (name: string) =>
    change({ features: draft.features.includes(name) ? draft.features.filter((feature) => feature !== name) : [...draft.features, name] });

  const save = async (event: FormEvent) => {
    event.preventDefault();
    const checked = assistantInputFromDraft(draft);
    if ('errors' in checked) {
      setErrors(checked.errors);
      return;
    }
    setErrors(NO_ERRORS);
    setSaving(true);
    try {
      const saved = assistant
        ? await backend.call('assistant_update', { id: assistant.id, assistant: checked.input } satisfies UpdateAssistant)
        : await backend.call('assistant_create', checked.input);
      onSaved(saved);
    } catch (failure) {
      setErrors(fieldErrorsFrom(toApiFailure(failure, 'Could not save the assistant'), ASSISTANT_FIELDS));
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
    <form className="assistant-form" data-testid="assistant-form" onSubmit={save} noValidate>
      {errors[''] && (
        <div className="form-error" data-testid="form-error" role="alert">
          {errors['']}
        </div>
      )}
      <label className="field">
        <span className="field-label">Name</span>
        <input data-testid="assistant-name" value={draft.name} onChange={(event) => change({ name: event.target.value })} placeholder="e.g. Code reviewer" />
        {errorAt('name')}
      </label>
      <label className="field">
        <span className="field-label">Instructions (system prompt)</span>
        <textarea
          data-testid="assistant-prompt"
          value={draft.systemPrompt}
          rows={5}
          onChange={(event) => change({ systemPrompt: event.target.value })}
          placeholder="How this assistant should answer"
        />
        {errorAt('systemPrompt')}
      </label>
      <fieldset className="field">
        <legend className="field-label">Models</legend>
        <span className="field-help">None: the model picked in the topic. Several answer side by side.</span>
        <div className="checklist">
          {modelOptions(providers).map((option) => (
            <label key={option.key} className="check">
              <input
                type="checkbox"
                data-testid="assistant-model"
                data-model={option.model}
                data-provider-id={option.provider.id}
                checked={chosen.has(option.key)}
                onChange={() => toggleModel(option.ref)}
              />
              <span>{option.model}</span>
              <span className="muted small">{option.provider.name}</span>
            </label>
          ))}
        </div>
        {errorAt('models')}
      </fieldset>
      <fieldset className="field">
        <legend className="field-label">Tools</legend>
        <label className="check">
          <input type="radio" name="tool-choice" data-testid="assistant-tools-all" checked={draft.toolChoice === 'all'} onChange={() => change({ toolChoice: 'all' })} />
          <span>All enabled tools (also ones added later)</span>
        </label>
        <label className="check">
          <input type="radio" name="tool-choice" data-testid="assistant-tools-some" checked={draft.toolChoice === 'some'} onChange={() => change({ toolChoice: 'some' })} />
          <span>Only these:</span>
        </label>
        {draft.toolChoice === 'some' && (
          <div className="checklist">
            {tools.map((tool) => (
              <label key={tool.name} className="check">
                <input
                  type="checkbox"
                  data-testid="assistant-tool"
                  data-tool={tool.name}
                  checked={draft.tools.includes(tool.name)}
                  onChange={() => toggleTool(tool.name)}
                />
                <code>{tool.name}</code>
                {!tool.enabled && <span className="muted small">switched off in Tools</span>}
              </label>
            ))}
            {draft.tools.length === 0 && <span className="field-help">No tool: this assistant only chats.</span>}
          </div>
        )}
        {errorAt('tools')}
      </fieldset>
      <label className="field">
        <span className="field-label">Tool calls per reply</span>
        <input
          data-testid="assistant-max-tool-calls"
          type="number"
          min={1}
          max={100}
          value={draft.maxToolCalls}
          onChange={(event) => change({ maxToolCalls: event.target.value })}
        />
        <span className="field-help">After this many calls the reply asks whether to go on (1–100).</span>
        {errorAt('maxToolCalls')}
      </label>
      <div className="field">
        <span className="field-label">Workspace folder</span>
        <FolderField
          value={draft.workspace}
          testId="assistant-workspace"
          dialogTitle="Choose the assistant's workspace folder"
          error={errors.workspace}
          onChoose={(path) => change({ workspace: path })}
          onClear={() => change({ workspace: '' })}
        />
        <span className="field-help">For topics that have no folder of their own. Optional.</span>
      </div>
      <details className="field" data-testid="assistant-params" open={Object.keys(errors).some((field) => field.startsWith('params.'))}>
        <summary className="field-label">Model settings</summary>
        <span className="field-help">For this assistant's topics; a topic's own settings win. Empty: the model's default.</span>
        <ModelParamsFields draft={draft.params} errors={errors} testIdPrefix="assistant-param" onChange={(params) => change({ params })} />
      </details>
      <details className="field" data-testid="assistant-strategies" open={draft.featureChoice === 'some' || errors.features !== undefined}>
        <summary className="field-label">Advanced: reply strategies</summary>
        <label className="check">
          <input
            type="checkbox"
            data-testid="assistant-strategies-defaults"
            checked={draft.featureChoice === 'defaults'}
            onChange={(event) =>
              setDraft(event.target.checked ? { ...draft, featureChoice: 'defaults' } : draftWithoutDefaults(draft, strategies ?? [], assistant))
            }
          />
          <span>Use defaults</span>
        </label>
        {draft.featureChoice === 'some' && (
          <div className="checklist">
            {strategies === undefined && <span className="field-help">Loading the strategies…</span>}
            {strategies === null && (
              <span className="field-help" role="alert">
                Could not read the reply strategies; use the defaults or try again later.
              </span>
            )}
            {(strategies ?? []).map((strategy) => (
              <label key={strategy.name} className="check">
                <input
                  type="checkbox"
                  data-testid="assistant-strategy"
                  data-strategy={strategy.name}
                  checked={draft.features.includes(strategy.name)}
                  onChange={() => toggleFeature(strategy.name)}
                />
                <code>{strategy.name}</code>
                <span className="muted small">{strategy.description}</span>
              </label>
            ))}
            {strategies && draft.features.length === 0 && <span className="field-help">None: one model call per reply; tool calls are answered but not followed up.</span>}
          </div>
        )}
        {errorAt('features')}
      </details>
      <div className="form-actions">
        <button type="button" className="button ghost" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="button primary" data-testid="assistant-save" disabled={saving}>
          {saving ? 'Saving…' : assistant ? 'Save assistant' : 'Add assistant'}
        </button>
      </div>
    </form>
  );
}
