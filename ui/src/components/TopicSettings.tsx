import { useState, type FormEvent } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { Assistant, Topic, UpdateTopic } from '../protocol.gen';
import { fieldErrorsFrom, NO_ERRORS, type FieldErrors } from '../settings/fieldErrors';
import { describeParams, draftFromParams, MODEL_PARAMS_FIELDS, paramsFromDraft, type ModelParamsDraft } from '../settings/modelParams';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';
import { FolderField } from './FolderField';
import { ModelParamsFields } from './ModelParamsFields';
import { usePopover } from './usePopover';

interface TopicSettingsProps {
  topic: Topic;
  assistants: Assistant[];
  onTopicChanged: (topic: Topic) => void;
}

/**
 * The chat header's topic settings: which assistant answers here, the workspace folder
 * its file tools work in, and its own instructions and model settings. Errors (a folder
 * that does not exist, …) show next to the field they are about.
 */
export function TopicSettings({ topic, assistants, onTopicChanged }: TopicSettingsProps) {
  const backend = useBackend();
  const { open, setOpen, ref, panelRef } = usePopover<HTMLDivElement>({ align: 'end' });
  const [saving, setSaving] = useState(false);
  const [failure, setFailure] = useState<ApiFailure>();
  const assistant = assistants.find((candidate) => candidate.id === topic.assistantId);
  const inherited = !topic.workspace && assistant?.workspace ? assistant.workspace : undefined;

  const update = async (change: Omit<UpdateTopic, 'id'>) => {
    setSaving(true);
    setFailure(undefined);
    try {
      onTopicChanged(await backend.call('topic_update', { id: topic.id, ...change } satisfies UpdateTopic));
    } catch (error) {
      setFailure(toApiFailure(error, 'Could not change the topic'));
    } finally {
      setSaving(false);
    }
  };
  const errorOf = (field: string) => (failure?.field === field ? failure.message.replace(`${field}: `, '') : undefined);

  return (
    <div className="topic-settings" ref={ref}>
      <button
        type="button"
        className="button ghost small"
        data-testid="topic-settings-button"
        aria-haspopup="dialog"
        aria-expanded={open}
        title="Assistant, workspace folder, instructions and model settings of this topic"
        onClick={() => setOpen(!open)}
      >
        Topic settings
      </button>
      {open && (
        <div className="popover-menu topic-settings-panel" role="dialog" aria-label="Topic settings" data-testid="topic-settings" ref={panelRef}>
          <label className="field">
            <span className="field-label">Assistant</span>
            <select
              data-testid="topic-assistant"
              value={topic.assistantId ?? ''}
              disabled={saving}
              onChange={(event) => void update({ assistantId: event.target.value })}
            >
              <option value="">None — the models you pick</option>
              {topic.assistantId && !assistant && <option value={topic.assistantId}>(deleted assistant)</option>}
              {assistants.map((candidate) => (
                <option key={candidate.id} value={candidate.id}>
                  {candidate.name}
                </option>
              ))}
            </select>
            <span className="field-help">Its instructions, models and tools apply to new messages here.</span>
            {errorOf('assistantId') && (
              <div className="field-error" data-testid="form-error" data-field="assistantId" role="alert">
                {errorOf('assistantId')}
              </div>
            )}
          </label>
          <div className="field">
            <span className="field-label">Workspace folder</span>
            <FolderField
              value={topic.workspace ?? ''}
              testId="topic-workspace"
              confirmLabel="Use folder"
              dialogTitle="Choose the workspace folder for this topic"
              busy={saving}
              error={errorOf('workspace')}
              onChoose={(path) => void update({ workspace: path })}
              onClear={() => void update({ workspace: '' })}
            />
            <span className="field-help">
              {inherited
                ? `Using the assistant's folder ${inherited} unless you set one here.`
                : 'File tools (read, list, search, write, edit) work only inside this folder; without one they are not offered.'}
            </span>
          </div>
          {failure && !errorOf('workspace') && !errorOf('assistantId') && (
            <ErrorNotice error={failure} onDismiss={() => setFailure(undefined)} />
          )}
          <TopicModelSettings topic={topic} assistant={assistant} onTopicChanged={onTopicChanged} />
        </div>
      )}
    </div>
  );
}

const PROMPT_AND_PARAMS_FIELDS = ['systemPrompt', ...MODEL_PARAMS_FIELDS];

/**
 * The topic's own system prompt and model settings, saved together (a prompt is typed,
 * so it is not saved on every key).
 */
function TopicModelSettings({ topic, assistant, onTopicChanged }: { topic: Topic; assistant: Assistant | undefined; onTopicChanged: (topic: Topic) => void }) {
  const backend = useBackend();
  const [prompt, setPrompt] = useState(topic.systemPrompt ?? '');
  const [params, setParams] = useState<ModelParamsDraft>(() => draftFromParams(topic.params));
  const [errors, setErrors] = useState<FieldErrors>(NO_ERRORS);
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState(false);
  const inherited = describeParams(assistant?.params);

  const save = async (event: FormEvent) => {
    event.preventDefault();
    const checked = paramsFromDraft(params);
    if ('errors' in checked) {
      setErrors(checked.errors);
      return;
    }
    setErrors(NO_ERRORS);
    setSaving(true);
    setSaved(false);
    try {
      const changed = await backend.call('topic_update', { id: topic.id, systemPrompt: prompt, params: checked.params } satisfies UpdateTopic);
      onTopicChanged(changed);
      setSaved(true);
    } catch (error) {
      setErrors(fieldErrorsFrom(toApiFailure(error, 'Could not save the model settings'), PROMPT_AND_PARAMS_FIELDS));
    } finally {
      setSaving(false);
    }
  };

  return (
    <form className="topic-model-settings" data-testid="topic-model-settings" onSubmit={save} noValidate>
      <label className="field">
        <span className="field-label">Instructions (system prompt)</span>
        <textarea
          data-testid="topic-system-prompt"
          rows={3}
          value={prompt}
          disabled={saving}
          placeholder="How the model should answer in this topic"
          onChange={(event) => {
            setPrompt(event.target.value);
            setSaved(false);
          }}
        />
        <span className="field-help">
          {assistant?.systemPrompt.trim() ? `Added after the instructions of ${assistant.name}.` : 'Sent with every message in this topic.'}
        </span>
        {errors.systemPrompt && (
          <div className="field-error" data-testid="form-error" data-field="systemPrompt" role="alert">
            {errors.systemPrompt}
          </div>
        )}
      </label>
      <details className="field" open={Object.keys(errors).some((field) => field.startsWith('params.')) || describeParams(topic.params) !== ''}>
        <summary className="field-label">Model settings</summary>
        {inherited && <span className="field-help">{`${assistant?.name ?? 'The assistant'} sets ${inherited}; what you set here wins.`}</span>}
        <ModelParamsFields
          draft={params}
          errors={errors}
          disabled={saving}
          testIdPrefix="topic-param"
          onChange={(draft) => {
            setParams(draft);
            setSaved(false);
          }}
        />
      </details>
      {errors[''] && (
        <div className="form-error" data-testid="form-error" role="alert">
          {errors['']}
        </div>
      )}
      <div className="form-actions">
        {saved && (
          <span className="muted small" role="status" data-testid="topic-model-settings-saved">
            Saved
          </span>
        )}
        <button type="submit" className="button primary small" data-testid="topic-model-settings-save" disabled={saving}>
          {saving ? 'Saving…' : 'Save instructions and settings'}
        </button>
      </div>
    </form>
  );
}

/** The last folder name of a path, for a compact label. */
export function folderName(path: string): string {
  const trimmed = path.replace(/[/\\]+$/, '');
  return trimmed.split(/[/\\]/).pop() || path;
}
