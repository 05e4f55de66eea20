import { useId, useState } from 'react';
import { modelSuggestions, OWN_LOGIN, sessionUpdate } from '../agents/sessionForm';
import { agentName, providerLabel } from '../agents/sessions';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { AgentSession, IdRequest, Provider } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';
import { PermissionModeField } from './PermissionModeField';
import { usePopover } from './usePopover';

interface AgentSessionSettingsProps {
  session: AgentSession;
  providers: Provider[];
  onChanged: (session: AgentSession) => void;
  /** Forgets the agent's resume token (shared with the "resume failed" card). */
  onReset: () => Promise<ApiFailure | undefined>;
  onDeleted: () => void;
}

/**
 * The agent session header's settings: its title, model and permission mode (used from the
 * next message on), whether the next message resumes the agent's own session (and starting
 * a fresh one), and deleting the session.
 */
export function AgentSessionSettings({ session, providers, onChanged, onReset, onDeleted }: AgentSessionSettingsProps) {
  const backend = useBackend();
  const { open, setOpen, ref, panelRef } = usePopover<HTMLDivElement>({ align: 'end' });
  const [title, setTitle] = useState(session.title);
  const [model, setModel] = useState(session.model);
  const [shown, setShown] = useState(session);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<ApiFailure>();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const suggestionsId = useId();
  const name = agentName(session);
  const acp = session.agent === 'acp';
  if (shown !== session) {
    // Saved here or changed elsewhere: the fields show what is stored.
    setShown(session);
    setTitle(session.title);
    setModel(session.model);
  }

  const act = async (what: string, action: () => Promise<void>) => {
    setBusy(true);
    setFailure(undefined);
    try {
      await action();
    } catch (error) {
      setFailure(toApiFailure(error, what));
    } finally {
      setBusy(false);
    }
  };
  const save = (change: { title?: string; model?: string; permissionMode?: string }) => {
    const update = sessionUpdate(session, change);
    if (!update) return;
    void act('Could not change the session', async () => onChanged(await backend.call('agent_session_update', update)));
  };
  const reset = () =>
    void act(`Could not start a fresh ${name} session`, async () => {
      const error = await onReset();
      if (error) throw error;
    });
  const remove = () =>
    void act('Could not delete the session', async () => {
      await backend.call('agent_session_delete', { id: session.id } satisfies IdRequest);
      setOpen(false);
      onDeleted();
    });
  const errorOf = (field: string) => (failure?.field === field ? failure.message.replace(`${field}: `, '') : undefined);
  const fieldError = (field: string) =>
    errorOf(field) ? (
      <div className="field-error" data-testid="form-error" data-field={field} role="alert">
        {errorOf(field)}
      </div>
    ) : null;

  return (
    <div className="topic-settings" ref={ref}>
      <button
        type="button"
        className="button ghost small"
        data-testid="agent-session-settings-button"
        aria-haspopup="dialog"
        aria-expanded={open}
        title="Title, model, permission mode and resuming of this agent session"
        onClick={() => setOpen(!open)}
      >
        Session settings
      </button>
      {open && (
        <div className="popover-menu topic-settings-panel agent-session-panel" role="dialog" aria-label="Agent session settings" data-testid="agent-session-settings" ref={panelRef}>
          <form
            className="field"
            onSubmit={(event) => {
              event.preventDefault();
              save({ title });
            }}
          >
            <span className="field-label">Title</span>
            <div className="field-row">
              <input data-testid="agent-session-rename" value={title} disabled={busy} onChange={(event) => setTitle(event.target.value)} aria-label="Title" />
              <button type="submit" className="button" data-testid="agent-session-rename-save" disabled={busy || title.trim() === '' || title.trim() === session.title}>
                Rename
              </button>
            </div>
            {fieldError('title')}
          </form>
          {/* An ACP agent picks its own model and has its own modes (switched in the
              composer's bar): Claude Code's model and permission modes mean nothing to it. */}
          {!acp && (
            <>
            <form
              className="field"
              onSubmit={(event) => {
                event.preventDefault();
                save({ model });
              }}
            >
              <span className="field-label">Model</span>
              <div className="field-row">
                <input
                  data-testid="agent-session-settings-model"
                  value={model}
                  list={suggestionsId}
                  disabled={busy}
                  placeholder={`Empty: ${name}'s default`}
                  onChange={(event) => setModel(event.target.value)}
                  aria-label="Model"
                  spellCheck={false}
                />
                <button type="submit" className="button" data-testid="agent-session-model-save" disabled={busy || model.trim() === session.model}>
                  Use model
                </button>
              </div>
              <datalist id={suggestionsId}>
                {modelSuggestions(providers, session.providerId ?? OWN_LOGIN).map((suggestion) => (
                  <option key={suggestion} value={suggestion} />
                ))}
              </datalist>
              <span className="field-help">Talks through {providerLabel(session, providers)}. From the next message on.</span>
              {fieldError('model')}
            </form>
            <PermissionModeField
              value={session.permissionMode}
              testId="agent-session-settings-permission"
              disabled={busy}
              onChange={(permissionMode) => save({ permissionMode })}
            />
            {fieldError('permissionMode')}
            </>
          )}
          <div className="field">
            <span className="field-label">Folder</span>
            <code className="small">{session.workspace}</code>
            <span className="field-help">The folder and provider stay as created; start a new session to change them.</span>
          </div>
          <div className="field" data-testid="agent-session-resume-info">
            <span className="field-label">Memory</span>
            {session.resumable ? (
              <>
                <span className="small">
                  The next message resumes {name}&apos;s own session, which remembers this conversation.
                </span>
                <button type="button" className="button small" data-testid="agent-session-reset" disabled={busy} onClick={reset}>
                  Start a fresh {name} session
                </button>
                <span className="field-help">The messages here are kept; the agent starts without their memory.</span>
              </>
            ) : (
              <span className="small">The next message starts a fresh {name} session.</span>
            )}
          </div>
          {failure && !errorOf('title') && !errorOf('model') && !errorOf('permissionMode') && (
            <ErrorNotice error={failure} onDismiss={() => setFailure(undefined)} />
          )}
          <div className="form-actions">
            {confirmDelete ? (
              <>
                <span className="small">Delete this session and its messages? The files in the folder stay.</span>
                <button type="button" className="button ghost small" onClick={() => setConfirmDelete(false)}>
                  Cancel
                </button>
                <button type="button" className="button danger small" data-testid="agent-session-delete-confirm" disabled={busy} onClick={remove}>
                  Delete
                </button>
              </>
            ) : (
              <button type="button" className="button ghost small" data-testid="agent-session-delete" onClick={() => setConfirmDelete(true)}>
                Delete session
              </button>
            )}
          </div>
        </div>
      )}
    </div>
  );
}
