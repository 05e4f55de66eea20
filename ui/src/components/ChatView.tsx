import { useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import { encodeAttachment } from '../chat/attachments';
import { InboxStore } from '../chat/inbox';
import { TopicSession } from '../chat/session';
import type { Assistant, ModelRef, Provider, Topic, TopicStatus } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ExecutionSourceContext } from './ExecutionSourceContext';
import { Composer, type OutgoingMessage } from './Composer';
import { ErrorNotice } from './ErrorNotice';
import { InboxList } from './InboxList';
import { MessageList } from './MessageList';
import { effectiveModel, modelKey, ModelPicker } from './ModelPicker';
import { FolderIcon } from './Icons';
import { folderName, TopicSettings } from './TopicSettings';
import type { ReplyCommands } from './Turn';

interface ChatViewProps {
  topic: Topic;
  providers: Provider[];
  assistants: Assistant[];
  /** The topic's status from the window's status feed. */
  status: TopicStatus | undefined;
  onTopicModelChange: (model: ModelRef) => void;
  /** The topic was changed here (assistant, workspace). */
  onTopicChanged: (topic: Topic) => void;
  /** A reply ended and stored state was re-read: the topic list may have changed. */
  onSettled: () => void;
}

/** One open topic: its conversation, its inbox and the composer. Keyed by topic id by its parent. */
export function ChatView({ topic, providers, assistants, status, onTopicModelChange, onTopicChanged, onSettled }: ChatViewProps) {
  const backend = useBackend();
  // `onSettled` is stable in the parent; the session keeps the first one.
  const [session] = useState(() => new TopicSession(backend, topic.id, { onSettled }));
  const [inbox] = useState(() => new InboxStore(backend, topic.id));
  const state = useSyncExternalStore(session.subscribe, session.getState);
  const [unsent, setUnsent] = useState<OutgoingMessage>();
  const [fileError, setFileError] = useState<ApiFailure>();
  const assistant = assistants.find((candidate) => candidate.id === topic.assistantId);
  const models = useTurnModels(topic, providers, assistant);
  const awaitingApproval = status === 'awaiting_approval';

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

  const toInbox = (mode: 'queue' | 'steer') => (text: string) => {
    void inbox.add(text, mode).then((added) => {
      if (!added) setUnsent({ text, files: [] });
    });
  };
  /** Sends (or interrupts with) a message; whatever could not be sent goes back into the composer. */
  const deliver = (how: 'send' | 'interrupt') => (message: OutgoingMessage) => {
    setFileError(undefined);
    void (async () => {
      let attachments;
      try {
        attachments = await Promise.all(message.files.map(encodeAttachment));
      } catch (error) {
        setFileError(toApiFailure(error, 'A file could not be read'));
        setUnsent(message);
        return;
      }
      const run = how === 'send' ? session.send.bind(session) : session.interrupt.bind(session);
      const { unsent } = await run(message.text, models.value, attachments);
      if (unsent !== undefined) setUnsent(message);
    })();
  };

  return (
    <section className="chat">
      <header className="chat-header">
        <div className="chat-title">
          <h2 title={topic.title}>{topic.title || 'Untitled'}</h2>
          {(assistant || topic.workspace) && (
            <div className="chat-subtitle small muted">
              {assistant && <span data-testid="topic-assistant-name">{assistant.name}</span>}
              {topic.workspace && (
                <span className="topic-workspace" data-testid="topic-workspace" title={`Workspace folder: ${topic.workspace}`}>
                  <FolderIcon /> {folderName(topic.workspace)}
                </span>
              )}
            </div>
          )}
        </div>
        <div className="chat-header-actions">
          <TopicSettings topic={topic} assistants={assistants} onTopicChanged={onTopicChanged} />
          <ModelPicker providers={providers} value={topic.model} onChange={onTopicModelChange} />
        </div>
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
        {state.error && (
          <ErrorNotice
            error={state.error}
            hint={
              state.error.kind === 'conflict' && awaitingApproval
                ? 'Answer the tool call waiting above (or press Stop to deny it), then send your message again.'
                : undefined
            }
            onDismiss={() => session.dismissError()}
          />
        )}
        {fileError && <ErrorNotice error={fileError} onDismiss={() => setFileError(undefined)} />}
        <InboxList store={inbox} />
        {state.loaded && (
          <Composer
            busy={state.running}
            stopping={state.stopping}
            awaitingApproval={awaitingApproval}
            restored={unsent}
            providers={providers}
            models={models.value}
            onModelsChange={models.set}
            onSend={deliver('send')}
            onQueue={toInbox('queue')}
            onSteer={toInbox('steer')}
            onInterrupt={deliver('interrupt')}
            onStop={() => void session.stop()}
          />
        )}
      </div>
    </section>
  );
}

/**
 * The models the next message goes to: the topic assistant's models, else the topic's
 * model, until the user picks others in the composer; picking another topic model in the
 * header (or another assistant) starts over from it.
 */
function useTurnModels(topic: Topic, providers: Provider[], assistant: Assistant | undefined) {
  const exists = (model: ModelRef) => providers.some((provider) => provider.id === model.providerId);
  const assistantModels = (assistant?.models ?? []).filter(exists);
  const topicModel = effectiveModel(topic.model, providers);
  const fallback = assistantModels.length > 0 ? assistantModels : topicModel ? [topicModel] : [];
  const fallbackKey = fallback.map(modelKey).join('|');
  const [picked, setPicked] = useState<{ base: string; models: ModelRef[] }>({ base: fallbackKey, models: [] });
  const current = picked.base === fallbackKey ? picked.models : [];
  const known = current.filter(exists);
  const value = known.length > 0 ? known : fallback;
  return { value, set: (models: ModelRef[]) => setPicked({ base: fallbackKey, models }) };
}
