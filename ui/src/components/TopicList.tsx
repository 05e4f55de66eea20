import { useState, type FormEvent } from 'react';
import type { Topic } from '../protocol.gen';

interface TopicListProps {
  topics: Topic[];
  selectedId: string | undefined;
  creating: boolean;
  onSelect: (id: string) => void;
  onCreate: () => void;
  onRename: (id: string, title: string) => void;
  onDelete: (id: string) => void;
}

/** The sidebar's topics, newest first, with New topic, rename and delete. */
export function TopicList({ topics, selectedId, creating, onSelect, onCreate, onRename, onDelete }: TopicListProps) {
  return (
    <nav className="topic-list" aria-label="Topics">
      <button type="button" className="button primary new-topic" data-testid="new-topic-button" onClick={onCreate} disabled={creating}>
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
              selected={topic.id === selectedId}
              onSelect={() => onSelect(topic.id)}
              onRename={(title) => onRename(topic.id, title)}
              onDelete={() => onDelete(topic.id)}
            />
          ))}
        </ul>
      )}
    </nav>
  );
}

interface TopicItemProps {
  topic: Topic;
  selected: boolean;
  onSelect: () => void;
  onRename: (title: string) => void;
  onDelete: () => void;
}

function TopicItem({ topic, selected, onSelect, onRename, onDelete }: TopicItemProps) {
  const [mode, setMode] = useState<'view' | 'rename' | 'confirm-delete'>('view');
  const [draft, setDraft] = useState(topic.title);

  const submitRename = (event: FormEvent) => {
    event.preventDefault();
    const title = draft.trim();
    if (title && title !== topic.title) onRename(title);
    setMode('view');
  };

  return (
    <li className={`topic-item${selected ? ' selected' : ''}`} data-testid="topic-item" data-topic-id={topic.id}>
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
            {topic.title || 'Untitled'}
          </button>
          <span className="topic-actions">
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
