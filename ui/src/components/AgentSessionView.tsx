import { useCallback, useMemo } from 'react';
import type { AgentState } from '../chat/agentSession';
import { permissionModeLabel } from '../agents/sessionForm';
import { agentName, modelLabel, providerLabel } from '../agents/sessions';
import { toApiFailure } from '../backend/backend';
import { ACP_FEATURES, AGENT_FEATURES } from '../chat/features';
import type { AgentSession, IdRequest, Provider, TopicStatus } from '../protocol.gen';
import { AgentSessionContext, type AgentSessionActions } from './AgentSessionContext';
import { AgentModePicker } from './AgentModePicker';
import { AgentSessionSettings } from './AgentSessionSettings';
import { useBackend } from './BackendContext';
import { ConversationView } from './ConversationView';
import { FolderIcon } from './Icons';
import { folderName } from './TopicSettings';

interface AgentSessionViewProps {
  session: AgentSession;
  providers: Provider[];
  /** The session topic's status from the window's status feed. */
  status: TopicStatus | undefined;
  onSessionChanged: (session: AgentSession) => void;
  onSessionDeleted: (id: string) => void;
  /** Changes whenever a turn started in the session (the status feed's count). */
  turnStarts?: number;
}

const NO_MODELS: never[] = [];

/**
 * An open agent session: a header saying which agent works in which folder and how freely,
 * over the same conversation view chat topics use (a session is a topic). Keyed by the
 * session's topic id by its parent.
 */
export function AgentSessionView({ session, providers, status, onSessionChanged, onSessionDeleted, turnStarts }: AgentSessionViewProps) {
  const backend = useBackend();
  const name = agentName(session);

  const actions = useMemo<AgentSessionActions>(
    () => ({
      resumable: session.resumable,
      reset: async () => {
        try {
          onSessionChanged(await backend.call('agent_session_reset', { id: session.id } satisfies IdRequest));
          return undefined;
        } catch (failure) {
          return toApiFailure(failure, `Could not start a fresh ${name} session`);
        }
      },
    }),
    [backend, session.id, session.resumable, name, onSessionChanged],
  );

  const acp = session.agent === 'acp';
  const agentTools = useCallback(
    (agent: AgentState) => <AgentModePicker sessionId={session.id} modes={agent.modes} currentMode={agent.currentMode} />,
    [session.id],
  );

  const header = (
    <header className="chat-header agent-session-header" data-testid="agent-session-header">
      <div className="chat-title">
        <h2 title={session.title}>{session.title || 'Untitled'}</h2>
        <div className="chat-subtitle small muted">
          <span className="agent-name" data-testid="agent-session-agent">
            {name}
          </span>
          <span className="topic-workspace" data-testid="agent-session-folder" title={`Works in ${session.workspace}`}>
            <FolderIcon /> {folderName(session.workspace)}
          </span>
          {!acp && (
            <span data-testid="agent-session-mode" data-mode={session.permissionMode} title="Permission mode">
              {permissionModeLabel(session.permissionMode)}
            </span>
          )}
          <span title="Who the agent talks through, and the model">
            {providerLabel(session, providers)} · {modelLabel(session.model)}
          </span>
          <span
            className="agent-session-resume"
            data-testid="agent-session-resume"
            data-resumable={session.resumable}
            title={
              session.resumable
                ? `The next message continues ${name}'s own session, which remembers this conversation`
                : `The next message starts a fresh ${name} session`
            }
          >
            {session.resumable ? 'resumes' : 'starts fresh'}
          </span>
        </div>
      </div>
      <div className="chat-header-actions">
        <AgentSessionSettings
          session={session}
          providers={providers}
          onChanged={onSessionChanged}
          onReset={actions.reset}
          onDeleted={() => onSessionDeleted(session.id)}
        />
      </div>
    </header>
  );

  return (
    <AgentSessionContext.Provider value={actions}>
      <ConversationView
        topicId={session.topicId}
        header={header}
        providers={providers}
        status={status}
        features={acp ? ACP_FEATURES : AGENT_FEATURES}
        models={NO_MODELS}
        addressee={name}
        turnStarts={turnStarts}
        agentSteering={acp ? 'after-turn' : 'mid-turn'}
        agentTools={acp ? agentTools : undefined}
      />
    </AgentSessionContext.Provider>
  );
}
