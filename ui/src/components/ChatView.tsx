import { useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { InboxStore } from '../chat/inbox';
import { TopicSession } from '../chat/session';
import type { ModelRef, Provider, Topic, TopicStatus } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ExecutionSourceContext } from './ExecutionSourceContext';
import { Composer } from './Composer';
import { ErrorNotice } from './ErrorNotice';
import { InboxList } from './InboxList';
import { MessageList } from './MessageList';
import { effectiveModel, modelKey, ModelPicker } from './ModelPicker';
import type { ReplyCommands } from './Turn';

interface ChatViewProps {
  topic: Topic;
  providers: Provider[];
  /** The topic's status from the window's status feed. */
  status: TopicStatus | undefined;
  onTopicModelChange: (model: ModelRef) => void;
  /** A reply ended and stored state was re-read: the topic list may have changed. */
  onSettled: () => void;
}

/** One open topic: its conversation, its inbox and the composer. Keyed by topic id by its parent. */
export function ChatView({ topic, providers, status, onTopicModelChange, onSettled }: ChatViewProps) {
  const backend = useBackend();
  // `onSettled` is stable in the parent; the session keeps the first one.
  const [session] = useState(() => new TopicSession(backend, topic.id, { onSettled }));
  const [inbox] = useState(() => new InboxStore(backend, topic.id));
  const state = useSyncExternalStore(session.subscribe, session.getState);
  const [unsent, setUnsent] = useState<{ text: string }>();
  const models = useTurnModels(topic, providers);

  useEffect(() => {
    session.open();
    return () => session.close();
  }, [session]);

  useEffect(() => {
    // A turn started or ended (here or in another window): follow it, and the inbox
    // changes with it (an item ran, or was held after a failure).
    session.setStatus(status);
    void inbox.refresh();
  }, [session, inbox, status]);

  const commands = useMemo<ReplyCommands>(
    () => ({
      retry: (messageId) => session.retry(messageId),
      continueReply: (messageId) => session.continueReply(messageId),
      addModel: (turnId, model) => session.addModel(turnId, model),
    }),
    [session],
  );

  const giveBack = (text: string | undefined) => {
    if (text !== undefined) setUnsent({ text });
  };
  const toInbox = (mode: 'queue' | 'steer') => (text: string) => {
    void inbox.add(text, mode).then((added) => giveBack(added ? undefined : text));
  };

  return (
    <section className="chat">
      <header className="chat-header">
        <h2 title={topic.title}>{topic.title || 'Untitled'}</h2>
        <ModelPicker providers={providers} value={topic.model} onChange={onTopicModelChange} />
      </header>
      {state.loaded ? (
        <ExecutionSourceContext.Provider value={session}>
          <MessageList turns={state.turns} waiting={state.sending} providers={providers} commands={commands} />
        </ExecutionSourceContext.Provider>
      ) : state.loadError ? (
        <div className="chat-status">
          <ErrorNotice error={state.loadError} onRetry={() => session.reload()} />
        </div>
      ) : (
        <div className="chat-status muted" role="status">
          Loading messages…
        </div>
      )}
      <div className="chat-footer">
        {state.error && <ErrorNotice error={state.error} onDismiss={() => session.dismissError()} />}
        <InboxList store={inbox} />
        {state.loaded && (
          <Composer
            busy={state.running}
            stopping={state.stopping}
            restoredText={unsent}
            providers={providers}
            models={models.value}
            onModelsChange={models.set}
            onSend={(text) => void session.send(text, models.value).then(({ unsent }) => giveBack(unsent))}
            onQueue={toInbox('queue')}
            onSteer={toInbox('steer')}
            onInterrupt={(text) => void session.interrupt(text, models.value).then(({ unsent }) => giveBack(unsent))}
            onStop={() => void session.stop()}
          />
        )}
      </div>
    </section>
  );
}

/**
 * The models the next message goes to: the topic's model until the user picks others
 * in the composer; picking another topic model in the header starts over from it.
 */
function useTurnModels(topic: Topic, providers: Provider[]) {
  const fallback = effectiveModel(topic.model, providers);
  const fallbackKey = fallback ? modelKey(fallback) : '';
  const [picked, setPicked] = useState<{ base: string; models: ModelRef[] }>({ base: fallbackKey, models: [] });
  const current = picked.base === fallbackKey ? picked.models : [];
  const known = current.filter((model) => providers.some((provider) => provider.id === model.providerId));
  const value = known.length > 0 ? known : fallback ? [fallback] : [];
  return { value, set: (models: ModelRef[]) => setPicked({ base: fallbackKey, models }) };
}
