import type { ModelParams, ReasoningLevel } from '../protocol.gen';
import type { FieldErrors } from './fieldErrors';

/** Model settings as their fields hold them: text as typed, `''` for "not set". */
export interface ModelParamsDraft {
  temperature: string;
  topP: string;
  maxOutputTokens: string;
  reasoningEffort: ReasoningLevel | '';
}

/** The backend's field path of each setting (errors come back under these). */
export const MODEL_PARAMS_FIELDS = ['params.temperature', 'params.topP', 'params.maxOutputTokens', 'params.reasoningEffort'] as const;

export const REASONING_LEVELS: readonly { value: ReasoningLevel | ''; label: string }[] = [
  { value: '', label: 'Default (medium)' },
  { value: 'off', label: 'Off' },
  { value: 'low', label: 'Low' },
  { value: 'medium', label: 'Medium' },
  { value: 'high', label: 'High' },
];

export function draftFromParams(params: ModelParams | undefined): ModelParamsDraft {
  return {
    temperature: params?.temperature === undefined ? '' : String(params.temperature),
    topP: params?.topP === undefined ? '' : String(params.topP),
    maxOutputTokens: params?.maxOutputTokens === undefined ? '' : String(params.maxOutputTokens),
    reasoningEffort: params?.reasoningEffort ?? '',
  };
}

/** A number typed in a field: `undefined` when empty, `NaN` when not a number. */
function typedNumber(text: string): number | undefined {
  const trimmed = text.trim();
  if (!trimmed) return undefined;
  return /^[+]?(\d+\.?\d*|\.\d+)$/.test(trimmed) ? Number(trimmed) : Number.NaN;
}

/**
 * The settings to save, or why not (under the backend's field names, with the bounds it
 * enforces, so the form says it before a round trip).
 */
export function paramsFromDraft(draft: ModelParamsDraft): { params: ModelParams } | { errors: FieldErrors } {
  const errors: Record<string, string> = {};
  const params: ModelParams = {};
  const temperature = typedNumber(draft.temperature);
  if (temperature !== undefined) {
    if (Number.isNaN(temperature) || temperature > 2) errors['params.temperature'] = 'A number from 0 to 2.';
    else params.temperature = temperature;
  }
  const topP = typedNumber(draft.topP);
  if (topP !== undefined) {
    if (Number.isNaN(topP) || topP <= 0 || topP > 1) errors['params.topP'] = 'A number above 0, at most 1.';
    else params.topP = topP;
  }
  const maxOutputTokens = typedNumber(draft.maxOutputTokens);
  if (maxOutputTokens !== undefined) {
    if (!Number.isInteger(maxOutputTokens) || maxOutputTokens < 1 || maxOutputTokens > 1_000_000) {
      errors['params.maxOutputTokens'] = 'A whole number from 1 to 1,000,000.';
    } else {
      params.maxOutputTokens = maxOutputTokens;
    }
  }
  if (draft.reasoningEffort) params.reasoningEffort = draft.reasoningEffort;
  return Object.keys(errors).length > 0 ? { errors } : { params };
}

/** A short summary of what is set, for a collapsed section ("temperature 0.3 · 500 tokens"). */
export function describeParams(params: ModelParams | undefined): string {
  if (!params) return '';
  const parts: string[] = [];
  if (params.temperature !== undefined) parts.push(`temperature ${params.temperature}`);
  if (params.topP !== undefined) parts.push(`top-p ${params.topP}`);
  if (params.maxOutputTokens !== undefined) parts.push(`at most ${params.maxOutputTokens} tokens`);
  if (params.reasoningEffort !== undefined) parts.push(`reasoning ${params.reasoningEffort}`);
  return parts.join(' · ');
}
