import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import { ApprovalInbox } from '../chat/approvals';
import type { Assistant, CreateTopic, ModelRef, Provider, Topic, TopicRequest, TopicStatusEvent, UpdateTopic } from '../protocol.gen';
import { StatusFeed } from '../status/feed';
import { notifyApprovals } from '../status/notifications';
import { ApprovalInboxPanel } from './ApprovalInboxPanel';
import { ApprovalsContext } from './ApprovalsContext';
import { useBackend } from './BackendContext';
import { ChatView } from './ChatView';
import { ErrorNotice } from './ErrorNotice';
import { Onboarding } from './Onboarding';
import { SettingsView } from './SettingsView';
import { TopicList } from './TopicList';

/** Everything after startup: onboarding until a provider exists, then topics and chat. */
export function Workspace() {
  const backend = useBackend();
  const [providers, setProviders] = useState<Provider[]>();
  const [topics, setTopics] = useState<Topic[]>();
  const [loadError, setLoadError] = useState<ApiFailure>();
  const [actionError, setActionError] = useState<ApiFailure>();
  const [selectedId, setSelectedId] = useState<string | undefined>(topicFromUrl);
  const [view, setView] = useState<'chat' | 'settings'>('chat');
  const [creating, setCreating] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const [assistants, setAssistants] = useState<Assistant[]>([]);
  const [feed] = useState(() => new StatusFeed(backend));
  const [approvals] = useState(() => new ApprovalInbox(backend));
  const feedState = useSyncExternalStore(feed.subscribe, feed.getSnapshot);
  const statuses = feedState.byTopic;
  const looking = useUserIsLooking();

  useEffect(() => {
    // One status subscription per window, for as long as the window lives.
    feed.start();
    return () => feed.stop();
  }, [feed]);

  useEffect(() => {
    // Tool calls waiting for the user change when a topic enters or leaves that state.
    approvals.followStatuses(statuses);
  }, [approvals, statuses]);

  useEffect(
    () =>
      approvals.onNewlyPending((fresh) =>
        notifyApprovals(fresh, (approval) => {
          setSelectedId(approval.topicId);
          setView('chat');
        }),
      ),
    [approvals],
  );

  const [assistantsVersion, setAssistantsVersion] = useState(0);
  useEffect(() => {
    let current = true;
    backend
      .call<Assistant[]>('assistants_list')
      .then((list) => {
        if (current) setAssistants(list);
      })
      .catch(() => {
        // Topics still work without assistants; Settings shows the error when opened.
      });
    return () => {
      current = false;
    };
  }, [backend, assistantsVersion]);

  useEffect(() => {
    // `#topic=<id>` opens that topic, e.g. in a window opened with "Open in new window".
    const onHash = () => {
      const id = topicFromUrl();
      if (id) setSelectedId(id);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  const reloadProviders = useCallback(async () => {
    try {
      setProviders(await backend.call<Provider[]>('providers_list'));
    } catch (failure) {
      setActionError(toApiFailure(failure, 'Could not load the providers'));
    }
  }, [backend]);

  // Bumped by every local change to the topic list. A list fetched before such a change
  // is stale: applying it would drop a topic just created (and jump away from it).
  const topicsVersion = useRef(0);
  const reloadTopics = useCallback(async () => {
    try {
      for (let tries = 0; tries < 3; tries += 1) {
        const version = topicsVersion.current;
        const list = await backend.call<Topic[]>('topics_list');
        if (topicsVersion.current === version) {
          setTopics(list);
          return;
        }
      }
    } catch (failure) {
      setActionError(toApiFailure(failure, 'Could not load the topics'));
    }
  }, [backend]);

  useEffect(() => {
    let current = true;
    const version = topicsVersion.current;
    Promise.all([backend.call<Provider[]>('providers_list'), backend.call<Topic[]>('topics_list')])
      .then(([providerList, topicList]) => {
        if (!current) return;
        setProviders(providerList);
        if (topicsVersion.current === version) setTopics(topicList);
        else void reloadTopics();
      })
      .catch((failure: unknown) => {
        if (current) setLoadError(toApiFailure(failure, 'Could not reach the Colloquy backend'));
      });
    return () => {
      current = false;
    };
  }, [backend, attempt, reloadTopics]);

  const topicList = topics ?? [];
  const selected = topicList.find((topic) => topic.id === selectedId) ?? topicList[0];
  if (selected && topics && selectedId !== selected.id) {
    // The topic shown by default stays shown when the list changes (e.g. another window
    // creates a topic, which then comes first).
    setSelectedId(selected.id);
  }

  useEffect(() => {
    if (selected) rememberTopicInUrl(selected.id);
  }, [selected]);

  const selectedStatus = selected ? statuses.get(selected.id) : undefined;
  const selectedUnseen = selectedStatus?.unseen === true && view === 'chat';
  useEffect(() => {
    // The user sees the topic (it is open and the window focused): its finished reply is seen.
    if (!selected || !selectedUnseen || !looking) return;
    backend.call<null>('topic_mark_seen', { topicId: selected.id } satisfies TopicRequest).catch(() => {
      // Only a badge stays; the next look tries again.
    });
  }, [backend, selected, selectedUnseen, looking]);

  useTopicsFollowStatuses(statuses, topics, reloadTopics);

  const run = async (what: string, action: () => Promise<void>) => {
    setActionError(undefined);
    try {
      await action();
    } catch (failure) {
      setActionError(toApiFailure(failure, what));
    }
  };

  const createTopic = () => {
    setCreating(true);
    void run('Could not create a topic', async () => {
      const topic = await backend.call<Topic>('topic_create', {} satisfies CreateTopic);
      topicsVersion.current += 1;
      setTopics((list) => [topic, ...(list ?? []).filter((t) => t.id !== topic.id)]);
      setSelectedId(topic.id);
      setView('chat');
    }).finally(() => setCreating(false));
  };

  const updateTopic = (request: UpdateTopic, what: string) =>
    void run(what, async () => {
      const topic = await backend.call<Topic>('topic_update', request);
      topicsVersion.current += 1;
      setTopics((list) => (list ?? []).map((t) => (t.id === topic.id ? topic : t)));
    });

  const topicChanged = (topic: Topic) => {
    topicsVersion.current += 1;
    setTopics((list) => (list ?? []).map((t) => (t.id === topic.id ? topic : t)));
  };

  const deleteTopic = (id: string) =>
    void run('Could not delete the topic', async () => {
      await backend.call<null>('topic_delete', { topicId: id } satisfies TopicRequest);
      topicsVersion.current += 1;
      setTopics((list) => (list ?? []).filter((t) => t.id !== id));
      if (selectedId === id) setSelectedId(undefined);
    });

  const onSettled = useCallback(() => void reloadTopics(), [reloadTopics]);

  if (loadError) {
    return (
      <main className="center-screen">
        <div className="card narrow">
          <ErrorNotice
            error={loadError}
            onRetry={() => {
              setLoadError(undefined);
              setAttempt((n) => n + 1);
            }}
          />
        </div>
      </main>
    );
  }
  if (!providers || !topics) {
    return (
      <main className="center-screen muted" role="status">
        Loading Colloquy…
      </main>
    );
  }
  if (providers.length === 0) {
    return <Onboarding onProviderReady={() => void reloadProviders()} />;
  }

  return (
    <ApprovalsContext.Provider value={approvals}>
      <div className="layout">
        <aside className="sidebar">
          <div className="brand">Colloquy</div>
          <ApprovalInboxPanel
            onOpenTopic={(id) => {
              setSelectedId(id);
              setView('chat');
            }}
          />
          <TopicList
            topics={topicList}
            statuses={statuses}
            selectedId={selected?.id}
            creating={creating}
            onSelect={(id) => {
              setSelectedId(id);
              setView('chat');
            }}
            onCreate={createTopic}
            onRename={(id, title) => updateTopic({ id, title }, 'Could not rename the topic')}
            onDelete={deleteTopic}
            onOpenInWindow={(id) =>
              void run('Could not open a new window', () => backend.openWindow(id))
            }
          />
          {!feedState.connected && feedState.error && (
            <p className="muted small feed-notice" role="status" title={feedState.error.message}>
              Reconnecting to topic statuses…
            </p>
          )}
          <button
            type="button"
            className={`button ghost settings-button${view === 'settings' ? ' active' : ''}`}
            data-testid="settings-button"
            onClick={() => setView(view === 'settings' ? 'chat' : 'settings')}
          >
            ⚙ Settings
          </button>
        </aside>
        <main className="main">
          {actionError && <ErrorNotice error={actionError} onDismiss={() => setActionError(undefined)} />}
          {view === 'settings' ? (
            <SettingsView
              providers={providers}
              topics={topicList}
              onProvidersChanged={() => void reloadProviders()}
              onAssistantsChanged={() => setAssistantsVersion((n) => n + 1)}
              onClose={() => setView('chat')}
            />
          ) : selected ? (
            <ChatView
              key={selected.id}
              topic={selected}
              providers={providers}
              assistants={assistants}
              status={selectedStatus?.status}
              onTopicModelChange={(model: ModelRef) => updateTopic({ id: selected.id, model }, 'Could not change the model')}
              onTopicChanged={topicChanged}
              onSettled={onSettled}
            />
          ) : (
            <div className="center-screen">
              <div className="card narrow">
                <h2>No topic open</h2>
                <p className="muted">Start a new topic to chat with {providers[0]?.defaultModel ?? 'a model'}.</p>
                <button type="button" className="button primary" onClick={createTopic} disabled={creating}>
                  New topic
                </button>
              </div>
            </div>
          )}
        </main>
      </div>
    </ApprovalsContext.Provider>
  );
}

/** The topic named by `#topic=<id>` (or the older `?topic=<id>`) in the address. */
function topicFromUrl(): string | undefined {
  const fromHash = new URLSearchParams(window.location.hash.replace(/^#/, '')).get('topic');
  return fromHash ?? new URLSearchParams(window.location.search).get('topic') ?? undefined;
}

/** Keeps the open topic in the address (`#topic=<id>`) so a reload comes back to it. */
function rememberTopicInUrl(id: string): void {
  const url = new URL(window.location.href);
  const hash = new URLSearchParams(url.hash.replace(/^#/, ''));
  if (hash.get('topic') === id && !url.searchParams.has('topic')) return;
  hash.set('topic', id);
  url.searchParams.delete('topic');
  url.hash = hash.toString();
  window.history.replaceState(window.history.state, '', url);
}

/** True while the window is visible and focused: what the user sees, they have seen. */
function useUserIsLooking(): boolean {
  const subscribe = useCallback((changed: () => void) => {
    window.addEventListener('focus', changed);
    window.addEventListener('blur', changed);
    document.addEventListener('visibilitychange', changed);
    return () => {
      window.removeEventListener('focus', changed);
      window.removeEventListener('blur', changed);
      document.removeEventListener('visibilitychange', changed);
    };
  }, []);
  return useSyncExternalStore(subscribe, () => document.visibilityState === 'visible' && document.hasFocus());
}

/**
 * Reads the topic list again when the status feed shows a topic this window does not
 * list (created in another window) or a reply finishing (a first reply names its topic).
 */
function useTopicsFollowStatuses(
  statuses: ReadonlyMap<string, TopicStatusEvent>,
  topics: Topic[] | undefined,
  reloadTopics: () => Promise<void>,
) {
  const previous = useRef(statuses);
  useEffect(() => {
    const before = previous.current;
    previous.current = statuses;
    if (!topics || before === statuses) return;
    const listed = new Set(topics.map((topic) => topic.id));
    const unknown = [...statuses.keys()].some((id) => !listed.has(id));
    const finished = [...statuses.values()].some((event) => {
      const earlier = before.get(event.topicId);
      return event.status !== earlier?.status && (event.status === 'done' || event.status === 'error' || event.status === 'aborted');
    });
    if (unknown || finished) void reloadTopics();
  }, [statuses, topics, reloadTopics]);
}
