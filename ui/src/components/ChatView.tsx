import { useChat } from '@ai-sdk/react';
import { useCallback, useEffect, useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import { chatHistory, type ChatMessage } from '../chat/messages';
import { TopicSession } from '../chat/session';
import type { ModelRef, Provider, StoredMessage, Topic, TopicRequest } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { Composer } from './Composer';
import { ErrorNotice } from './ErrorNotice';
import { MessageList } from './MessageList';
import { effectiveModel, ModelPicker } from './ModelPicker';

interface ChatViewProps {
  topic: Topic;
  providers: Provider[];
  onTopicModelChange: (model: ModelRef) => void;
  /** A reply ended and stored state was re-read: the topic list may have changed. */
  onSettled: () => void;
}

/** Loads a topic's history, then shows the conversation. Keyed by topic id by its parent. */
export function ChatView({ topic, providers, onTopicModelChange, onSettled }: ChatViewProps) {
  const backend = useBackend();
  const [history, setHistory] = useState<ChatMessage[]>();
  const [error, setError] = useState<ApiFailure>();
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let current = true;
    backend
      .call<StoredMessage[]>('messages_list', { topicId: topic.id } satisfies TopicRequest)
      .then((stored) => {
        if (current) setHistory(chatHistory(stored).messages);
      })
      .catch((failure: unknown) => {
        if (current) setError(toApiFailure(failure, 'Could not load this topic'));
      });
    return () => {
      current = false;
    };
  }, [backend, topic.id, attempt]);

  const header = (
    <header className="chat-header">
      <h2 title={topic.title}>{topic.title || 'Untitled'}</h2>
      <ModelPicker providers={providers} value={topic.model} onChange={onTopicModelChange} />
    </header>
  );

  if (error) {
    return (
      <section className="chat">
        {header}
        <div className="chat-status">
          <ErrorNotice
            error={error}
            onRetry={() => {
              setError(undefined);
              setAttempt((n) => n + 1);
            }}
          />
        </div>
      </section>
    );
  }
  if (!history) {
    return (
      <section className="chat">
        {header}
        <div className="chat-status muted" role="status">
          Loading messages…
        </div>
      </section>
    );
  }
  return <Conversation topic={topic} providers={providers} history={history} header={header} onSettled={onSettled} />;
}

interface ConversationProps {
  topic: Topic;
  providers: Provider[];
  history: ChatMessage[];
  header: React.ReactNode;
  onSettled: () => void;
}

function Conversation({ topic, providers, history, header, onSettled }: ConversationProps) {
  const backend = useBackend();
  const [sessionError, setSessionError] = useState<ApiFailure>();
  const [stopping, setStopping] = useState(false);
  const [unsent, setUnsent] = useState<{ text: string }>();
  const [session] = useState(
    () => new TopicSession(backend, topic.id, history, { onSettled, onError: (failure) => setSessionError(failure) }),
  );
  const { messages, status, error, clearError } = useChat<ChatMessage>({ chat: session.chat, experimental_throttle: 40 });

  useEffect(() => {
    session.open();
    return () => session.close();
  }, [session]);

  const streaming = status === 'submitted' || status === 'streaming';
  const last = messages[messages.length - 1];
  const liveId = streaming && last?.role === 'assistant' ? last.id : undefined;
  const waiting = streaming && last?.role !== 'assistant';

  const send = useCallback(
    (text: string) => {
      setSessionError(undefined);
      // Without a topic model, the turn goes to the first provider's default model.
      const model = topic.model ? undefined : effectiveModel(undefined, providers);
      void session.send(text, model).then(({ unsent: text }) => {
        if (text !== undefined) setUnsent({ text });
      });
    },
    [session, topic.model, providers],
  );

  const stop = useCallback(() => {
    setStopping(true);
    void session.stop().finally(() => setStopping(false));
  }, [session]);

  const shownError = sessionError ?? (error ? toApiFailure(error, 'The reply failed') : undefined);

  return (
    <section className="chat">
      {header}
      <MessageList messages={messages} liveId={liveId} waiting={waiting} />
      <div className="chat-footer">
        {shownError && (
          <ErrorNotice
            error={shownError}
            onDismiss={() => {
              setSessionError(undefined);
              clearError();
            }}
          />
        )}
        <Composer streaming={streaming} stopping={stopping} restoredText={unsent} onSend={send} onStop={stop} />
      </div>
    </section>
  );
}
