import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { SearchHit, SearchResults } from '../protocol.gen';
import { moveSelection, NO_FILTERS, SEARCH_DEBOUNCE_MS, searchRequest, shortTime, type SearchFilters } from '../search/searchRequest';
import '../search/search.css';
import { useBackend } from './BackendContext';

interface SearchPaletteProps {
  /** The open topic, for "this topic only". */
  topicId: string | undefined;
  topicTitle: string | undefined;
  onOpen: (hit: SearchHit) => void;
  onClose: () => void;
}

type Found = { state: 'idle' } | { state: 'searching' } | { state: 'done'; results: SearchResults } | { state: 'failed'; error: ApiFailure };

/**
 * Search every conversation (Ctrl/Cmd+K, Ctrl/Cmd+Shift+F): results as you type, best
 * first; arrow keys move through them, Enter opens one, Escape closes.
 */
export function SearchPalette({ topicId, topicTitle, onOpen, onClose }: SearchPaletteProps) {
  const backend = useBackend();
  const [query, setQuery] = useState('');
  const [filters, setFilters] = useState<SearchFilters>(NO_FILTERS);
  const [showFilters, setShowFilters] = useState(false);
  const [answer, setFound] = useState<Found>({ state: 'idle' });
  const [shownHits, setHits] = useState<SearchHit[]>([]);
  const [selected, setSelected] = useState(-1);
  const [loadingMore, setLoadingMore] = useState(false);
  // Each search gets a number; an answer to an older one than the latest is dropped.
  const latest = useRef(0);
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLUListElement>(null);
  const listId = useId();

  useEffect(() => input.current?.focus(), []);

  useEffect(() => {
    const request = searchRequest(query, filters, topicId);
    const ticket = ++latest.current;
    // A blank query shows no results (see `blank` below) and asks nothing.
    if (!request) return;
    const timer = window.setTimeout(() => {
      setFound({ state: 'searching' });
      backend
        .call('messages_search', request)
        .then((results) => {
          if (ticket !== latest.current) return;
          setFound({ state: 'done', results });
          setHits(results.hits);
          setSelected(results.hits.length > 0 ? 0 : -1);
        })
        .catch((failure: unknown) => {
          if (ticket !== latest.current) return;
          setFound({ state: 'failed', error: toApiFailure(failure, 'Could not search') });
          setHits([]);
          setSelected(-1);
        });
    }, SEARCH_DEBOUNCE_MS);
    // A newer query (or closing) cancels this one before it runs; if it already runs,
    // its answer is dropped by the ticket check.
    return () => window.clearTimeout(timer);
  }, [backend, query, filters, topicId]);

  useEffect(() => {
    list.current?.querySelector<HTMLElement>(`[data-index="${selected}"]`)?.scrollIntoView({ block: 'nearest' });
  }, [selected]);

  const blank = searchRequest(query, filters, topicId) === undefined;
  const found: Found = blank ? { state: 'idle' } : answer;
  const hits = blank ? [] : shownHits;
  const nextOffset = found.state === 'done' ? found.results.nextOffset : undefined;
  const loadMore = () => {
    const request = nextOffset !== undefined ? searchRequest(query, filters, topicId, nextOffset) : undefined;
    if (!request) return;
    const ticket = latest.current;
    setLoadingMore(true);
    backend
      .call('messages_search', request)
      .then((results) => {
        if (ticket !== latest.current) return;
        setFound({ state: 'done', results });
        setHits((shown) => [...shown, ...results.hits]);
      })
      .catch((failure: unknown) => {
        if (ticket === latest.current) setFound({ state: 'failed', error: toApiFailure(failure, 'Could not search') });
      })
      .finally(() => setLoadingMore(false));
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      onClose();
    } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      setSelected((current) => moveSelection(current, event.key === 'ArrowDown' ? 1 : -1, hits.length));
    } else if (event.key === 'Enter' && event.target === input.current) {
      const hit = hits[selected];
      if (hit) {
        event.preventDefault();
        onOpen(hit);
      }
    }
  };

  const set = (change: Partial<SearchFilters>) => setFilters((current) => ({ ...current, ...change }));
  const error = found.state === 'failed' ? found.error : undefined;

  return (
    <div className="search-backdrop" data-testid="search-palette" onMouseDown={(event) => event.target === event.currentTarget && onClose()}>
      <div className="search-palette" role="dialog" aria-modal="true" aria-label="Search messages" onKeyDown={onKeyDown}>
        <div className="search-input-row">
          <input
            ref={input}
            className="search-input"
            data-testid="search-input"
            type="search"
            placeholder="Search all messages…"
            value={query}
            onChange={(event) => setQuery(event.target.value)}
            role="combobox"
            aria-expanded={hits.length > 0}
            aria-controls={listId}
            aria-activedescendant={selected >= 0 ? `${listId}-${selected}` : undefined}
            aria-autocomplete="list"
          />
          <button
            type="button"
            className={`button ghost small${showFilters ? ' active' : ''}`}
            aria-expanded={showFilters}
            data-testid="search-filters-toggle"
            onClick={() => setShowFilters((shown) => !shown)}
          >
            Filters
          </button>
        </div>
        {showFilters && <Filters filters={filters} topicTitle={topicId ? topicTitle : undefined} onChange={set} />}
        <div className="search-status small muted" role="status" aria-live="polite">
          {found.state === 'searching'
            ? 'Searching…'
            : found.state === 'done' && hits.length === 0
              ? 'No messages match.'
              : found.state === 'idle'
                ? 'Type words to find (any part of a word matches). Quotes, AND, OR, NOT and NEAR work as in SQLite FTS5.'
                : null}
        </div>
        {error && (
          <p className="search-error small" role="alert" data-testid="search-error">
            {error.kind === 'bad_request' ? `This search cannot be read: ${error.message.replace(/^query: /, '')}` : `${error.message}. Try again.`}
          </p>
        )}
        <ul className="search-results" id={listId} ref={list} role="listbox" aria-label="Messages found">
          {hits.map((hit, index) => (
            <li
              key={hit.messageId}
              id={`${listId}-${index}`}
              data-index={index}
              data-testid="search-result"
              data-message-id={hit.messageId}
              role="option"
              aria-selected={index === selected}
              className="search-result"
              onMouseMove={() => setSelected(index)}
              onClick={() => onOpen(hit)}
            >
              <div className="search-result-head small">
                <span className="search-result-topic">{hit.topicTitle || 'Untitled'}</span>
                <span className="muted">
                  {hit.role === 'user' ? 'You' : (hit.model?.model ?? hit.role)}
                  {!hit.onActivePath && ' · other version'} · {shortTime(hit.createdAt)}
                </span>
              </div>
              <div className="search-snippet">
                {hit.snippet.map((piece, at) => (piece.hit ? <mark key={at}>{piece.text}</mark> : <span key={at}>{piece.text}</span>))}
              </div>
            </li>
          ))}
        </ul>
        {nextOffset !== undefined && (
          <button type="button" className="button ghost small search-more" disabled={loadingMore} onClick={loadMore}>
            {loadingMore ? 'Loading…' : 'More results'}
          </button>
        )}
        <div className="search-keys small muted">↑↓ to move · Enter to open · Esc to close</div>
      </div>
    </div>
  );
}

interface FiltersProps {
  filters: SearchFilters;
  /** The open topic's title; absent when none is open. */
  topicTitle: string | undefined;
  onChange: (change: Partial<SearchFilters>) => void;
}

function Filters({ filters, topicTitle, onChange }: FiltersProps) {
  return (
    <div className="search-filters small" data-testid="search-filters">
      <label>
        In
        <select
          value={filters.thisTopic && topicTitle !== undefined ? 'topic' : 'all'}
          onChange={(event) => onChange({ thisTopic: event.target.value === 'topic' })}
        >
          <option value="all">all topics</option>
          {topicTitle !== undefined && <option value="topic">this topic ({topicTitle || 'Untitled'})</option>}
        </select>
      </label>
      <label>
        From
        <select value={filters.role} onChange={(event) => onChange({ role: event.target.value as SearchFilters['role'] })}>
          <option value="">anyone</option>
          <option value="user">you</option>
          <option value="assistant">models</option>
        </select>
      </label>
      <label>
        Model
        <input type="text" value={filters.model} placeholder="any" size={12} onChange={(event) => onChange({ model: event.target.value })} />
      </label>
      <label>
        Since
        <input type="date" value={filters.from} onChange={(event) => onChange({ from: event.target.value })} />
      </label>
      <label>
        Until
        <input type="date" value={filters.to} onChange={(event) => onChange({ to: event.target.value })} />
      </label>
      <label>
        <input
          type="checkbox"
          checked={filters.includeAgentSessions}
          onChange={(event) => onChange({ includeAgentSessions: event.target.checked })}
        />
        Agent sessions
      </label>
    </div>
  );
}
