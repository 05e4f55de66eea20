import type { Assistant, AssistantInput, FeatureInfo, ModelRef } from '../protocol.gen';
import type { FieldErrors } from './fieldErrors';
import { draftFromParams, MODEL_PARAMS_FIELDS, paramsFromDraft, type ModelParamsDraft } from './modelParams';

export const DEFAULT_MAX_TOOL_CALLS = 20;

/** An assistant as its form edits it. */
export interface AssistantDraft {
  name: string;
  systemPrompt: string;
  models: ModelRef[];
  /** `all`: every enabled tool (also tools added later); `some`: only `tools`. */
  toolChoice: 'all' | 'some';
  tools: string[];
  /** Text, as typed. */
  maxToolCalls: string;
  workspace: string;
  /** `defaults`: the backend's defaults (no list is sent); `some`: only `features`. */
  featureChoice: 'defaults' | 'some';
  features: string[];
  params: ModelParamsDraft;
}

export function draftFromAssistant(assistant?: Assistant): AssistantDraft {
  return {
    name: assistant?.name ?? '',
    systemPrompt: assistant?.systemPrompt ?? '',
    models: assistant?.models ?? [],
    toolChoice: assistant?.tools === undefined ? 'all' : 'some',
    tools: assistant?.tools ?? [],
    maxToolCalls: String(assistant?.maxToolCalls ?? DEFAULT_MAX_TOOL_CALLS),
    workspace: assistant?.workspace ?? '',
    featureChoice: assistant?.features === undefined ? 'defaults' : 'some',
    // Without a list of its own, the form starts from every strategy the backend lists
    // (which behaves as the defaults do, for any model) when the user leaves the defaults.
    features: assistant?.features ?? [],
    params: draftFromParams(assistant?.params),
  };
}

/**
 * The draft once "Use defaults" is turned off. An assistant without a list of its own
 * starts from every strategy the backend lists (`assistant_features_list`), which behaves
 * as the defaults do for any model; a list already there (a saved one, even `[]`) is kept.
 */
export function draftWithoutDefaults(draft: AssistantDraft, strategies: readonly FeatureInfo[], saved?: Assistant): AssistantDraft {
  const fresh = saved?.features === undefined && draft.features.length === 0;
  return { ...draft, featureChoice: 'some', features: fresh ? strategies.map((strategy) => strategy.name) : draft.features };
}

/** What to save, or what keeps it from being saved (by the backend's field names). */
export function assistantInputFromDraft(draft: AssistantDraft): { input: AssistantInput } | { errors: FieldErrors } {
  const errors: Record<string, string> = {};
  const name = draft.name.trim();
  if (!name) errors.name = 'Give the assistant a name.';
  const limit = Number(draft.maxToolCalls.trim());
  if (!/^\d+$/.test(draft.maxToolCalls.trim()) || !Number.isInteger(limit) || limit < 1 || limit > 100) {
    errors.maxToolCalls = 'A whole number from 1 to 100.';
  }
  const params = paramsFromDraft(draft.params);
  if ('errors' in params) Object.assign(errors, params.errors);
  if (Object.keys(errors).length > 0 || 'errors' in params) return { errors };
  const input: AssistantInput = { name, systemPrompt: draft.systemPrompt, models: draft.models, maxToolCalls: limit };
  if (draft.toolChoice === 'some') input.tools = draft.tools;
  const workspace = draft.workspace.trim();
  if (workspace) input.workspace = workspace;
  if (draft.featureChoice === 'some') input.features = draft.features;
  input.params = params.params;
  return { input };
}

export const ASSISTANT_FIELDS = ['name', 'systemPrompt', 'models', 'tools', 'maxToolCalls', 'workspace', 'features', ...MODEL_PARAMS_FIELDS] as const;
