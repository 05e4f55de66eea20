import type { Backend } from '../backend/backend';
import type { MessagesPage, MessagesPageRequest } from '../protocol.gen';
import { PAGE_TURNS } from './history';

/**
 * The newest page of the topic named in the address, asked for while the app's code is
 * still loading (`main.ts`), so opening a topic does not wait for the topic list before
 * it reads its messages. Its session takes it for its first read, once.
 */
let early: { topicId: string; page: Promise<MessagesPage | undefined> } | undefined;

export function readNewestPageEarly(backend: Backend, topicId: string): void {
  const request: MessagesPageRequest = { topicId, turns: PAGE_TURNS };
  // A failed read is read again by the session, which shows its error.
  early = { topicId, page: backend.call('messages_page', request).catch(() => undefined) };
}

/** The early page of this topic (the first time it is asked for), or undefined. */
export function takeEarlyPage(topicId: string): Promise<MessagesPage | undefined> | undefined {
  if (early?.topicId !== topicId) return undefined;
  const { page } = early;
  early = undefined;
  return page;
}
