// Generated from crates/protocol by `cargo xtask gen`. Do not edit.

export type JsonValue = number | string | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type TopicId = string;

export type MessageId = string;

export type TurnId = string;

export type ExecutionId = string;

export type ProviderId = string;

export type ModelRef = { providerId: ProviderId, model: string, };

export type ErrorKind = "bad_request" | "not_found" | "conflict" | "unauthorized" | "provider" | "internal";

export type ApiError = { kind: ErrorKind, message: string, retryable: boolean, 
/**
 * For `bad_request`: the offending field, as a dotted path.
 */
field?: string, };

export type FinishReason = "stop" | "length" | "content-filter" | "tool-calls" | "error" | "other";

export type DataChunk = { type: `data-${string}`, id?: string, data: JsonValue, transient?: boolean, };

export type UiChunk = { "type": "start", messageId?: string, messageMetadata?: MessageMetadata, } | { "type": "start-step" } | { "type": "finish-step" } | { "type": "text-start", id: string, } | { "type": "text-delta", id: string, delta: string, } | { "type": "text-end", id: string, } | { "type": "reasoning-start", id: string, } | { "type": "reasoning-delta", id: string, delta: string, } | { "type": "reasoning-end", id: string, } | { "type": "tool-input-start", toolCallId: string, toolName: string, dynamic?: boolean, } | { "type": "tool-input-delta", toolCallId: string, inputTextDelta: string, } | { "type": "tool-input-available", toolCallId: string, toolName: string, input: JsonValue, dynamic?: boolean, } | { "type": "tool-input-error", toolCallId: string, toolName: string, input: JsonValue, errorText: string, dynamic?: boolean, } | { "type": "tool-approval-request", approvalId: string, toolCallId: string, } | { "type": "tool-output-available", toolCallId: string, output: JsonValue, dynamic?: boolean, preliminary?: boolean, } | { "type": "tool-output-error", toolCallId: string, errorText: string, dynamic?: boolean, } | { "type": "tool-output-denied", toolCallId: string, } | { "type": "source-url", sourceId: string, url: string, title?: string, } | { "type": "file", url: string, mediaType: string, } | { "type": "message-metadata", messageMetadata: MessageMetadata, } | { "type": "error", errorText: string, } | { "type": "abort", reason?: string, } | { "type": "finish", finishReason?: FinishReason, messageMetadata?: MessageMetadata, } | DataChunk;

export type MessageRole = "system" | "user" | "assistant";

export type MessageStatus = "pending" | "streaming" | "success" | "paused" | "error";

export type Usage = { inputTokens: number, outputTokens: number, };

export type MessageMetadata = { model?: string, providerName?: string, status?: MessageStatus, 
/**
 * Why a message is `paused` or `error`: `user_stop`, `interrupted`, `stalled`, an error kind.
 */
statusReason?: string, usage?: Usage, turnId?: string, };

export type PartState = "streaming" | "done";

export type ToolState = "input-streaming" | "input-available" | "approval-requested" | "approval-responded" | "output-available" | "output-error" | "output-denied";

export type ToolApproval = { id: string, approved?: boolean, reason?: string, };

export type DataPart = { type: `data-${string}`, id?: string, data: JsonValue, };

export type UiPart = { "type": "text", text: string, state?: PartState, } | { "type": "reasoning", 
/**
 * The chunk id the part streamed under (the AI SDK keeps it on reasoning parts).
 */
id?: string, text: string, state?: PartState, } | { "type": "step-start" } | { "type": "dynamic-tool", toolName: string, toolCallId: string, state: ToolState, input?: JsonValue, output?: JsonValue, errorText?: string, approval?: ToolApproval, } | { "type": "source-url", sourceId: string, url: string, title?: string, } | { "type": "file", mediaType: string, url: string, } | DataPart;

export type UiMessage = { id: string, role: MessageRole, parts: Array<UiPart>, metadata?: MessageMetadata, };

export type StreamEvent = { topicId: TopicId, turnId: TurnId, executionId: ExecutionId, model: ModelRef, messageId: MessageId, 
/**
 * 1-based, contiguous per execution.
 */
seq: number, chunk: UiChunk, };

export type ExecutionSnapshot = { topicId: TopicId, turnId: TurnId, executionId: ExecutionId, model: ModelRef, messageId: MessageId, seq: number, message: UiMessage, };

export type TerminalStatus = "success" | "paused" | "error" | "awaiting_approval";

export type ExecutionTerminal = { topicId: TopicId, turnId: TurnId, executionId: ExecutionId, messageId: MessageId, status: TerminalStatus, 
/**
 * True when this was the topic's last live execution.
 */
isTopicDone: boolean, };

export type LaggedNotice = { topicId: TopicId, };

export type StreamMessage = { "kind": "snapshot" } & ExecutionSnapshot | { "kind": "chunk" } & StreamEvent | { "kind": "terminal" } & ExecutionTerminal | { "kind": "lagged" } & LaggedNotice;

export type ExecutionCursor = { executionId: ExecutionId, seq: number, };

export type TopicStatus = "pending" | "streaming" | "awaiting_approval" | "done" | "aborted" | "error";

export type TopicStatusEvent = { topicId: TopicId, status: TopicStatus, unseen: boolean, };

export type StatusSnapshot = { statuses: Array<TopicStatusEvent>, };

export type StatusMessage = { "kind": "snapshot" } & StatusSnapshot | { "kind": "changed" } & TopicStatusEvent;

export type AttachReply = { 
/**
 * False when the topic has no live (or recently finished) stream: nothing will arrive.
 */
live: boolean, turnId?: TurnId, };

export type Topic = { id: TopicId, title: string, 
/**
 * The model new turns go to unless the request names one.
 */
model?: ModelRef, 
/**
 * RFC 3339.
 */
createdAt: string, updatedAt: string, };

export type CreateTopic = { title?: string, model?: ModelRef, };

export type UpdateTopic = { id: TopicId, title?: string, model?: ModelRef, };

export type StoredMessage = { id: MessageId, topicId: TopicId, parentId?: MessageId, turnId?: TurnId, status: MessageStatus, statusReason?: string, model?: ModelRef, message: UiMessage, createdAt: string, updatedAt: string, };

export type StreamOpenRequest = { topicId: TopicId, 
/**
 * The user's message text.
 */
text: string, 
/**
 * Client-chosen id for the user message (lets the UI keep its optimistic row).
 */
messageId?: MessageId, 
/**
 * Overrides the topic's model for this turn.
 */
model?: ModelRef, 
/**
 * Ask several models at once (side-by-side replies); overrides `model`.
 */
models?: Array<ModelRef>, };

export type ReplyRequest = { topicId: TopicId, messageId: MessageId, };

export type AddModelRequest = { topicId: TopicId, turnId: TurnId, model: ModelRef, };

export type TopicRequest = { topicId: TopicId, };

export type StreamAttachRequest = { topicId: TopicId, after: Array<ExecutionCursor>, };

export type ProviderKind = "openai_compatible" | "demo";

export type ApiFormat = "openai_chat" | "openai_responses" | "anthropic" | "gemini";

export type ProviderPresetInfo = { id: string, name: string, format: ApiFormat, 
/**
 * Empty when the user must type one.
 */
baseUrl: string, needsApiKey: boolean, };

export type Provider = { id: ProviderId, name: string, kind: ProviderKind, format: ApiFormat, baseUrl: string, 
/**
 * Whether a key is stored. The key itself never leaves the backend.
 */
hasApiKey: boolean, models: Array<string>, defaultModel: string, createdAt: string, };

export type ProviderInput = { name: string, 
/**
 * Defaults to OpenAI Chat Completions.
 */
format?: ApiFormat, baseUrl: string, apiKey?: string, models: Array<string>, defaultModel: string, };

export type UpdateProvider = { id: ProviderId, provider: ProviderInput, };

export type ProviderRequest = { providerId: ProviderId, };

export type ListModelsRequest = { baseUrl: string, format?: ApiFormat, apiKey?: string, 
/**
 * Use the stored key of this provider when `api_key` is absent.
 */
providerId?: ProviderId, };

export type ModelList = { models: Array<string>, };

export type AppInfo = { version: string, 
/**
 * `desktop` or `server`.
 */
mode: string, dataDir: string, };

export type InboxMode = "queue" | "steer";

export type InboxState = "queued" | "held";

export type InboxItem = { id: string, topicId: TopicId, text: string, mode: InboxMode, state: InboxState, note?: string, createdAt: string, };

export type InboxAddRequest = { topicId: TopicId, text: string, mode: InboxMode, };

export type InboxUpdateRequest = { id: string, text?: string, mode?: InboxMode, };

export type InboxMoveRequest = { id: string, position: number, };

export type InboxItemRequest = { id: string, };

export type WindowOpenRequest = { topicId?: TopicId, };
