import type { MessageRole, SearchRequest } from '../protocol.gen';

/** The filters of the search box, as the user set them. */
export interface SearchFilters {
  /** Only the open topic (when one is open). */
  thisTopic: boolean;
  role: MessageRole | '';
  model: string;
  /** `YYYY-MM-DD` or empty. */
  from: string;
  to: string;
  includeAgentSessions: boolean;
}

export const NO_FILTERS: SearchFilters = { thisTopic: false, role: '', model: '', from: '', to: '', includeAgentSessions: true };

/** How long typing must pause before a search runs. */
export const SEARCH_DEBOUNCE_MS = 180;
export const PAGE_SIZE = 20;

/** The request for a query, its filters and a page; `undefined` while there is nothing to search for. */
export function searchRequest(query: string, filters: SearchFilters, topicId: string | undefined, offset = 0): SearchRequest | undefined {
  if (query.trim() === '') return undefined;
  const request: SearchRequest = { query, limit: PAGE_SIZE, includeAgentSessions: filters.includeAgentSessions };
  if (offset > 0) request.offset = offset;
  if (filters.thisTopic && topicId) request.topicId = topicId;
  if (filters.role) request.role = filters.role;
  if (filters.model.trim()) request.model = filters.model.trim();
  if (filters.from) request.from = filters.from;
  if (filters.to) request.to = filters.to;
  return request;
}

/** The result the arrow keys move to, wrapping around; -1 when there is none. */
export function moveSelection(current: number, delta: number, count: number): number {
  if (count === 0) return -1;
  if (current < 0) return delta > 0 ? 0 : count - 1;
  return (current + delta + count) % count;
}

/** A stored time (RFC 3339, UTC) as the user reads it: the date, and the time for today's. */
export function shortTime(createdAt: string, now = new Date()): string {
  const at = new Date(createdAt);
  if (Number.isNaN(at.getTime())) return createdAt;
  const sameDay = at.toDateString() === now.toDateString();
  return sameDay
    ? at.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
    : at.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}
