import { useCallback, useState } from 'react';
import { CHAT_FEATURES } from '../chat/features';
import { modelKey, savesAsTopicModel, turnModels } from '../chat/turnModels';
import type { Assistant, ModelRef, PathVersion, Provider, Topic, TopicStatus } from '../protocol.gen';
import { ConversationView } from './ConversationView';
import { FolderIcon } from './Icons';
import { ModelPicker } from './ModelPicker';
import { folderName, TopicSettings } from './TopicSettings';
import { TopicUsageProvider } from './TopicUsageContext';
import { TopicUsageTotal } from './TopicUsageTotal';

interface ChatViewProps {
  topic: Topic;
  providers: Provider[];
  assistants: Assistant[];
  /** The topic's status from the window's status feed. */
  status: TopicStatus | undefined;
  /** A model picked alone in the composer becomes the topic's model (see `savesAsTopicModel`). */
  onTopicModelChange: (model: ModelRef) => void;
  /** The topic was changed here (assistant, workspace). */
  onTopicChanged: (topic: Topic) => void;
  /** The topic this one was forked from, when it still exists. */
  origin: Topic | undefined;
  /** See `ConversationView`. */
  pathVersion: PathVersion | undefined;
  /** Changes whenever a turn started in the topic. */
  turnStarts?: number;
  onOpenTopic: (topicId: string) => void;
  onForked: (topic: Topic) => void;
  /** A message was sent (or queued) here: the topic is in use. */
  onMessageSent?: (() => void) | undefined;
}

/**
 * One open chat topic: its header (title, assistant, folder, settings) over the
 * conversation. The composer's model picker is the one place that says and picks which
 * models answer the next message.
 */
export function ChatView(props: ChatViewProps) {
  const { topic, providers, assistants, status, onTopicModelChange, onTopicChanged, origin, pathVersion, turnStarts, onOpenTopic, onForked, onMessageSent } =
    props;
  const assistant = assistants.find((candidate) => candidate.id === topic.assistantId);
  const turn = useTurnModels(topic, providers, assistant);
  const pick = (models: ModelRef[]) => {
    turn.set(models);
    const saved = savesAsTopicModel(models, turn.value.standingSource, topic.model);
    if (saved) onTopicModelChange(saved);
  };
  // Each settled reply reads the usage again: a short reply can start and end between two
  // renders, leaving `status` where it was.
  const [settledCount, setSettledCount] = useState(0);
  // Stable (the session keeps the first).
  const handleSettled = useCallback(() => setSettledCount((count) => count + 1), []);

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
        models={turn.value.models}
        pickedModels={turn.value.source === 'picked' ? turn.value.models : undefined}
        modelPicker={<ModelPicker providers={providers} turn={turn.value} assistantName={assistant?.name} onChange={pick} />}
        onMessageSent={onMessageSent}
        onSettled={handleSettled}
        pathVersion={pathVersion}
        turnStarts={turnStarts}
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
 * The models the next message goes to: the standing choice (the assistant's models, the
 * topic's model, the first provider's default) until the user picks others in the
 * composer; when the standing choice changes (another assistant, the topic's model
 * changed here or elsewhere), the picks start over from it.
 */
function useTurnModels(topic: Topic, providers: Provider[], assistant: Assistant | undefined) {
  const standing = turnModels(topic.model, assistant, providers, []);
  const baseKey = `${standing.standingSource}:${standing.standing.map(modelKey).join('|')}`;
  const [picked, setPicked] = useState<{ base: string; models: ModelRef[] }>({ base: baseKey, models: [] });
  if (picked.base !== baseKey) {
    // The standing choice changed: start over from it (adjusting state during render, as
    // React recommends over an effect), so an old pick never comes back.
    setPicked({ base: baseKey, models: [] });
  }
  const value = picked.base === baseKey ? turnModels(topic.model, assistant, providers, picked.models) : standing;
  return { value, set: (models: ModelRef[]) => setPicked({ base: baseKey, models }) };
}
