import { useCallback, useEffect, useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { CreateTopic, ModelRef, Provider, Topic, TopicRequest, UpdateTopic } from '../protocol.gen';
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

  const reloadProviders = useCallback(async () => {
    try {
      setProviders(await backend.call<Provider[]>('providers_list'));
    } catch (failure) {
      setActionError(toApiFailure(failure, 'Could not load the providers'));
    }
  }, [backend]);

  const reloadTopics = useCallback(async () => {
    try {
      setTopics(await backend.call<Topic[]>('topics_list'));
    } catch (failure) {
      setActionError(toApiFailure(failure, 'Could not load the topics'));
    }
  }, [backend]);

  useEffect(() => {
    let current = true;
    Promise.all([backend.call<Provider[]>('providers_list'), backend.call<Topic[]>('topics_list')])
      .then(([providerList, topicList]) => {
        if (!current) return;
        setProviders(providerList);
        setTopics(topicList);
      })
      .catch((failure: unknown) => {
        if (current) setLoadError(toApiFailure(failure, 'Could not reach the Colloquy backend'));
      });
    return () => {
      current = false;
    };
  }, [backend, attempt]);

  const topicList = topics ?? [];
  const selected = topicList.find((topic) => topic.id === selectedId) ?? topicList[0];

  useEffect(() => {
    if (selected) rememberTopicInUrl(selected.id);
  }, [selected]);

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
      setTopics((list) => [topic, ...(list ?? []).filter((t) => t.id !== topic.id)]);
      setSelectedId(topic.id);
      setView('chat');
    }).finally(() => setCreating(false));
  };

  const updateTopic = (request: UpdateTopic, what: string) =>
    void run(what, async () => {
      const topic = await backend.call<Topic>('topic_update', request);
      setTopics((list) => (list ?? []).map((t) => (t.id === topic.id ? topic : t)));
    });

  const deleteTopic = (id: string) =>
    void run('Could not delete the topic', async () => {
      await backend.call<null>('topic_delete', { topicId: id } satisfies TopicRequest);
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
    <div className="layout">
      <aside className="sidebar">
        <div className="brand">Colloquy</div>
        <TopicList
          topics={topicList}
          selectedId={selected?.id}
          creating={creating}
          onSelect={(id) => {
            setSelectedId(id);
            setView('chat');
          }}
          onCreate={createTopic}
          onRename={(id, title) => updateTopic({ id, title }, 'Could not rename the topic')}
          onDelete={deleteTopic}
        />
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
          <SettingsView providers={providers} onProvidersChanged={() => void reloadProviders()} onClose={() => setView('chat')} />
        ) : selected ? (
          <ChatView
            key={selected.id}
            topic={selected}
            providers={providers}
            onTopicModelChange={(model: ModelRef) => updateTopic({ id: selected.id, model }, 'Could not change the model')}
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
  );
}

function topicFromUrl(): string | undefined {
  return new URLSearchParams(window.location.search).get('topic') ?? undefined;
}

/** Keeps the open topic in the address so a reload comes back to it. */
function rememberTopicInUrl(id: string): void {
  const url = new URL(window.location.href);
  if (url.searchParams.get('topic') === id) return;
  url.searchParams.set('topic', id);
  window.history.replaceState(window.history.state, '', url);
}
