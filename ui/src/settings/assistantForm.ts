import type { Assistant, AssistantInput, ModelRef } from '../protocol.gen';
import type { FieldErrors } from './fieldErrors';

export const DEFAULT_MAX_TOOL_CALLS = 20;

/**
 * The reply strategies a turn can use: the backend's registered features
 * (`FeatureRegistry::builtin()` in `crates/agent/src/features.rs`), in the order they compose.
 */
export const REPLY_STRATEGIES = [
  { name: 'context-rounds', description: 'Tool results that only stay in the conversation for a few rounds are shortened to a note afterwards.' },
  { name: 'prompt-tool-calling', description: 'For models without native tool calling: tools are described in the prompt and calls read from the reply.' },
  { name: 'tool-loop', description: 'After the model calls tools, it gets another turn to read their results and go on.' },
] as const;

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
    // Every strategy on behaves as the defaults do, for any model: a start to edit from.
    features: assistant?.features ?? REPLY_STRATEGIES.map((strategy) => strategy.name),
  };
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
  if (Object.keys(errors).length > 0) return { errors };
  const input: AssistantInput = { name, systemPrompt: draft.systemPrompt, models: draft.models, maxToolCalls: limit };
  if (draft.toolChoice === 'some') input.tools = draft.tools;
  const workspace = draft.workspace.trim();
  if (workspace) input.workspace = workspace;
  if (draft.featureChoice === 'some') input.features = draft.features;
  return { input };
}

export const ASSISTANT_FIELDS = ['name', 'systemPrompt', 'models', 'tools', 'maxToolCalls', 'workspace', 'features'] as const;
