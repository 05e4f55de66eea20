import { describe, expect, it } from 'vitest';
import { joinNewest, loadedTurns, prependOlder, type LoadedHistory } from '../src/chat/history';
import type { MessagesPage, StoredMessage } from '../src/protocol.gen';

function row(id: string, role: 'user' | 'assistant' = id.startsWith('u') ? 'user' : 'assistant'): StoredMessage {
  return {
    id,
    topicId: 't',
    status: 'success',
    message: { id, role, parts: [{ type: 'text', text: id }] },
    revision: 0,
    createdAt: '',
    updatedAt: '',
  } as StoredMessage;
}

const page = (ids: string[], older: string | null): MessagesPage => ({ messages: ids.map((id) => row(id)), older, path: { epoch: 'e1', version: 0 } });
const ids = (history: LoadedHistory) => history.rows.map((r) => r.id);

describe('paged history', () => {
  it('opens with the newest page and puts older pages above it', () => {
    const first = joinNewest(undefined, page(['u3', 'a3', 'u4', 'a4'], 'u3'));
    expect(ids(first)).toEqual(['u3', 'a3', 'u4', 'a4']);
    expect(first.older).toBe('u3');
    const more = prependOlder(first, page(['u1', 'a1', 'u2', 'a2'], null));
    expect(ids(more)).toEqual(['u1', 'a1', 'u2', 'a2', 'u3', 'a3', 'u4', 'a4']);
    expect(more.older).toBeNull();
    expect(loadedTurns(more.rows)).toBe(4);
  });

  it('a newer read of the last page keeps the older pages the user scrolled to', () => {
    const loaded: LoadedHistory = { rows: ['u1', 'a1', 'u2', 'a2', 'u3', 'a3'].map((id) => row(id)), older: 'u1' };
    // A turn was added: the newest page of two turns now starts at u3, and a3 was rewritten.
    const fresh = joinNewest(loaded, page(['u3', 'a3b', 'u4', 'a4'], 'u3'));
    expect(ids(fresh)).toEqual(['u1', 'a1', 'u2', 'a2', 'u3', 'a3b', 'u4', 'a4']);
    expect(fresh.older).toBe('u1');
  });

  it('a page that does not join what is loaded (the path changed above it) replaces it', () => {
    const loaded: LoadedHistory = { rows: ['u1', 'a1', 'u2', 'a2'].map((id) => row(id)), older: 'u1' };
    const fresh = joinNewest(loaded, page(['u9', 'a9'], 'u9'));
    expect(ids(fresh)).toEqual(['u9', 'a9']);
    expect(fresh.older).toBe('u9');
    // A page that starts at the first turn is the whole history.
    expect(ids(joinNewest(loaded, page(['u1', 'a1'], null)))).toEqual(['u1', 'a1']);
  });

  it('an older page never shows a row twice', () => {
    const loaded: LoadedHistory = { rows: ['u2', 'a2'].map((id) => row(id)), older: 'u2' };
    expect(ids(prependOlder(loaded, page(['u1', 'a1', 'u2'], null)))).toEqual(['u1', 'a1', 'u2', 'a2']);
  });
});
