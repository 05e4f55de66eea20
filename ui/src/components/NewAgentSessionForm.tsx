import { useEffect, useId, useState, type FormEvent } from 'react';
import {
  agentProviders,
  CLAUDE_CODE,
  modelSuggestions,
  newSessionDraft,
  OWN_LOGIN,
  SESSION_FIELDS,
  sessionInputFromDraft,
  type SessionDraft,
} from '../agents/sessionForm';
import { toApiFailure } from '../backend/backend';
import type { AcpAgent, AgentSession, Provider } from '../protocol.gen';
import { fieldErrorsFrom, NO_ERRORS, type FieldErrors } from '../settings/fieldErrors';
import { useBackend } from './BackendContext';
import { FolderField } from './FolderField';
import { PermissionModeField } from './PermissionModeField';

interface NewAgentSessionFormProps {
  providers: Provider[];
  onCreated: (session: AgentSession) => void;
  onCancel: () => void;
}

/**
 * A new agent session: the folder Claude Code works in, who it talks through (the
 * user's own Claude Code login or an Anthropic-format provider), the model and how much
 * it may do without asking.
 */
export function NewAgentSessionForm({ providers, onCreated, onCancel }: NewAgentSessionFormProps) {
  const backend = useBackend();
  const [draft, setDraft] = useState<SessionDraft>(() => newSessionDraft(providers));
  const [errors, setErrors] = useState<FieldErrors>(NO_ERRORS);
  const [saving, setSaving] = useState(false);
  const suggestionsId = useId();
  const [acpAgents, setAcpAgents] = useState<AcpAgent[]>([]);
  useEffect(() => {
    let current = true;
    backend
      .call('acp_agents_list')
      .then((list) => {
        if (current) setAcpAgents(list);
      })
      .catch(() => {
        // Without the list only Claude Code is offered; settings show the error.
      });
    return () => {
      current = false;
    };
  }, [backend]);
  const acp = draft.agent !== CLAUDE_CODE;
  const chosen = acpAgents.find((agent) => agent.id === draft.agent);
  const agentLabel = chosen?.name ?? 'Claude Code';
  const usable = agentProviders(providers);
  const suggestions = modelSuggestions(providers, draft.providerId);
  const change = (patch: Partial<SessionDraft>) => setDraft({ ...draft, ...patch });

  const pickProvider = (providerId: string) => {
    // A model typed for the provider before means nothing to the next one; a model the
    // user typed themselves stays.
    const before = modelSuggestions(providers, draft.providerId);
    const keep = draft.model.trim() !== '' && !before.includes(draft.model.trim());
    const next = modelSuggestions(providers, providerId);
    const model = keep ? draft.model : providerId === OWN_LOGIN ? '' : (next[0] ?? '');
    change({ providerId, model });
  };

  const create = async (event: FormEvent) => {
    event.preventDefault();
    const checked = sessionInputFromDraft(draft, providers);
    if ('errors' in checked) {
      setErrors(checked.errors);
      return;
    }
    setErrors(NO_ERRORS);
    setSaving(true);
    try {
      onCreated(await backend.call('agent_session_create', checked.input));
    } catch (failure) {
      setErrors(fieldErrorsFrom(toApiFailure(failure, 'Could not create the agent session'), SESSION_FIELDS));
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
    <div className="settings-body">
      <div className="card">
        <h3>New agent session</h3>
        <p className="muted small">
          Claude Code works in the folder you choose: it reads files there, and asks you here (with an approval card)
          before it edits them or runs commands, unless the permission mode says otherwise.
        </p>
        <form className="assistant-form agent-session-form" data-testid="agent-session-form" onSubmit={create} noValidate>
          {(errors[''] || errors.agent) && (
            <div className="form-error" data-testid="form-error" role="alert">
              {errors[''] ?? errors.agent}
            </div>
          )}
          <label className="field">
            <span className="field-label">Agent</span>
            <select data-testid="agent-session-agent" value={draft.agent} onChange={(event) => change({ agent: event.target.value })}>
              <option value={CLAUDE_CODE}>Claude Code</option>
              {acpAgents.map((agent) => (
                <option key={agent.id} value={agent.id}>
                  {agent.name}
                </option>
              ))}
            </select>
            <span className="field-help">Other coding agents (over ACP) are added in Settings → Coding agents.</span>
            {errorAt('acpAgentId')}
          </label>
          <div className="field">
            <span className="field-label">Folder</span>
            <FolderField
              value={draft.workspace}
              testId="agent-session-workspace"
              dialogTitle={`Choose the folder ${agentLabel} works in`}
              error={errors.workspace}
              onChoose={(path) => change({ workspace: path })}
            />
            <span className="field-help">
              An existing project folder (not your home folder itself).
              {acp && chosen?.workspace && ` Empty: ${chosen.workspace}.`}
            </span>
          </div>
          {!acp && (
            <>
          <label className="field">
            <span className="field-label">Talk through</span>
            <select data-testid="agent-session-provider" value={draft.providerId} onChange={(event) => pickProvider(event.target.value)}>
              <option value={OWN_LOGIN}>My Claude Code login</option>
              {usable.map((provider) => (
                <option key={provider.id} value={provider.id}>
                  {provider.name}
                </option>
              ))}
            </select>
            <span className="field-help">
              {draft.providerId === OWN_LOGIN
                ? 'Uses the account you signed in to Claude Code with (run `claude` once in a terminal to sign in).'
                : "Claude Code sends its requests to this provider's base URL with its API key."}
              {usable.length === 0 && ' Providers using the Anthropic API format can be picked here too (add one in Settings).'}
            </span>
            {errorAt('providerId')}
          </label>
          <label className="field">
            <span className="field-label">Model</span>
            <input
              data-testid="agent-session-model"
              value={draft.model}
              list={suggestionsId}
              onChange={(event) => change({ model: event.target.value })}
              placeholder="Empty: Claude Code's default"
              spellCheck={false}
              autoComplete="off"
            />
            <datalist id={suggestionsId}>
              {suggestions.map((model) => (
                <option key={model} value={model} />
              ))}
            </datalist>
            {errorAt('model')}
          </label>
            </>
          )}
          {/* An ACP agent has its own modes, offered in the session's composer once it runs. */}
          {!acp && (
            <>
              <PermissionModeField value={draft.permissionMode} testId="agent-session-permission" onChange={(permissionMode) => change({ permissionMode })} />
              {errorAt('permissionMode')}
            </>
          )}
          <label className="field">
            <span className="field-label">Title</span>
            <input
              data-testid="agent-session-title"
              value={draft.title}
              onChange={(event) => change({ title: event.target.value })}
              placeholder="Optional: your first message names it"
            />
            {errorAt('title')}
          </label>
          <div className="form-actions">
            <button type="button" className="button ghost" onClick={onCancel}>
              Cancel
            </button>
            <button type="submit" className="button primary" data-testid="agent-session-create" disabled={saving}>
              {saving ? 'Creating…' : 'Start session'}
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}
