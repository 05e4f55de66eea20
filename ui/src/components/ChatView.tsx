import { useCallback, useState } from 'react';
import { CHAT_FEATURES } from '../chat/features';
import type { Assistant, ModelRef, Provider, Topic, TopicStatus } from '../protocol.gen';
import { ConversationView } from './ConversationView';
import { FolderIcon } from './Icons';
import { effectiveModel, modelKey, ModelPicker } from './ModelPicker';
import { folderName, TopicSettings } from './TopicSettings';
import { TopicUsageProvider } from './TopicUsageContext';
import { TopicUsageTotal } from './TopicUsageTotal';

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
  /** The topic this one was forked from, when it still exists. */
  origin: Topic | undefined;
  /** See `ConversationView`. */
  pathVersion: number;
  onOpenTopic: (topicId: string) => void;
  onForked: (topic: Topic) => void;
}

/** One open chat topic: its header (title, assistant, folder, settings, model) over the conversation. */
export function ChatView(props: ChatViewProps) {
  const { topic, providers, assistants, status, onTopicModelChange, onTopicChanged, onSettled, origin, pathVersion, onOpenTopic, onForked } = props;
  const assistant = assistants.find((candidate) => candidate.id === topic.assistantId);
  const models = useTurnModels(topic, providers, assistant);
  // Each settled reply reads the usage again: a short reply can start and end between two
  // renders, leaving `status` where it was.
  const [settledCount, setSettledCount] = useState(0);
  // `onSettled` is stable in the parent, and so is this (the session keeps the first).
  const handleSettled = useCallback(() => {
    setSettledCount((count) => count + 1);
    onSettled();
  }, [onSettled]);

  const header = (
    <header className="chat-header">
      <div className="chat-title">
        <h2 title={topic.title}>{topic.title || 'Untitled'}</h2>
        <div className="chat-subtitle small muted">
          {topic.forkedFrom && <ForkedFrom origin={origin} onOpen={onOpenTopic} />}
          {assistant && <span data-testid="topic-assistant-name">{assistant.name}</span>}
          {topic.workspace && (
            <span className="topic-workspace" data-testid="topic-workspace" title={`Workspace folder: ${topic.workspace}`}>
              <FolderIcon /> {folderName(topic.workspace)}
            </span>
          )}
          <TopicUsageTotal />
        </div>
      </div>
      <div className="chat-header-actions">
        <TopicSettings topic={topic} assistants={assistants} onTopicChanged={onTopicChanged} />
        <ModelPicker providers={providers} value={topic.model} onChange={onTopicModelChange} />
      </div>
    </header>
  );

  return (
    <TopicUsageProvider topicId={topic.id} status={status} settledCount={settledCount}>
      <ConversationView
        topicId={topic.id}
        header={header}
        providers={providers}
        status={status}
        features={CHAT_FEATURES}
        models={models.value}
        onModelsChange={models.set}
        onSettled={handleSettled}
        pathVersion={pathVersion}
        onForked={onForked}
      />
    </TopicUsageProvider>
  );
}

/** Where a forked topic came from: its origin (a link to it), or that it was deleted since. */
function ForkedFrom({ origin, onOpen }: { origin: Topic | undefined; onOpen: (topicId: string) => void }) {
  if (!origin) {
    return (
      <span className="topic-forked-from" data-testid="topic-forked-from" data-origin="deleted">
        Forked from a deleted topic
      </span>
    );
  }
  return (
    <span className="topic-forked-from" data-testid="topic-forked-from" data-origin={origin.id}>
      Forked from{' '}
      <button type="button" className="link-button" data-testid="topic-forked-from-link" title="Open the topic this one was forked from" onClick={() => onOpen(origin.id)}>
        {origin.title || 'Untitled'}
      </button>
    </span>
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
