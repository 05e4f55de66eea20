import { useState } from 'react';
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
}

/** One open chat topic: its header (title, assistant, folder, settings, model) over the conversation. */
export function ChatView({ topic, providers, assistants, status, onTopicModelChange, onTopicChanged, onSettled }: ChatViewProps) {
  const assistant = assistants.find((candidate) => candidate.id === topic.assistantId);
  const models = useTurnModels(topic, providers, assistant);

  const header = (
    <header className="chat-header">
      <div className="chat-title">
        <h2 title={topic.title}>{topic.title || 'Untitled'}</h2>
        <div className="chat-subtitle small muted">
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
    <TopicUsageProvider topicId={topic.id} status={status}>
      <ConversationView
        topicId={topic.id}
        header={header}
        providers={providers}
        status={status}
        features={CHAT_FEATURES}
        models={models.value}
        onModelsChange={models.set}
        onSettled={onSettled}
      />
    </TopicUsageProvider>
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
