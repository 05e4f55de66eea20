import { useCallback, useEffect, useState, useSyncExternalStore } from 'react';
import { isAgentTopic, openConversation, openId, sessionAsTopic } from '../agents/sessions';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import { takeEarlyList } from '../backend/early';
import { ApprovalInbox } from '../chat/approvals';
import type {
  AgentSession,
  Assistant,
  CreateTopic,
  ListVersion,
  MessageRequest,
  ModelRef,
  Provider,
  SearchHit,
  Topic,
  TopicRequest,
  UpdateTopic,
} from '../protocol.gen';
import { ShortcutRegistry, ShortcutRegistryContext, useKeyboardShortcuts, useShortcutHandlers } from '../keyboard/keyHandler';
import { revealMessage } from '../search/revealMessage';
import { listChange, StatusFeed, topicPath, turnStarts } from '../status/feed';
import { ListFollower } from '../status/listFollower';
import { notifyApprovals } from '../status/notifications';
import { AgentSessionList } from './AgentSessionList';
import { AgentSessionView } from './AgentSessionView';
import { ApprovalInboxPanel } from './ApprovalInboxPanel';
import { ApprovalsContext } from './ApprovalsContext';
import { useBackend } from './BackendContext';
import { ChatView } from './ChatView';
import { ErrorNotice } from './ErrorNotice';
import { FindInTopic } from './FindInTopic';
import { NewAgentSessionForm, Onboarding, SettingsView } from './LazyViews';
import { SearchPalette } from './SearchPalette';
import { ShortcutsSheet } from './ShortcutsSheet';
import { Sidebar } from './Sidebar';
import { needsAttention, TopicList } from './TopicList';
import { useSidebarLayout } from './useSidebarLayout';
import { useUntouchedTopicCleanup } from './useUntouchedTopicCleanup';

type SidebarSection = 'topics' | 'agents';

/**
 * Everything after startup: onboarding until a provider exists, then the sidebar (topics
 * or agent sessions) and the open conversation, or settings.
 */
export function Workspace() {
  const backend = useBackend();
  const [providers, setProviders] = useState<Provider[]>();
  const [topics, setTopics] = useState<Topic[]>();
  const [sessions, setSessions] = useState<AgentSession[]>();
  const [sessionsError, setSessionsError] = useState<ApiFailure>();
  const [loadError, setLoadError] = useState<ApiFailure>();
  const [actionError, setActionError] = useState<ApiFailure>();
  /** A chat topic's id or an agent session's topic id (`agent-session:<id>`). */
  const [selectedId, setSelectedId] = useState<string | undefined>(topicFromUrl);
  const [sidebar, setSidebar] = useState<SidebarSection>(() => (isAgentTopic(topicFromUrl()) ? 'agents' : 'topics'));
  const [view, setView] = useState<'chat' | 'settings' | 'new-session'>('chat');
  const [creating, setCreating] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const [assistants, setAssistants] = useState<Assistant[]>([]);
  const [feed] = useState(() => new StatusFeed(backend));
  const [approvals] = useState(() => new ApprovalInbox(backend));
  const feedState = useSyncExternalStore(feed.subscribe, feed.getSnapshot);
  const statuses = feedState.byTopic;
  const looking = useUserIsLooking();
  const [searching, setSearching] = useState(false);
  const [finding, setFinding] = useState(false);
  const [showingShortcuts, setShowingShortcuts] = useState(false);
  const sidebarLayout = useSidebarLayout();
  const { closeOverlay } = sidebarLayout;
  // The window's one key handler; what each shortcut does is registered below and by the open conversation.
  const [shortcuts] = useState(() => new ShortcutRegistry());
  useKeyboardShortcuts(shortcuts);
  /** A message opened from search, to scroll to and highlight once shown. */
  const [reveal, setReveal] = useState<{ messageId: string; at: number }>();

  useEffect(() => {
    // One status subscription per window, for as long as the window lives.
    feed.start();
    return () => feed.stop();
  }, [feed]);

  useEffect(() => {
    // Tool calls waiting for the user change when a topic enters or leaves that state.
    approvals.followStatuses(statuses);
  }, [approvals, statuses]);

  /** Shows a topic or an agent session, with its list in the sidebar. */
  const select = useCallback(
    (id: string) => {
      setSelectedId(id);
      setView('chat');
      setSidebar(isAgentTopic(id) ? 'agents' : 'topics');
      closeOverlay();
    },
    [closeOverlay],
  );

  useEffect(() => approvals.onNewlyPending((fresh) => notifyApprovals(fresh, (approval) => select(approval.topicId))), [approvals, select]);

  const [assistantsVersion, setAssistantsVersion] = useState(0);
  useEffect(() => {
    let current = true;
    backend
      .call('assistants_list')
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
      if (id) select(id);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, [select]);

  const reloadProviders = useCallback(async () => {
    try {
      setProviders(await backend.call('providers_list'));
    } catch (failure) {
      setActionError(toApiFailure(failure, 'Could not load the providers'));
    }
  }, [backend]);

  // The two lists the sidebar shows are read again only when the status feed tells of a
  // change newer than what was read (see `ListFollower`).
  const [topicsFollower] = useState(
    () =>
      new ListFollower<Topic>(
        async () => {
          const { topics: items, version } = await backend.call('topics_list');
          return { items, version };
        },
        setTopics,
        (failure) => setActionError(toApiFailure(failure, 'Could not load the topics')),
      ),
  );
  // Topics work without the sessions; the Agents list shows why they could not be read.
  const [sessionsFollower] = useState(() => {
    const failed = (failure: unknown) => setSessionsError(toApiFailure(failure, 'Could not load the agent sessions'));
    const follower = new ListFollower<AgentSession>(
      async () => {
        const { sessions: items, version } = await backend.call('agent_sessions_list');
        return { items, version };
      },
      (list) => {
        setSessions(list);
        setSessionsError(undefined);
      },
      failed,
    );
    return { follower, reload: () => void follower.refresh().catch(failed) };
  });

  useEffect(() => sessionsFollower.reload(), [sessionsFollower, attempt]);

  useEffect(() => {
    let current = true;
    // The first read takes the lists asked for as the page loaded (see `backend/early.ts`).
    const early = takeEarlyList('topics_list')?.then(({ topics: items, version }) => ({ items, version }));
    Promise.all([takeEarlyList('providers_list') ?? backend.call('providers_list'), topicsFollower.refresh(early)])
      .then(([providerList]) => {
        if (current) setProviders(providerList);
      })
      .catch((failure: unknown) => {
        if (current) setLoadError(toApiFailure(failure, 'Could not reach the Colloquy backend'));
      });
    return () => {
      current = false;
    };
  }, [backend, attempt, topicsFollower]);

  useListFollowsFeed(topicsFollower, listChange(feedState, 'topics'));
  useListFollowsFeed(sessionsFollower.follower, listChange(feedState, 'agent_sessions'));

  const topicList = topics ?? [];
  // Sessions that cannot be read do not keep a deep link waiting: it falls back to a topic.
  const open = openConversation(selectedId, topicList, sessions ?? (sessionsError ? [] : undefined));
  const shownId = openId(open);
  if (shownId !== undefined && topics && selectedId !== shownId) {
    // The topic shown by default stays shown when the list changes (e.g. another window
    // creates a topic, which then comes first).
    setSelectedId(shownId);
  }

  useEffect(() => {
    if (shownId) rememberTopicInUrl(shownId);
  }, [shownId]);

  const selectedStatus = shownId ? statuses.get(shownId) : undefined;
  const selectedUnseen = selectedStatus?.unseen === true && view === 'chat';
  useEffect(() => {
    // The user sees the topic (it is open and the window focused): its finished reply is seen.
    if (!shownId || !selectedUnseen || !looking) return;
    backend.call('topic_mark_seen', { topicId: shownId } satisfies TopicRequest).catch(() => {
      // Only a badge stays; the next look tries again.
    });
  }, [backend, shownId, selectedUnseen, looking]);

  const topicRemoved = useCallback((id: string) => {
    topicsFollower.changedHere();
    setTopics((list) => (list ?? []).filter((t) => t.id !== id));
  }, [topicsFollower]);
  const untouched = useUntouchedTopicCleanup(backend, shownId, topics, statuses, topicRemoved);

  const conversationOpen = view === 'chat' && (open.kind === 'topic' || open.kind === 'session');
  useEffect(() => (reveal ? revealMessage(reveal.messageId) : undefined), [reveal]);

  const run = async (what: string, action: () => Promise<void>) => {
    setActionError(undefined);
    try {
      await action();
    } catch (failure) {
      setActionError(toApiFailure(failure, what));
    }
  };

  const openHit = (hit: SearchHit) => {
    setSearching(false);
    void run('Could not open the message', async () => {
      if (!hit.onActivePath) {
        // Its branch becomes the one the topic shows (an open topic re-reads it on `path_changed`).
        await backend.call('message_select', { topicId: hit.topicId, messageId: hit.messageId } satisfies MessageRequest);
      }
      select(hit.topicId);
      setReveal({ messageId: hit.messageId, at: Date.now() });
    });
  };

  const createTopic = () => {
    setCreating(true);
    return run('Could not create a topic', async () => {
      const topic = await backend.call('topic_create', {} satisfies CreateTopic);
      untouched.madeHere(topic);
      topicsFollower.changedHere();
      setTopics((list) => [topic, ...(list ?? []).filter((t) => t.id !== topic.id)]);
      select(topic.id);
    }).finally(() => setCreating(false));
  };

  const sessionCreated = (session: AgentSession) => {
    sessionsFollower.follower.changedHere();
    setSessions((list) => [session, ...(list ?? []).filter((s) => s.id !== session.id)]);
    select(session.topicId);
  };

  const sessionChanged = useCallback((session: AgentSession) => {
    sessionsFollower.follower.changedHere();
    setSessions((list) => (list ?? []).map((s) => (s.id === session.id ? session : s)));
  }, [sessionsFollower]);

  const sessionDeleted = (id: string) => {
    sessionsFollower.follower.changedHere();
    const rest = (sessions ?? []).filter((s) => s.id !== id);
    setSessions(rest);
    const next = rest[0];
    if (next) select(next.topicId);
    else setSelectedId(undefined);
  };

  const updateTopic = (request: UpdateTopic, what: string) =>
    void run(what, async () => {
      const topic = await backend.call('topic_update', request);
      topicsFollower.changedHere();
      setTopics((list) => (list ?? []).map((t) => (t.id === topic.id ? topic : t)));
    });

  const topicChanged = (topic: Topic) => {
    topicsFollower.changedHere();
    setTopics((list) => (list ?? []).map((t) => (t.id === topic.id ? topic : t)));
  };

  const deleteTopic = (id: string) =>
    void run('Could not delete the topic', async () => {
      await backend.call('topic_delete', { topicId: id } satisfies TopicRequest);
      topicsFollower.changedHere();
      setTopics((list) => (list ?? []).filter((t) => t.id !== id));
      if (selectedId === id) setSelectedId(undefined);
    });

  /** "Fork from here" made a topic: list it first and open it. */
  const topicForked = useCallback(
    (topic: Topic) => {
      topicsFollower.changedHere();
      setTopics((list) => [topic, ...(list ?? []).filter((t) => t.id !== topic.id)]);
      select(topic.id);
    },
    [select, topicsFollower],
  );

  const toggleSettings = () => {
    setView(view === 'settings' ? 'chat' : 'settings');
    closeOverlay();
  };

  /** The next or previous conversation in the sidebar's list, shown. */
  const openNeighbour = (step: 1 | -1) => {
    const ids = sidebar === 'topics' ? topicList.map((topic) => topic.id) : (sessions ?? []).map((session) => session.topicId);
    if (ids.length === 0) return false;
    const at = shownId === undefined ? -1 : ids.indexOf(shownId);
    const next = ids[at < 0 ? 0 : Math.min(ids.length - 1, Math.max(0, at + step))];
    if (next !== undefined) select(next);
    return true;
  };

  const ready = providers !== undefined && providers.length > 0 && topics !== undefined;
  useShortcutHandlers(shortcuts, {
    shortcuts: () => {
      if (!ready) return false;
      setSearching(false);
      setShowingShortcuts((shown) => !shown);
      return true;
    },
    search: () => {
      if (!ready) return false;
      setShowingShortcuts(false);
      setFinding(false);
      setSearching(true);
      return true;
    },
    find: () => {
      if (!conversationOpen) return false;
      setSearching(false);
      setFinding(true);
      // Pressed again while open: select the text to type a new search.
      const input = document.querySelector<HTMLInputElement>('[data-testid="find-input"]');
      input?.focus();
      input?.select();
      return true;
    },
    settings: () => {
      if (!ready) return false;
      setView('settings');
      closeOverlay();
      return true;
    },
    'new-topic': () => {
      if (!ready) return false;
      if (!creating) createTopic();
      return true;
    },
    'previous-topic': () => ready && openNeighbour(-1),
    'next-topic': () => ready && openNeighbour(1),
  });


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
    // The first provider is ready: the user lands in a new topic, ready to type.
    return <Onboarding onProviderReady={() => void createTopic().then(reloadProviders)} />;
  }

  return (
    <ShortcutRegistryContext.Provider value={shortcuts}>
      <ApprovalsContext.Provider value={approvals}>
        <div className="layout">
          <Sidebar
            layout={sidebarLayout}
            settingsOpen={view === 'settings'}
            creating={creating}
            onNewTopic={createTopic}
            onSearch={() => setSearching(true)}
            onSettings={toggleSettings}
            onShortcuts={() => setShowingShortcuts(true)}
          >
            <ApprovalInboxPanel onOpenTopic={select} />
            <SidebarTabs
              section={sidebar}
              onSection={setSidebar}
              attention={{
                topics: topicList.some((topic) => needsAttention(statuses.get(topic.id))),
                agents: (sessions ?? []).some((session) => needsAttention(statuses.get(session.topicId))),
              }}
            />
            {sidebar === 'topics' ? (
              <TopicList
                topics={topicList}
                statuses={statuses}
                selectedId={shownId}
                creating={creating}
                onSelect={select}
                onCreate={createTopic}
                onRename={(id, title) => updateTopic({ id, title }, 'Could not rename the topic')}
                onDelete={deleteTopic}
                onOpenInWindow={(id) => {
                  untouched.keep(id);
                  void run('Could not open a new window', () => backend.openWindow(id));
                }}
              />
            ) : (
              <AgentSessionList
                sessions={sessions}
                error={sessionsError}
                statuses={statuses}
                selectedId={view === 'chat' ? shownId : undefined}
                creating={view === 'new-session'}
                onSelect={select}
                onNew={() => setView('new-session')}
                onOpenInWindow={(id) => void run('Could not open a new window', () => backend.openWindow(id))}
                onRetry={sessionsFollower.reload}
              />
            )}
            {!feedState.connected && feedState.error && (
              <p className="muted small feed-notice" role="status" title={feedState.error.message}>
                Reconnecting to topic statuses…
              </p>
            )}
          </Sidebar>
          {/* While "New topic" waits for the backend, the topic shown is not written in: text
              typed meanwhile would land in its composer, not the new topic's. */}
          <main className="main" inert={creating}>
            {actionError && <ErrorNotice error={actionError} onDismiss={() => setActionError(undefined)} />}
            {finding && conversationOpen && <FindInTopic onClose={() => setFinding(false)} />}
            {view === 'settings' ? (
              <SettingsView
                providers={providers}
                topics={[...topicList, ...(sessions ?? []).map(sessionAsTopic)]}
                onProvidersChanged={() => void reloadProviders()}
                onAssistantsChanged={() => setAssistantsVersion((n) => n + 1)}
                onClose={() => setView('chat')}
              />
            ) : view === 'new-session' ? (
              <NewAgentSessionForm providers={providers} onCreated={sessionCreated} onCancel={() => setView('chat')} />
            ) : open.kind === 'topic' ? (
              <ChatView
                key={open.topic.id}
                topic={open.topic}
                providers={providers}
                assistants={assistants}
                status={selectedStatus?.status}
                onTopicModelChange={(model: ModelRef) => updateTopic({ id: open.topic.id, model }, 'Could not change the model')}
                onTopicChanged={topicChanged}
                origin={topicList.find((t) => t.id === open.topic.forkedFrom?.topicId)}
                pathVersion={topicPath(feedState, open.topic.id)}
                turnStarts={turnStarts(feedState, open.topic.id)}
                onOpenTopic={select}
                onForked={topicForked}
                onMessageSent={() => untouched.keep(open.topic.id)}
              />
            ) : open.kind === 'session' ? (
              <AgentSessionView
                key={open.session.topicId}
                session={open.session}
                providers={providers}
                status={selectedStatus?.status}
                onSessionChanged={sessionChanged}
                onSessionDeleted={sessionDeleted}
                turnStarts={turnStarts(feedState, open.session.topicId)}
              />
            ) : open.kind === 'loading' ? (
              <div className="center-screen muted" role="status">
                Loading the agent session…
              </div>
            ) : sidebar === 'agents' ? (
              <div className="center-screen">
                <div className="card narrow">
                  <h2>No agent session open</h2>
                  <p className="muted">Start one to let Claude Code work in a folder on this computer, asking you before it changes anything.</p>
                  <button type="button" className="button primary" onClick={() => setView('new-session')}>
                    New agent session
                  </button>
                </div>
              </div>
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
        {searching && (
          <SearchPalette
            topicId={conversationOpen ? shownId : undefined}
            topicTitle={open.kind === 'topic' ? open.topic.title : open.kind === 'session' ? sessionAsTopic(open.session).title : undefined}
            onOpen={openHit}
            onClose={() => setSearching(false)}
          />
        )}
        {showingShortcuts && <ShortcutsSheet onClose={() => setShowingShortcuts(false)} />}
      </ApprovalsContext.Provider>
    </ShortcutRegistryContext.Provider>
  );
}

/** The topic named by `#topic=<id>` (or the older `?topic=<id>`) in the address. */
export function topicFromUrl(): string | undefined {
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
 * Hands the status feed's word on a list to the list's follower, which reads the list
 * again only when that is newer than its last read (by value: the feed's state is a new
 * object with every message).
 */
function useListFollowsFeed<T>(follower: ListFollower<T>, known: ListVersion | undefined) {
  const epoch = known?.epoch;
  const version = known?.version;
  useEffect(() => {
    follower.follow(epoch === undefined || version === undefined ? undefined : { epoch, version });
  }, [follower, epoch, version]);
}

interface SidebarTabsProps {
  section: SidebarSection;
  onSection: (section: SidebarSection) => void;
  /** Whether something in each list wants the user (shown on the other tab). */
  attention: Record<SidebarSection, boolean>;
}

/** Topics or agent sessions in the sidebar. */
function SidebarTabs({ section, onSection, attention }: SidebarTabsProps) {
  const tabs: { id: SidebarSection; label: string }[] = [
    { id: 'topics', label: 'Topics' },
    { id: 'agents', label: 'Agents' },
  ];
  return (
    <div className="sidebar-tabs" role="tablist" aria-label="Conversations">
      {tabs.map((tab) => (
        <button
          key={tab.id}
          type="button"
          role="tab"
          className="sidebar-tab"
          data-testid="sidebar-tab"
          data-section={tab.id}
          aria-selected={section === tab.id}
          onClick={() => onSection(tab.id)}
        >
          {tab.label}
          {attention[tab.id] && section !== tab.id && <span className="topic-unseen" aria-label="needs you" />}
        </button>
      ))}
    </div>
  );
}
