import { useEffect, useState, type FormEvent } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { AcpAgent, AcpAgentInput } from '../protocol.gen';
import { ACP_FIELDS, acpInputFromDraft, commandLine, draftFromAgent, type AcpDraft } from '../settings/acpForm';
import { fieldErrorsFrom, NO_ERRORS, type FieldErrors } from '../settings/fieldErrors';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';
import { KeyValueRows } from './KeyValueRows';

type Editing = { kind: 'none' } | { kind: 'add'; from?: AcpAgentInput } | { kind: 'edit'; agent: AcpAgent };

/**
 * Coding agents Colloquy talks to over the Agent Client Protocol: each is a program with
 * its arguments and variables; sessions pick one. Presets fill the form to edit.
 */
export function AcpAgentsSettings() {
  const backend = useBackend();
  const [agents, setAgents] = useState<AcpAgent[]>();
  const [presets, setPresets] = useState<AcpAgentInput[]>([]);
  const [error, setError] = useState<ApiFailure>();
  const [editing, setEditing] = useState<Editing>({ kind: 'none' });

  const load = () =>
    backend
      .call('acp_agents_list')
      .then(setAgents)
      .catch((failure: unknown) => setError(toApiFailure(failure, 'Could not list the agents')));

  useEffect(() => {
    void load();
    backend
      .call('acp_agent_presets')
      .then(setPresets)
      .catch(() => setPresets([]));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [backend]);

  const remove = async (agent: AcpAgent) => {
    try {
      await backend.call('acp_agent_delete', { id: agent.id });
      setError(undefined);
      await load();
    } catch (failure) {
      setError(toApiFailure(failure, `Could not delete ${agent.name}`));
    }
  };

  if (editing.kind !== 'none') {
    const agent = editing.kind === 'edit' ? editing.agent : undefined;
    return (
      <AcpAgentForm
        initial={draftFromAgent(agent ?? (editing.kind === 'add' ? editing.from : undefined))}
        agent={agent}
        onSaved={() => {
          setEditing({ kind: 'none' });
          void load();
        }}
        onCancel={() => setEditing({ kind: 'none' })}
      />
    );
  }

  return (
    <div className="card" data-testid="acp-agents">
      <h3>Coding agents (ACP)</h3>
      <p className="muted small">
        Any coding agent that speaks the Agent Client Protocol: Colloquy starts it in a session&apos;s folder, serves its file
        reads and writes there, and shows its permission requests as approval cards.
      </p>
      {error && <ErrorNotice error={error} />}
      {agents === undefined ? (
        <p className="muted">Loading…</p>
      ) : agents.length === 0 ? (
        <p className="muted" data-testid="acp-empty">
          No agents yet. Start from a preset below.
        </p>
      ) : (
        <ul className="acp-agent-list">
          {agents.map((agent) => (
            <li key={agent.id} data-testid="acp-agent" data-name={agent.name}>
              <strong>{agent.name}</strong> <code className="small">{commandLine(agent)}</code>
              {agent.variables.some((v) => v.secret && !v.set) && (
                <span className="field-error"> A secret variable has no value: edit it.</span>
              )}
              <span className="form-actions">
                <button type="button" className="button small" data-testid="acp-edit" onClick={() => setEditing({ kind: 'edit', agent })}>
                  Edit
                </button>
                <button type="button" className="button ghost small" data-testid="acp-delete" onClick={() => void remove(agent)}>
                  Delete
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      <div className="form-actions">
        {presets.map((preset) => (
          <button
            key={preset.name}
            type="button"
            className="button small"
            data-testid="acp-preset"
            title={commandLine(preset)}
            onClick={() => setEditing({ kind: 'add', from: preset })}
          >
            + {preset.name}
          </button>
        ))}
        <button type="button" className="button primary small" data-testid="acp-add" onClick={() => setEditing({ kind: 'add' })}>
          Add an agent
        </button>
      </div>
    </div>
  );
}

interface AcpAgentFormProps {
  initial: AcpDraft;
  agent?: AcpAgent;
  onSaved: () => void;
  onCancel: () => void;
}

function AcpAgentForm({ initial, agent, onSaved, onCancel }: AcpAgentFormProps) {
  const backend = useBackend();
  const [draft, setDraft] = useState(initial);
  const [errors, setErrors] = useState<FieldErrors>(NO_ERRORS);
  const [saving, setSaving] = useState(false);
  const change = (patch: Partial<AcpDraft>) => setDraft({ ...draft, ...patch });

  const save = async (event: FormEvent) => {
    event.preventDefault();
    const checked = acpInputFromDraft(draft);
    if ('errors' in checked) {
      setErrors(checked.errors);
      return;
    }
    setSaving(true);
    try {
      if (agent) await backend.call('acp_agent_update', { id: agent.id, agent: checked.input });
      else await backend.call('acp_agent_create', checked.input);
      onSaved();
    } catch (failure) {
      setErrors(fieldErrorsFrom(toApiFailure(failure, 'Could not save the agent'), ACP_FIELDS));
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
    <div className="card">
      <h3>{agent ? `Edit ${agent.name}` : 'New coding agent'}</h3>
      <form className="assistant-form" data-testid="acp-form" onSubmit={save} noValidate>
        {errors[''] && (
          <div className="form-error" data-testid="form-error" role="alert">
            {errors['']}
          </div>
        )}
        <label className="field">
          <span className="field-label">Name</span>
          <input data-testid="acp-name" value={draft.name} onChange={(event) => change({ name: event.target.value })} />
          {errorAt('name')}
        </label>
        <label className="field">
          <span className="field-label">Command</span>
          <input
            data-testid="acp-command"
            value={draft.command}
            spellCheck={false}
            onChange={(event) => change({ command: event.target.value })}
            placeholder="npx, qwen, gemini, or a full path"
          />
          {errorAt('command')}
        </label>
        <label className="field">
          <span className="field-label">Arguments</span>
          <textarea data-testid="acp-args" rows={3} value={draft.args} spellCheck={false} onChange={(event) => change({ args: event.target.value })} />
          <span className="field-help">One per line.</span>
        </label>
        <label className="field">
          <span className="field-label">Variables</span>
          <textarea
            data-testid="acp-plain"
            rows={3}
            value={draft.plain}
            spellCheck={false}
            onChange={(event) => change({ plain: event.target.value })}
            placeholder="OPENAI_BASE_URL=http://localhost:11434/v1"
          />
          <span className="field-help">NAME=value, one per line; shown here. Keys go below.</span>
        </label>
        <div className="field">
          <span className="field-label">Secret variables</span>
          <KeyValueRows
            rows={draft.secrets}
            onChange={(secrets) => change({ secrets })}
            testId="acp-secret"
            keyLabel="Variable"
            keyPlaceholder="OPENAI_API_KEY"
            valuePlaceholder="value (kept in the secret store)"
            addLabel="Add a secret variable"
          />
          {errorAt('variables')}
        </div>
        <label className="field">
          <span className="field-label">Folder</span>
          <input
            data-testid="acp-workspace"
            value={draft.workspace}
            spellCheck={false}
            onChange={(event) => change({ workspace: event.target.value })}
            placeholder="Optional: where new sessions with this agent work"
          />
          {errorAt('workspace')}
        </label>
        <div className="form-actions">
          <button type="button" className="button ghost" onClick={onCancel}>
            Cancel
          </button>
          <button type="submit" className="button primary" data-testid="acp-save" disabled={saving}>
            {saving ? 'Saving…' : 'Save'}
          </button>
        </div>
      </form>
    </div>
  );
}
