import { agentName, modelLabel } from '../agents/sessions';
import type { ApiFailure } from '../backend/backend';
import type { AgentSession, TopicStatusEvent } from '../protocol.gen';
import { FolderIcon } from './Icons';
import { AttentionBadges, needsAttention, TopicStatusMark } from './TopicList';
import { folderName } from './TopicSettings';

interface AgentSessionListProps {
  /** Undefined while they are read. */
  sessions: AgentSession[] | undefined;
  /** Reading them failed. */
  error: ApiFailure | undefined;
  /** Each session's status from the status feed, by its topic id. */
  statuses: ReadonlyMap<string, TopicStatusEvent>;
  /** The open conversation's topic id. */
  selectedId: string | undefined;
  /** The "New agent session" form is open. */
  creating: boolean;
  onSelect: (topicId: string) => void;
  onNew: () => void;
  onOpenInWindow: (topicId: string) => void;
  onRetry: () => void;
}

/** The sidebar's agent sessions, newest first: title, folder, model and status, and "New agent session". */
export function AgentSessionList(props: AgentSessionListProps) {
  const { sessions, error, statuses, selectedId, creating, onSelect, onNew, onOpenInWindow, onRetry } = props;
  return (
    <nav className="topic-list agent-session-list" aria-label="Agent sessions">
      <button
        type="button"
        className={`button primary new-topic${creating ? ' active' : ''}`}
        data-testid="new-agent-session-button"
        onClick={onNew}
        title="Work with Claude Code in a folder on this computer"
      >
        + New agent session
      </button>
      {error && (
        <div className="field-error small" role="alert">
          Could not read the agent sessions: {error.message}{' '}
          <button type="button" className="button ghost small" onClick={onRetry}>
            Try again
          </button>
        </div>
      )}
      {!sessions && !error && <p className="muted small topic-list-empty">Loading agent sessions…</p>}
      {sessions?.length === 0 && (
        <p className="muted small topic-list-empty">
          No agent sessions yet. An agent session lets Claude Code read and change files in a folder you choose, asking you
          before it edits or runs anything.
        </p>
      )}
      {sessions && sessions.length > 0 && (
        <ul>
          {sessions.map((session) => (
            <AgentSessionItem
              key={session.id}
              session={session}
              status={statuses.get(session.topicId)}
              selected={session.topicId === selectedId}
              onSelect={() => onSelect(session.topicId)}
              onOpenInWindow={() => onOpenInWindow(session.topicId)}
            />
          ))}
        </ul>
      )}
    </nav>
  );
}

interface AgentSessionItemProps {
  session: AgentSession;
  status: TopicStatusEvent | undefined;
  selected: boolean;
  onSelect: () => void;
  onOpenInWindow: () => void;
}

function AgentSessionItem({ session, status, selected, onSelect, onOpenInWindow }: AgentSessionItemProps) {
  return (
    <li
      className={`topic-item agent-session-item${selected ? ' selected' : ''}${needsAttention(status) ? ' attention' : ''}`}
      data-testid="agent-session-item"
      data-topic-id={session.topicId}
      data-session-id={session.id}
    >
      <button
        type="button"
        className="topic-title"
        onClick={onSelect}
        aria-current={selected ? 'page' : undefined}
        title={`${session.title} — ${agentName(session)} in ${session.workspace}`}
      >
        {status && <TopicStatusMark status={status.status} />}
        <span className="topic-title-text">{session.title || 'Untitled'}</span>
        <AttentionBadges status={status} />
        <span className="agent-session-meta small muted">
          <span data-testid="agent-session-agent-name">{agentName(session)}</span> · <FolderIcon /> {folderName(session.workspace)} ·{' '}
          {modelLabel(session.model)}
        </span>
      </button>
      <span className="topic-actions">
        <button
          type="button"
          className="icon-button"
          aria-label="Open in new window"
          title="Open in new window"
          data-testid="open-in-window"
          onClick={onOpenInWindow}
        >
          ↗
        </button>
      </span>
    </li>
  );
}
