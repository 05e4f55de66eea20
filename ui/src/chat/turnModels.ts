import type { Assistant, ModelRef, Provider } from '../protocol.gen';

/** A stable string for a model of a provider (two providers may offer the same model). */
export function modelKey(model: ModelRef): string {
  return JSON.stringify([model.providerId, model.model]);
}

/** Whether two lists name the same models in the same order. */
export function sameModels(a: readonly ModelRef[], b: readonly ModelRef[]): boolean {
  return a.length === b.length && a.every((model, index) => modelKey(model) === modelKey(b[index] as ModelRef));
}

/** The model a turn in this topic goes to: the topic's, else the first provider's default. */
export function effectiveModel(topicModel: ModelRef | undefined, providers: readonly Provider[]): ModelRef | undefined {
  if (topicModel) return topicModel;
  const first = providers[0];
  return first ? { providerId: first.id, model: first.defaultModel } : undefined;
}

/**
 * Where the models of the next message come from: picked in this window, the topic's
 * assistant, the topic's own model, or (none of those) the first provider's default.
 */
export type TurnModelsSource = 'picked' | 'assistant' | 'topic' | 'default';

export interface TurnModels {
  /** The models the next message sent from this window goes to. */
  models: ModelRef[];
  /**
   * What the backend asks when a message names no models (a queued or steering message,
   * another window that picked nothing): the assistant's models, else the topic's model,
   * else the first provider's default — `stream_open`'s own rule.
   */
  standing: ModelRef[];
  source: TurnModelsSource;
  /** Where `standing` comes from. */
  standingSource: Exclude<TurnModelsSource, 'picked'>;
}

/**
 * The models of the next message: `picked` (the user's choice in this window) when it
 * names a model that still exists, else the standing choice.
 */
export function turnModels(
  topicModel: ModelRef | undefined,
  assistant: Pick<Assistant, 'models'> | undefined,
  providers: readonly Provider[],
  picked: readonly ModelRef[],
): TurnModels {
  const exists = (model: ModelRef) => providers.some((provider) => provider.id === model.providerId);
  const assistantModels = (assistant?.models ?? []).filter(exists);
  const topic = effectiveModel(topicModel, providers);
  const standing = assistantModels.length > 0 ? assistantModels : topic ? [topic] : [];
  const standingSource: TurnModels['standingSource'] = assistantModels.length > 0 ? 'assistant' : topicModel ? 'topic' : 'default';
  const known = picked.filter(exists);
  if (known.length === 0 || sameModels(known, standing)) return { models: standing, standing, source: standingSource, standingSource };
  return { models: known, standing, source: 'picked', standingSource };
}

/**
 * Whether picking `models` should be saved as the topic's model: one model, when the topic
 * has no assistant choosing its models (the backend would not use it then), and not the
 * one it has.
 */
export function savesAsTopicModel(
  models: readonly ModelRef[],
  standingSource: TurnModels['standingSource'],
  topicModel: ModelRef | undefined,
): ModelRef | undefined {
  const [only] = models;
  if (models.length !== 1 || !only || standingSource === 'assistant') return undefined;
  if (topicModel && modelKey(topicModel) === modelKey(only)) return undefined;
  return only;
}
