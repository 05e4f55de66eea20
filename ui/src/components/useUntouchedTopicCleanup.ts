import { useCallback, useEffect, useRef } from 'react';
import type { Backend } from '../backend/backend';
import type { Topic, TopicRequest, TopicStatusEvent } from '../protocol.gen';

/**
 * "New topic" makes a topic at once (so it has an address, settings and a place in every
 * window), and this takes it away again when the user leaves it untouched: nothing sent
 * or queued from this window, its title, assistant, workspace, instructions and model
 * settings as made, and no turn in the status feed. The backend deletes it only if no
 * message and no queued item is stored, in one statement (`topic_delete_if_empty`), so a
 * message sent from another window at the same moment is never lost with it. Only topics
 * this window made are removed, when they are left or the page closes on one; one opened
 * in another window (`keep`) is kept.
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

  /** Whether `topicId`, made here, is still as made (and so may go). */
  const untouched = useCallback((topicId: string) => {
    const created = made.current.get(topicId);
    if (!created) return false;
    const { topics, statuses } = latest.current;
    const now = topics?.find((topic) => topic.id === topicId);
    return now !== undefined && !statuses.has(topicId) && asMade(created, now);
  }, []);

  useEffect(() => {
    const left = shown.current;
    shown.current = shownId;
    if (left === undefined || left === shownId) return;
    const discard = untouched(left);
    made.current.delete(left);
    if (!discard) return;
    backend
      .call('topic_delete_if_empty', { topicId: left } satisfies TopicRequest)
      .then(({ deleted }) => {
        if (deleted) latest.current.onDeleted(left);
      })
      .catch(() => {
        // It stays in the list, as an empty topic the user can delete.
      });
  }, [backend, shownId, untouched]);

  // Closing the tab (or reloading it) on an untouched new topic takes it away too.
  useEffect(() => {
    const onPageHide = () => {
      const current = shown.current;
      if (current !== undefined && untouched(current)) backend.sendAsPageCloses('topic_delete_if_empty', { topicId: current });
    };
    window.addEventListener('pagehide', onPageHide);
    return () => window.removeEventListener('pagehide', onPageHide);
  }, [backend, untouched]);

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
