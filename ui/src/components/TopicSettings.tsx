import { useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { Assistant, Topic, UpdateTopic } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';
import { FolderField } from './FolderField';
import { usePopover } from './usePopover';

interface TopicSettingsProps {
  topic: Topic;
  assistants: Assistant[];
  onTopicChanged: (topic: Topic) => void;
}

/**
 * The chat header's topic settings: which assistant answers here, and the workspace
 * folder its file tools work in. Errors (a folder that does not exist, …) show next to
 * the field they are about.
 */
export function TopicSettings({ topic, assistants, onTopicChanged }: TopicSettingsProps) {
  const backend = useBackend();
  const { open, setOpen, ref } = usePopover<HTMLDivElement>();
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
        title="Assistant and workspace folder of this topic"
        onClick={() => setOpen(!open)}
      >
        Topic settings
      </button>
      {open && (
        <div className="popover-menu topic-settings-panel" role="dialog" aria-label="Topic settings" data-testid="topic-settings">
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
        </div>
      )}
    </div>
  );
}

/** The last folder name of a path, for a compact label. */
export function folderName(path: string): string {
  const trimmed = path.replace(/[/\\]+$/, '');
  return trimmed.split(/[/\\]/).pop() || path;
}
