import { useEffect, useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { Assistant, IdRequest, Provider } from '../protocol.gen';
import { AssistantForm } from './AssistantForm';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';

interface AssistantsSettingsProps {
  providers: Provider[];
  onAssistantsChanged: () => void;
}

type Editing = { kind: 'none' } | { kind: 'add' } | { kind: 'edit'; id: string };

/** Assistants: named instructions with their models, tools and folder, picked per topic. */
export function AssistantsSettings({ providers, onAssistantsChanged }: AssistantsSettingsProps) {
  const backend = useBackend();
  const [assistants, setAssistants] = useState<Assistant[]>();
  const [editing, setEditing] = useState<Editing>({ kind: 'none' });
  const [confirmDelete, setConfirmDelete] = useState<string>();
  const [error, setError] = useState<ApiFailure>();

  const [version, setVersion] = useState(0);

  useEffect(() => {
    let current = true;
    backend
      .call('assistants_list')
      .then((list) => {
        if (current) setAssistants(list);
      })
      .catch((failure: unknown) => {
        if (current) setError(toApiFailure(failure, 'Could not list the assistants'));
      });
    return () => {
      current = false;
    };
  }, [backend, version]);

  const changed = () => {
    setEditing({ kind: 'none' });
    setVersion((n) => n + 1);
    onAssistantsChanged();
  };

  const remove = async (id: string) => {
    setError(undefined);
    try {
      await backend.call('assistant_delete', { id } satisfies IdRequest);
      setConfirmDelete(undefined);
      changed();
    } catch (failure) {
      setError(toApiFailure(failure, 'Could not delete the assistant'));
    }
  };

  const modelNames = (assistant: Assistant) =>
    assistant.models.length === 0 ? "the topic's model" : assistant.models.map((model) => model.model).join(' + ');

  return (
    <>
      <h3>Assistants</h3>
      <p className="muted small">An assistant is picked per topic (in its Topic settings): its instructions, models and tools apply there.</p>
      {error && <ErrorNotice error={error} onDismiss={() => setError(undefined)} />}
      {assistants && assistants.length === 0 && <p className="muted">No assistants yet.</p>}
      <ul className="settings-list">
        {assistants?.map((assistant) =>
          editing.kind === 'edit' && editing.id === assistant.id ? (
            <li key={assistant.id} className="settings-item editing">
              <AssistantForm assistant={assistant} providers={providers} onSaved={changed} onCancel={() => setEditing({ kind: 'none' })} />
            </li>
          ) : (
            <li key={assistant.id} className="settings-item" data-testid="assistant-item" data-assistant-id={assistant.id}>
              <div className="settings-item-main">
                <div className="settings-item-title">{assistant.name}</div>
                <p className="small muted">
                  {modelNames(assistant)} · {assistant.tools === undefined ? 'all enabled tools' : `${assistant.tools.length} tools`} · up
                  to {assistant.maxToolCalls} tool calls
                  {assistant.workspace ? ` · ${assistant.workspace}` : ''}
                </p>
              </div>
              {confirmDelete === assistant.id ? (
                <div className="provider-actions">
                  <span className="small">Delete this assistant?</span>
                  <button type="button" className="button danger small" onClick={() => void remove(assistant.id)}>
                    Delete
                  </button>
                  <button type="button" className="button ghost small" onClick={() => setConfirmDelete(undefined)}>
                    Cancel
                  </button>
                </div>
              ) : (
                <div className="provider-actions">
                  <button type="button" className="button small" data-testid="assistant-edit" onClick={() => setEditing({ kind: 'edit', id: assistant.id })}>
                    Edit
                  </button>
                  <button type="button" className="button ghost small" data-testid="assistant-delete" onClick={() => setConfirmDelete(assistant.id)}>
                    Delete
                  </button>
                </div>
              )}
            </li>
          ),
        )}
      </ul>
      {editing.kind === 'add' ? (
        <div className="card">
          <h3>Add an assistant</h3>
          <AssistantForm providers={providers} onSaved={changed} onCancel={() => setEditing({ kind: 'none' })} />
        </div>
      ) : (
        <button type="button" className="button primary" data-testid="assistant-add" onClick={() => setEditing({ kind: 'add' })}>
          Add assistant
        </button>
      )}
    </>
  );
}
