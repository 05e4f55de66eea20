import type { ToolContent, ToolOutput, UiChunk, UiMessage, UiPart } from '../protocol.gen';

/** A tool call as a reply holds it. */
export type ToolPart = Extract<UiPart, { type: 'dynamic-tool' }>;

/** Where a tool call is, in the user's words. */
export type ToolPhase = 'running' | 'queued' | 'waiting' | 'allowed' | 'done' | 'failed' | 'denied';

export function isToolPart(part: UiPart): part is ToolPart {
  return part.type === 'dynamic-tool';
}

/**
 * A call's phase. `live`: the reply is being written; a call without a result in a reply
 * that is not (one waiting for answers to other calls of its step) has not run yet.
 */
export function toolPhase(part: ToolPart, live = true): ToolPhase {
  switch (part.state) {
    case 'approval-requested':
      return 'waiting';
    case 'approval-responded':
      // Answered: an approved call is about to run, a denied one will not.
      if (part.approval?.approved === false) return 'denied';
      // Allowed, and runs once the reply goes on (after every call of its step is answered).
      return live ? 'running' : 'allowed';
    case 'output-available':
      return toolOutput(part.output)?.isError === true ? 'failed' : 'done';
    case 'output-error':
      return 'failed';
    case 'output-denied':
      return 'denied';
    case 'input-streaming':
    case 'input-available':
      return live ? 'running' : 'queued';
  }
}

export const PHASE_LABEL: Record<ToolPhase, string> = {
  running: 'running',
  queued: 'not run yet',
  waiting: 'waiting for approval',
  allowed: 'allowed',
  done: 'done',
  failed: 'failed',
  denied: 'denied',
};

/** A tool's output as `ToolOutput`, or undefined when it has another shape (shown as JSON). */
export function toolOutput(value: unknown): ToolOutput | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const content = (value as { content?: unknown }).content;
  if (!Array.isArray(content) || !content.every(isToolContent)) return undefined;
  return value as ToolOutput;
}

function isToolContent(value: unknown): value is ToolContent {
  if (typeof value !== 'object' || value === null) return false;
  const item = value as Record<string, unknown>;
  switch (item.type) {
    case 'text':
      return typeof item.text === 'string';
    case 'image':
      return typeof item.data === 'string' && typeof item.mimeType === 'string';
    case 'resource':
      return typeof item.uri === 'string';
    default:
      return false;
  }
}

/** Indented JSON for people; `undefined` becomes an empty object. */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value ?? {}, null, 2) ?? '';
}

/**
 * A call's input for people: a string (the raw text of an input the model sent that was
 * not JSON, see `tool-input-error`) as it is, anything else as indented JSON.
 */
export function toolInputText(input: unknown): string {
  return typeof input === 'string' ? input : prettyJson(input);
}

/**
 * A one-line summary of a call's arguments: `path: "notes.md", content: "hello"`, cut
 * to `max` characters.
 */
export function argumentsSummary(input: unknown, max = 80): string {
  let text: string;
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
    text = Object.entries(input)
      .map(([key, value]) => `${key}: ${JSON.stringify(value) ?? 'undefined'}`)
      .join(', ');
  } else if (typeof input === 'string') {
    // The raw text of an input that was not JSON.
    text = input;
  } else {
    text = input === undefined ? '' : (JSON.stringify(input) ?? '');
  }
  text = text.replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, Math.max(0, max - 1))}…` : text;
}

/** The approvals a message's calls are waiting on, in order. */
export function waitingApprovalIds(message: UiMessage): string[] {
  return message.parts.flatMap((part) =>
    part.type === 'dynamic-tool' && part.state === 'approval-requested' && part.approval ? [part.approval.id] : [],
  );
}

/** A running call's progress, from transient `data-tool-progress` chunks (never stored). */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

export type ToolProgressByCall = ReadonlyMap<string, ToolProgress>;

/** The progress of every running call after `chunk`; the same map when nothing changed. */
export function progressAfter(current: ToolProgressByCall, chunk: UiChunk): ToolProgressByCall {
  if (chunk.type === 'data-tool-progress') {
    const data = chunk.data;
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return current;
    const record = data as Record<string, unknown>;
    const callId = typeof record.toolCallId === 'string' ? record.toolCallId : chunk.id;
    if (callId === undefined || typeof record.progress !== 'number') return current;
    const progress: ToolProgress = { progress: record.progress };
    if (typeof record.total === 'number') progress.total = record.total;
    if (typeof record.message === 'string' && record.message !== '') progress.message = record.message;
    return new Map(current).set(callId, progress);
  }
  if (chunk.type === 'tool-output-available' || chunk.type === 'tool-output-error' || chunk.type === 'tool-output-denied') {
    if (!current.has(chunk.toolCallId)) return current;
    const next = new Map(current);
    next.delete(chunk.toolCallId);
    return next;
  }
  return current;
}

/** "3 of 10 — reading files", or the message alone, or "working…". */
export function progressText(progress: ToolProgress): string {
  const amount = progress.total !== undefined && progress.total > 0 ? `${progress.progress} of ${progress.total}` : '';
  return [amount, progress.message].filter(Boolean).join(' — ') || 'working…';
}

/** 0..1 when the total is known. */
export function progressFraction(progress: ToolProgress): number | undefined {
  if (progress.total === undefined || progress.total <= 0) return undefined;
  return Math.min(1, Math.max(0, progress.progress / progress.total));
}

/** The arguments typed in "Edit arguments": a JSON object, or why not. */
export function parseEditedArguments(text: string): { value: Record<string, unknown> } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { error: `This is not valid JSON (${detail}). Fix it, or cancel the edit.` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { error: 'The arguments must be a JSON object, like {"path": "notes.md"}.' };
  }
  return { value: value as Record<string, unknown> };
}

/**
 * What an "Always" answer to a call covers, when it is less than every call of the tool:
 * `fetch_url` saves its rule on the host its URL names (the backend's `always_conditions`;
 * both read the URL by the WHATWG rules, so the hosts agree), or on the URL itself when it
 * has no host. `undefined`: every call of the tool.
 */
export function alwaysCovers(toolName: string, input: unknown): string | undefined {
  if (toolName !== 'fetch_url' || typeof input !== 'object' || input === null) return undefined;
  const url = (input as { url?: unknown }).url;
  if (typeof url !== 'string') return undefined;
  try {
    const host = new URL(url.trim()).hostname;
    return host === '' ? url : host;
  } catch {
    return url;
  }
}
