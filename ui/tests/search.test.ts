import { describe, expect, it } from 'vitest';
import { occurrences } from '../src/search/findInText';
import { moveSelection, NO_FILTERS, PAGE_SIZE, searchRequest } from '../src/search/searchRequest';

describe('search requests', () => {
  it('sends nothing for a blank query and only the filters that are set', () => {
    expect(searchRequest('   ', NO_FILTERS, 't1')).toBeUndefined();
    expect(searchRequest('rust', NO_FILTERS, 't1')).toEqual({ query: 'rust', limit: PAGE_SIZE, includeAgentSessions: true });
    expect(
      searchRequest('rust', { thisTopic: true, role: 'assistant', model: ' gpt-4o ', from: '2026-01-01', to: '2026-01-31', includeAgentSessions: false }, 't1', 40),
    ).toEqual({
      query: 'rust',
      limit: PAGE_SIZE,
      offset: 40,
      topicId: 't1',
      role: 'assistant',
      model: 'gpt-4o',
      from: '2026-01-01',
      to: '2026-01-31',
      includeAgentSessions: false,
    });
    expect(searchRequest('rust', { ...NO_FILTERS, thisTopic: true }, undefined)?.topicId).toBeUndefined();
  });

  it('moves through results with wrap-around', () => {
    expect(moveSelection(-1, 1, 3)).toBe(0);
    expect(moveSelection(-1, -1, 3)).toBe(2);
    expect(moveSelection(2, 1, 3)).toBe(0);
    expect(moveSelection(0, -1, 3)).toBe(2);
    expect(moveSelection(0, 1, 0)).toBe(-1);
  });
});

describe('find in topic', () => {
  it('finds every occurrence ignoring case, without overlaps', () => {
    expect(occurrences('Rust and rust and RUST', 'rust')).toEqual([0, 9, 18]);
    expect(occurrences('aaaa', 'aa')).toEqual([0, 2]);
    expect(occurrences('中文和中文', '中文')).toEqual([0, 3]);
    expect(occurrences('anything', '')).toEqual([]);
  });
});
