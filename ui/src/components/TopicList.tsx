import { useState, type FormEvent } from 'react';
import { APPLE } from '../keyboard/keyHandler';
import { shortcutText } from '../keyboard/shortcuts';
import type { Topic, TopicStatus, TopicStatusEvent } from '../protocol.gen';
import { TopicExportMenu } from './TopicExportMenu';

interface TopicListProps {
  topics: Topic[];
  /** Each topic's status from the status feed (topics without one have not run since start). */
  statuses: ReadonlyMap<string, TopicStatusEvent>;
  selectedId: string | undefined;
  creating: boolean;
  onSelect: (id: string) => void;
  onCreate: () => void;
  onRename: (id: string, title: string) => void;
  onDelete: (id: string) => void;
  onOpenInWindow: (id: string) => void;
}

/** The sidebar's topics, newest first, with their status, New topic, export, rename, delete and new window. */
export function TopicList({ topics, statuses, selectedId, creating, onSelect, onCreate, onRename, onDelete, onOpenInWindow }: TopicListProps) {
  return (
    <nav className="topic-list" aria-label="Topics">
      <button
        type="button"
        className="button primary new-topic"
        data-testid="new-topic-button"
        title={`New topic (${shortcutText('new-topic', APPLE)})`}
        onClick={onCreate}
        disabled={creating}
      >
        {creating ? 'Creating…' : '+ New topic'}
      </button>
      {topics.length === 0 ? (
        <p className="muted small topic-list-empty">No topics yet.</p>
      ) : (
        <ul>
          {topics.map((topic) => (
            <TopicItem
              key={topic.id}
              topic={topic}
              status={statuses.get(topic.id)}
              selected={topic.id === selectedId}
              onSelect={() => onSelect(topic.id)}
              onRename={(title) => onRename(topic.id, title)}
              onDelete={() => onDelete(topic.id)}
              onOpenInWindow={() => onOpenInWindow(topic.id)}
            />
          ))}
        </ul>
      )}
    </nav>
  );
}

interface TopicItemProps {
  topic: Topic;
  status: TopicStatusEvent | undefined;
  selected: boolean;
  onSelect: () => void;
  onRename: (title: string) => void;
  onDelete: () => void;
  onOpenInWindow: () => void;
}

function TopicItem({ topic, status, selected, onSelect, onRename, onDelete, onOpenInWindow }: TopicItemProps) {
  const [mode, setMode] = useState<'view' | 'rename' | 'confirm-delete'>('view');
  const [draft, setDraft] = useState(topic.title);

  const submitRename = (event: FormEvent) => {
    event.preventDefault();
    const title = draft.trim();
    if (title && title !== topic.title) onRename(title);
    setMode('view');
  };

  return (
    <li
      className={`topic-item${selected ? ' selected' : ''}${needsAttention(status) ? ' attention' : ''}`}
      data-testid="topic-item"
      data-topic-id={topic.id}
    >
      {mode === 'rename' ? (
        <form onSubmit={submitRename} className="topic-rename">
          <input
            aria-label="Topic title"
            value={draft}
            autoFocus
            onChange={(e) => setDraft(e.target.value)}
            onBlur={submitRename}
            onKeyDown={(e) => {
              if (e.key === 'Escape') {
                setDraft(topic.title);
                setMode('view');
              }
            }}
          />
        </form>
      ) : mode === 'confirm-delete' ? (
        <div className="topic-confirm" role="group" aria-label="Confirm delete">
          <span className="small">Delete “{topic.title || 'Untitled'}”?</span>
          <button type="button" className="button danger small" data-testid="topic-delete-confirm" onClick={onDelete}>
            Delete
          </button>
          <button type="button" className="button ghost small" onClick={() => setMode('view')}>
            Cancel
          </button>
        </div>
      ) : (
        <>
          <button type="button" className="topic-title" onClick={onSelect} aria-current={selected ? 'page' : undefined} title={topic.title}>
            {status && <TopicStatusMark status={status.status} />}
            <span className="topic-title-text">{topic.title || 'Untitled'}</span>
            <AttentionBadges status={status} />
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
            <TopicExportMenu topicId={topic.id} title={topic.title} />
            <button
              type="button"
              className="icon-button"
              aria-label="Rename topic"
              title="Rename"
              data-testid="topic-rename"
              onClick={() => {
                setDraft(topic.title);
                setMode('rename');
              }}
            >
              ✎
            </button>
            <button
              type="button"
              className="icon-button"
              aria-label="Delete topic"
              title="Delete"
              data-testid="topic-delete"
              onClick={() => setMode('confirm-delete')}
            >
              ×
            </button>
          </span>
        </>
      )}
    </li>
  );
}

/** A topic that wants the user: a reply they have not seen, or a tool call waiting for them. */
export function needsAttention(status: TopicStatusEvent | undefined): boolean {
  return status !== undefined && (status.unseen || status.status === 'awaiting_approval');
}

const STATUS_TEXT: Record<TopicStatus, string> = {
  pending: 'Starting a reply',
  streaming: 'Writing a reply',
  awaiting_approval: 'Waiting for your approval',
  done: 'Reply finished',
  aborted: 'Reply stopped',
  error: 'Reply failed',
};

/** "approval needed" while a tool call waits, a dot for a reply finished since the user looked. */
export function AttentionBadges({ status }: { status: TopicStatusEvent | undefined }) {
  return (
    <>
      {status?.status === 'awaiting_approval' && (
        <span className="topic-approval" data-testid="topic-approval" title="A tool call waits for your approval">
          approval needed
        </span>
      )}
      {status?.unseen && <span className="topic-unseen" data-testid="topic-unseen" title="Finished since you last looked" aria-label="new reply" />}
    </>
  );
}

/** A spinner while a reply runs, a mark when it failed; nothing visible otherwise. */
export function TopicStatusMark({ status }: { status: TopicStatus }) {
  return <span className={`topic-status ${status}`} data-testid="topic-status" data-status={status} title={STATUS_TEXT[status]} aria-label={STATUS_TEXT[status]} />;
}
