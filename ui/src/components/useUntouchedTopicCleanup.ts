import { useCallback, useEffect, useRef } from 'react';
import type { Backend } from '../backend/backend';
import type { MessagesPageRequest, Topic, TopicRequest, TopicStatusEvent } from '../protocol.gen';

/**
 * "New topic" makes a topic at once (so it has an address, settings and a place in every
 * window), and this takes it away again when the user leaves it untouched: nothing sent
 * or queued from this window, its title, assistant, workspace, instructions and model
 * settings as made, no turn in the status feed and no message stored. Only topics this
 * window made are removed, and only when they are left; one opened in another window
 * (`keep`) is kept.
 */
export function useUntouchedTopicCleanup(
  backend: Backend,
  shownId: string | undefined,
  topics: readonly Topic[] | undefined,
  statuses: ReadonlyMap<string, TopicStatusEvent>,
  onDeleted: (topicId: string) => void,
) {
  /** Topics made here with "New topic", as they were made. */
  const made = useRef(new Map<string, Topic>());
  const shown = useRef(shownId);
  const latest = useRef({ topics, statuses, onDeleted });
  useEffect(() => {
    latest.current = { topics, statuses, onDeleted };
  });

  useEffect(() => {
    const left = shown.current;
    shown.current = shownId;
    if (left === undefined || left === shownId) return;
    const created = made.current.get(left);
    if (!created) return;
    made.current.delete(left);
    const { topics, statuses } = latest.current;
    const now = topics?.find((topic) => topic.id === left);
    if (!now || statuses.has(left) || !asMade(created, now)) return;
    void (async () => {
      const page = await backend.call('messages_page', { topicId: left, turns: 1 } satisfies MessagesPageRequest);
      if (page.messages.length > 0 || latest.current.statuses.has(left)) return;
      await backend.call('topic_delete', { topicId: left } satisfies TopicRequest);
      latest.current.onDeleted(left);
    })().catch(() => {
      // It stays in the list, as an empty topic the user can delete.
    });
  }, [backend, shownId]);

  /** A topic this window made with "New topic". */
  const madeHere = useCallback((topic: Topic) => {
    made.current.set(topic.id, topic);
  }, []);
  /** The topic is in use (a message was sent, it was opened in another window): keep it. */
  const keep = useCallback((topicId: string) => {
    made.current.delete(topicId);
  }, []);
  return { madeHere, keep };
}

/**
 * Nothing the user set since it was made: title, assistant, workspace, instructions and
 * model settings (a model choice alone does not count).
 */
function asMade(created: Topic, now: Topic): boolean {
  const setUp = (topic: Topic) => JSON.stringify([topic.title, topic.assistantId, topic.workspace, topic.systemPrompt, topic.params]);
  return setUp(now) === setUp(created);
}
