// Generated from crates/protocol by `cargo xtask gen`. Do not edit.

export type JsonValue = number | string | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type TopicId = string;

export type MessageId = string;

export type TurnId = string;

export type ExecutionId = string;

export type ProviderId = string;

export type TopicKind = "chat" | "agent_session";

export type ModelRef = { providerId: ProviderId, model: string, };

export type ErrorKind = "bad_request" | "not_found" | "conflict" | "unauthorized" | "provider" | "internal";

export type ApiError = { kind: ErrorKind, message: string, retryable: boolean, 
/**
 * For `bad_request`: the offending field, as a dotted path.
 */
field?: string, 
/**
 * A finer classification within `kind`; for `provider` errors what the provider's
 * failure was: `auth`, `rate_limit`, `overloaded`, `context_too_long`,
 * `content_filtered`, `network`, `server`, `bad_response`, `invalid_request`, `timeout`.
 */
code?: string, };

export type FinishReason = "stop" | "length" | "content-filter" | "tool-calls" | "error" | "other";

export type DataChunk = { type: `data-${string}`, id?: string, data: JsonValue, transient?: boolean, };

export type UiChunk = { "type": "start", messageId?: string, messageMetadata?: MessageMetadata, } | { "type": "start-step" } | { "type": "finish-step" } | { "type": "text-start", id: string, } | { "type": "text-delta", id: string, delta: string, } | { "type": "text-end", id: string, } | { "type": "reasoning-start", id: string, 
/**
 * What the provider needs back with this reasoning (a signature, redacted data),
 * keyed by wire format: `{"anthropic": {"signature": "…"}}`.
 */
providerMetadata?: Record<string, unknown>, } | { "type": "reasoning-delta", id: string, delta: string, } | { "type": "reasoning-end", id: string, providerMetadata?: Record<string, unknown>, } | { "type": "tool-input-start", toolCallId: string, toolName: string, dynamic?: boolean, } | { "type": "tool-input-delta", toolCallId: string, inputTextDelta: string, } | { "type": "tool-input-available", toolCallId: string, toolName: string, input: JsonValue, dynamic?: boolean, } | { "type": "tool-input-error", toolCallId: string, toolName: string, input: JsonValue, errorText: string, dynamic?: boolean, } | { "type": "tool-approval-request", approvalId: string, toolCallId: string, } | { "type": "tool-output-available", toolCallId: string, output: JsonValue, dynamic?: boolean, preliminary?: boolean, } | { "type": "tool-output-error", toolCallId: string, errorText: string, dynamic?: boolean, } | { "type": "tool-output-denied", toolCallId: string, } | { "type": "source-url", sourceId: string, url: string, title?: string, } | { "type": "file", url: string, mediaType: string, } | { "type": "message-metadata", messageMetadata: MessageMetadata, } | { "type": "error", errorText: string, } | { "type": "abort", reason?: string, } | { "type": "finish", finishReason?: FinishReason, messageMetadata?: MessageMetadata, } | DataChunk;

export type MessageRole = "system" | "user" | "assistant";

export type MessageStatus = "pending" | "streaming" | "success" | "paused" | "error";

export type StatusReason = "user_stop" | "stalled" | "tool_limit" | "awaiting_approval" | "steered" | "length" | "interrupted";

export type Usage = { inputTokens: number, outputTokens: number, 
/**
 * Of the output, the reasoning tokens (when the provider says).
 */
reasoningTokens?: number, 
/**
 * Of the input, the tokens read from the provider's prompt cache (when it says).
 */
cachedTokens?: number, };

export type MessageMetadata = { model?: string, providerName?: string, status?: MessageStatus, 
/**
 * Why a message is `paused` or ended early (a `StatusReason`), or an `error`'s code.
 */
statusReason?: string, usage?: Usage, turnId?: string, };

export type PartState = "streaming" | "done";

export type ToolState = "input-streaming" | "input-available" | "approval-requested" | "approval-responded" | "output-available" | "output-error" | "output-denied";

export type ToolApproval = { id: string, approved?: boolean, reason?: string, 
/**
 * Who answered, when it was not the user (absent: the user, as the AI SDK has it).
 */
decidedBy?: Decider, };

export type Decider = "user" | "app";

export type DataPart = { type: `data-${string}`, id?: string, data: JsonValue, };

export type UiPart = { "type": "text", text: string, state?: PartState, } | { "type": "reasoning", 
/**
 * The chunk id the part streamed under (the AI SDK keeps it on reasoning parts).
 */
id?: string, text: string, state?: PartState, 
/**
 * Signatures or redacted data to send back to the provider, keyed by wire format.
 */
providerMetadata?: Record<string, unknown>, } | { "type": "step-start" } | { "type": "dynamic-tool", toolName: string, toolCallId: string, state: ToolState, input?: JsonValue, output?: JsonValue, errorText?: string, approval?: ToolApproval, } | { "type": "source-url", sourceId: string, url: string, title?: string, } | { "type": "file", mediaType: string, 
/**
 * A `data:` URL (attachments are stored inline) or an `http(s)` URL.
 */
url: string, filename?: string, } | DataPart;

export type UiMessage = { id: string, role: MessageRole, parts: Array<UiPart>, metadata?: MessageMetadata, };

export type ExecutionRef = { topicId: TopicId, turnId: TurnId, executionId: ExecutionId, model: ModelRef, messageId: MessageId, };

export type StreamEvent = { 
/**
 * 1-based, contiguous per execution.
 */
seq: number, chunk: UiChunk, topicId: TopicId, turnId: TurnId, executionId: ExecutionId, model: ModelRef, messageId: MessageId, };

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

export type StatusSnapshot = { statuses: Array<TopicStatusEvent>, 
/**
 * The running backend's epoch of path versions (see [`PathVersion`]).
 */
pathEpoch: string, 
/**
 * The version of each topic's last path change since the backend started; a topic
 * not listed has not changed since then (version 0).
 */
pathVersions: Array<TopicPathVersion>, 
/**
 * Each list's last change since the backend started, counted in the same epoch as
 * path versions (see [`ListVersion`]).
 */
listVersions: ListVersions, };

export type PathChanged = { topicId: TopicId, 
/**
 * The path version of the change (see [`PathVersion`]).
 */
version: number, };

export type TopicPathVersion = { topicId: TopicId, version: number, };

export type PathVersion = { epoch: string, version: number, };

export type ListName = "topics" | "agent_sessions";

export type ListChanged = { list: ListName, 
/**
 * The list version of the change (see [`ListVersion`]).
 */
version: number, };

export type ListVersions = { topics: number, agentSessions: number, };

export type ListVersion = { epoch: string, version: number, };

export type StatusMessage = { "kind": "snapshot" } & StatusSnapshot | { "kind": "changed" } & TopicStatusEvent | { "kind": "path_changed" } & PathChanged | { "kind": "list_changed" } & ListChanged;

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
 * The folder file tools work in (absolute path).
 */
workspace?: string, 
/**
 * The assistant this topic talks to.
 */
assistantId?: string, 
/**
 * The topic and message this topic was forked from (`topic_fork`). The origin may
 * have been deleted since.
 */
forkedFrom?: ForkOrigin, 
/**
 * What the model is told in every turn of this topic, after the assistant's own
 * prompt when the topic has an assistant.
 */
systemPrompt?: string, 
/**
 * Sampling settings for this topic's turns; each one set here wins over the
 * assistant's.
 */
params?: ModelParams, 
/**
 * RFC 3339.
 */
createdAt: string, updatedAt: string, };

export type TopicList = { topics: Array<Topic>, 
/**
 * Taken before the read, so a change made while it was read counts as newer (see
 * `ListVersion`).
 */
version: ListVersion, };

export type CreateTopic = { title?: string, model?: ModelRef, };

export type UpdateTopic = { id: TopicId, title?: string, model?: ModelRef, workspace?: string, assistantId?: string, 
/**
 * An empty prompt removes it.
 */
systemPrompt?: string, 
/**
 * Replaces every sampling setting of the topic (`{}` clears them).
 */
params?: ModelParams, };

export type StoredMessage = { id: MessageId, topicId: TopicId, parentId?: MessageId, turnId?: TurnId, status: MessageStatus, statusReason?: string, model?: ModelRef, message: UiMessage, 
/**
 * In `messages_list` (the active path): the ids of every version of this message,
 * oldest first, this one included. A user message's versions are its edits (the
 * sibling user messages under the same parent); a reply's versions are the replies of
 * the same model to the same user message (its regenerations). One id: no versions.
 */
versions?: Array<MessageId>, 
/**
 * Bumped by every write to the row. The backend uses it to refuse an operation
 * prepared from an older read (the reply changed meanwhile).
 */
revision: number, createdAt: string, updatedAt: string, };

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
models?: Array<ModelRef>, 
/**
 * Files sent with the message (images, PDFs, text files).
 */
attachments?: Array<Attachment>, 
/**
 * MCP resources to attach: each is read through its server when the message is
 * sent, and kept on the message as a `data-mcp-resource` part.
 */
mcpResources?: Array<McpResourceRef>, };

export type ReplyRequest = { topicId: TopicId, messageId: MessageId, };

export type MessageRequest = { topicId: TopicId, messageId: MessageId, };

export type SearchRequest = { query: string, 
/**
 * Only this topic's messages.
 */
topicId?: TopicId, 
/**
 * Only messages of this role.
 */
role?: MessageRole, 
/**
 * Only replies of this model (its name, e.g. `gpt-4o`).
 */
model?: string, 
/**
 * Only messages written at or after this time (RFC 3339, or a date `2026-01-31`).
 */
from?: string, 
/**
 * Only messages written before this time (RFC 3339), or on or before this date.
 */
to?: string, 
/**
 * Whether agent sessions' messages are searched too (default: yes).
 */
includeAgentSessions?: boolean, 
/**
 * How many of the best results to skip (default 0).
 */
offset?: number, 
/**
 * At most this many results (default 20, at most 100).
 */
limit?: number, };

export type SearchResults = { hits: Array<SearchHit>, 
/**
 * The `offset` of the next page; absent on the last page.
 */
nextOffset?: number, };

export type SearchHit = { topicId: TopicId, topicTitle: string, messageId: MessageId, turnId?: TurnId, role: MessageRole, 
/**
 * The model that wrote a reply.
 */
model?: ModelRef, createdAt: string, 
/**
 * A short excerpt around the match; the pieces with `hit` are what matched.
 */
snippet: Array<SnippetPiece>, 
/**
 * Whether the topic shows this message now; if not, `message_select` switches the
 * conversation to its branch.
 */
onActivePath: boolean, };

export type SnippetPiece = { text: string, hit?: boolean, };

export type MessagesPageRequest = { topicId: TopicId, 
/**
 * The cursor a previous page returned as `older`: a user message of the topic.
 */
before?: MessageId, 
/**
 * How many turns, 1 to [`MAX_PAGE_TURNS`] (default [`DEFAULT_PAGE_TURNS`]).
 */
turns?: number, };

export type MessagesPage = { messages: Array<StoredMessage>, 
/**
 * Pass as `before` for the turns above this page; `null` when this page starts at the
 * conversation's first turn.
 */
older: MessageId | null, 
/**
 * The path changes this page has seen: read before the page, so a change made while
 * it was read counts as newer (see `PathVersion`).
 */
path: PathVersion, };

export type EditMessageRequest = { topicId: TopicId, 
/**
 * The user message being edited.
 */
messageId: MessageId, text: string, 
/**
 * Client-chosen id for the new version (lets the UI keep its optimistic row).
 */
newMessageId?: MessageId, 
/**
 * Every file the new version carries (the original's files are not kept unless
 * they are listed here again).
 */
attachments?: Array<Attachment>, };

export type ForkOrigin = { topicId: TopicId, 
/**
 * The message the fork was made at, in the origin topic.
 */
messageId: MessageId, };

export type ModelParams = { 
/**
 * 0 to 2.
 */
temperature?: number, 
/**
 * Above 0, at most 1.
 */
topP?: number, 
/**
 * The longest answer, in tokens (1 to 1,000,000).
 */
maxOutputTokens?: number, 
/**
 * How hard a model with the `reasoning` capability thinks; absent: `medium`.
 * Models without the capability are sent none.
 */
reasoningEffort?: ReasoningLevel, };

export type ReasoningLevel = "off" | "low" | "medium" | "high";

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
hasApiKey: boolean, models: Array<string>, defaultModel: string, 
/**
 * What each listed model can do: what the user set, else a guess from its name.
 */
capabilities: { [key in string]: ModelCapabilities }, createdAt: string, };

export type ProviderInput = { name: string, 
/**
 * Defaults to OpenAI Chat Completions.
 */
format?: ApiFormat, baseUrl: string, apiKey?: string, models: Array<string>, defaultModel: string, 
/**
 * Capabilities the user set, by model name; models not named keep theirs.
 */
capabilities?: { [key in string]: ModelCapabilities }, };

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
mode: string, dataDir: string, 
/**
 * Where API keys are kept, in words for the settings page (the OS keychain, or a
 * file only the user can read, and which).
 */
secretStore: string, };

export type ExportFormat = "markdown" | "json" | "html";

export type ExportRequest = { topicId?: TopicId, format: ExportFormat, };

export type ExportedFile = { 
/**
 * A suggested file name, safe on every file system.
 */
fileName: string, mediaType: string, content: string, };

export type ImportRequest = { content: string, };

export type ImportSource = "colloquy" | "chatgpt" | "claude";

export type ImportReport = { source: ImportSource, imported: Array<ImportedTopic>, skipped: Array<ImportSkip>, };

export type ImportedTopic = { topicId: TopicId, title: string, messages: number, };

export type ImportSkip = { 
/**
 * The conversation's title (or its position in the file when it has none).
 */
conversation: string, 
/**
 * The message's id in the file; absent (and no `setting`): the whole conversation
 * was skipped.
 */
message?: string, 
/**
 * A topic setting that was left out (`systemPrompt`, `params`); the conversation
 * itself was imported.
 */
setting?: string, reason: string, };

export type SaveFileRequest = { fileName: string, content: string, };

export type SavedFile = { path: string, };

export type BackupInfo = { 
/**
 * The backup file, in the data folder's `backups` folder.
 */
path: string, bytes: number, 
/**
 * RFC 3339.
 */
createdAt: string, };

export type RestoreRequest = { fileName: string, };

export type RestorePlan = { 
/**
 * What happens at the next start, in words.
 */
message: string, };

export type FeatureInfo = { name: string, description: string, };

export type AppSettings = { 
/**
 * How long a reply may stay silent (no text, no event) before it is stopped as
 * `stalled`, in seconds, as the user chose it; absent: the default applies.
 */
idleTimeoutSeconds?: number, 
/**
 * What applies without a choice: `COLLOQUY_IDLE_TIMEOUT_SECONDS` when the app was
 * started with it, else 120.
 */
defaultIdleTimeoutSeconds: number, 
/**
 * The shortest idle timeout the user may choose.
 */
minIdleTimeoutSeconds: number, 
/**
 * The longest idle timeout the user may choose.
 */
maxIdleTimeoutSeconds: number, 
/**
 * Light or dark, as the user chose it; absent: follow the system.
 */
theme?: Theme, 
/**
 * The key combination that shows Colloquy from any app (desktop only), in the
 * accelerator syntax `show_shortcut_set` takes, e.g. `CommandOrControl+Shift+Space`;
 * absent: off (the default). Set only through `show_shortcut_set`, which registers it
 * with the system first.
 */
showShortcut?: string, };

export type UpdateAppSettings = { 
/**
 * Seconds, within the bounds [`AppSettings`] names; absent or `null` goes back to the
 * default.
 */
idleTimeoutSeconds?: number, 
/**
 * Absent or `null`: follow the system's light or dark setting.
 */
theme?: Theme, };

export type Theme = "light" | "dark";

export type InboxMode = "queue" | "steer";

export type InboxState = "queued" | "held";

export type InboxItem = { id: string, topicId: TopicId, text: string, mode: InboxMode, state: InboxState, note?: string, 
/**
 * Who answers it when it runs; absent: the topic's model.
 */
models?: Array<ModelRef>, createdAt: string, };

export type InboxAddRequest = { topicId: TopicId, text: string, mode: InboxMode, 
/**
 * The models that answer it when it runs (several: side by side, as `stream_open`'s
 * `models`); absent or empty: the topic's model. Chat topics only.
 */
models?: Array<ModelRef>, };

export type InboxUpdateRequest = { id: string, text?: string, mode?: InboxMode, };

export type InboxMoveRequest = { id: string, position: number, };

export type InboxItemRequest = { id: string, };

export type WindowOpenRequest = { topicId?: TopicId, };

export type TopicDeletedIfEmpty = { 
/**
 * Whether the topic was deleted; `false`: something was said in it, and it stays.
 */
deleted: boolean, };

export type ShowShortcutRequest = { 
/**
 * Modifiers and one key joined by `+`, e.g. `CommandOrControl+Shift+Space` or
 * `Alt+KeyC`; absent or `null` turns the shortcut off.
 */
shortcut?: string, };

export type Attachment = { 
/**
 * E.g. `image/png`, `application/pdf`, `text/plain`.
 */
mediaType: string, filename: string, 
/**
 * Standard base64 of the file's bytes.
 */
data: string, };

export type ModelCapabilities = { 
/**
 * Native tool calling; without it tools are offered through the prompt.
 */
tools: boolean, 
/**
 * Thinking (extended thinking, reasoning effort, thoughts) is switched on.
 */
reasoning: boolean, 
/**
 * Takes images.
 */
vision: boolean, 
/**
 * Whether the user set these (false: guessed from the model's name).
 */
custom: boolean, };

export type ToolAnnotations = { 
/**
 * Only reads; changes nothing.
 */
readOnly: boolean, 
/**
 * May delete or overwrite something.
 */
destructive: boolean, 
/**
 * Calling it twice with the same input does no more than calling it once.
 */
idempotent: boolean, 
/**
 * Reaches outside the machine (the network).
 */
openWorld: boolean, };

export type ToolSource = { "kind": "builtin" } | { "kind": "mcp", serverId: string, serverName: string, };

export type ToolInfo = { 
/**
 * Unique among all tools; what the model calls it.
 */
name: string, 
/**
 * A human title, when the tool has one.
 */
title?: string, description: string, inputSchema: Record<string, unknown>, annotations: ToolAnnotations, source: ToolSource, 
/**
 * What happens when no rule matches a call: `allow` or `ask`.
 */
defaultDecision: PolicyDecision, 
/**
 * Whether the tool is offered to models at all.
 */
enabled: boolean, };

export type ToolContent = { "type": "text", text: string, } | { "type": "image", mimeType: string, data: string, } | { "type": "resource", uri: string, mimeType?: string, 
/**
 * The resource's text (embedded), or a link's description or name.
 */
text?: string, 
/**
 * A link (MCP `resource_link`): the contents are not here, but its server can
 * read them (`mcp_resource_read`).
 */
link?: boolean | undefined, name?: string, annotations?: ContentAnnotations, };

export type ToolOutput = { content: Array<ToolContent>, structuredContent?: unknown, 
/**
 * The tool reports failure; the content says why.
 */
isError?: boolean | undefined, 
/**
 * The model was shown only the first part of this result (it was too long).
 */
truncatedForModel?: boolean | undefined, 
/**
 * How many later model calls are shown this result (bulky, short-lived results such
 * as a fetched page); later ones see a note that it was left out. Absent: all of them.
 * Kept with the result so the count holds across turns, restarts and resumed replies.
 */
contextRounds?: number, };

export type PolicyDecision = "allow" | "deny" | "ask";

export type MatchOp = "equals" | "prefix" | "glob" | "regex";

export type RuleCondition = { 
/**
 * A JSON pointer into the call's arguments, e.g. `/path`.
 */
pointer: string, op: MatchOp, 
/**
 * For `equals` any JSON value; for the others a string.
 */
value: unknown, };

export type RuleScope = { "kind": "global" } | { "kind": "topic", topicId: TopicId, };

export type PolicyRule = { id: string, tool: string, conditions: Array<RuleCondition>, decision: PolicyDecision, scope: RuleScope, 
/**
 * RFC 3339; the rule is ignored after this.
 */
expiresAt?: string, createdAt: string, };

export type ApprovalState = "pending" | "approved" | "denied";

export type Approval = { id: string, topicId: TopicId, topicTitle: string, messageId: string, toolCallId: string, toolName: string, input: unknown, 
/**
 * What the call would change, when the tool can tell (a unified diff for file edits).
 */
preview?: string, state: ApprovalState, reason?: string, createdAt: string, decidedAt?: string, };

export type AuditEntry = { id: number, at: string, 
/**
 * `user`, `rule:<id>` or `default`.
 */
actor: string, decision: PolicyDecision, toolName: string, input: unknown, topicId: TopicId, toolCallId: string, reason?: string, };

export type ApprovalDecision = "approve" | "deny";

export type ApprovalScope = "once" | "topic" | "global";

export type ToolApprovalRespond = { approvalId: string, decision: ApprovalDecision, scope?: ApprovalScope, 
/**
 * Told to the model when denying.
 */
reason?: string, 
/**
 * Approve with these arguments instead of the model's.
 */
updatedInput?: unknown, };

export type ApprovalsListRequest = { topicId?: TopicId, 
/**
 * Only this reply's questions.
 */
messageId?: string, 
/**
 * Include answered ones too.
 */
all?: boolean, };

export type ToolRuleInput = { tool: string, conditions: Array<RuleCondition>, decision: PolicyDecision, scope: RuleScope, expiresAt?: string, };

export type UpdateToolRule = { id: string, rule: ToolRuleInput, };

export type IdRequest = { id: string, };

export type ImageFetchRequest = { 
/**
 * An `http://` or `https://` URL.
 */
url: string, };

export type FetchedImage = { mediaType: string, dataUrl: string, };

export type AuditListRequest = { topicId?: TopicId, 
/**
 * Newest first; at most this many (default 200).
 */
limit?: number, };

export type ToolEnableRequest = { name: string, enabled: boolean, };

export type Assistant = { id: string, name: string, systemPrompt: string, 
/**
 * Answer with these models (side by side when several); empty: the topic's model.
 */
models: Array<ModelRef>, 
/**
 * The tools it may call; absent: every enabled tool.
 */
tools?: Array<string>, 
/**
 * Tool calls one reply may make before it asks to go on (1–100).
 */
maxToolCalls: number, 
/**
 * The folder file tools work in for topics that have none of their own.
 */
workspace?: string, 
/**
 * The reply strategies its turns use, by feature name (see `docs/api.md`); absent:
 * the defaults. `[]`: none (one model call per reply, tool calls answered but not
 * followed up).
 */
features?: Array<string>, 
/**
 * Sampling settings for its turns; a topic's own settings win.
 */
params?: ModelParams, createdAt: string, updatedAt: string, };

export type AssistantInput = { name: string, systemPrompt: string, models: Array<ModelRef>, tools?: Array<string>, maxToolCalls?: number, workspace?: string, 
/**
 * Absent: the default features.
 */
features?: Array<string>, 
/**
 * Absent: none set.
 */
params?: ModelParams, };

export type UpdateAssistant = { id: string, assistant: AssistantInput, };

export type McpSecretName = { name: string, 
/**
 * False when the secret store has no value for it (lost, or unreadable).
 */
set: boolean, };

export type McpTransport = { "kind": "stdio", command: string, args: Array<string>, 
/**
 * Environment variables set for it, by name.
 */
env: Array<McpSecretName>, 
/**
 * The folder it runs in.
 */
cwd?: string, } | { "kind": "http", url: string, 
/**
 * Sent with every request (e.g. `Authorization`), by name.
 */
headers: Array<McpSecretName>, };

export type McpTransportInput = { "kind": "stdio", command: string, args: Array<string>, env: { [key in string]: string | null }, cwd?: string, } | { "kind": "http", url: string, headers: { [key in string]: string | null }, };

export type McpState = "disabled" | "connecting" | "ready" | "error";

export type McpStatus = { state: McpState, 
/**
 * What went wrong, in the server's own words when it gave any.
 */
message?: string, 
/**
 * The last lines the server wrote to stderr (stdio servers).
 */
stderrTail?: string, 
/**
 * Tools it offers (from the cached list while it is not connected).
 */
toolCount: number, 
/**
 * Tools left out, and why (an unusable input schema, a clashing name).
 */
problems: Array<string>, 
/**
 * What the server's `initialize` said about using it (`instructions`), as it said it
 * when it last connected. The first 4 KiB go into the system prompt of turns that
 * offer its tools.
 */
instructions?: string, };

export type McpServer = { id: string, name: string, 
/**
 * The prefix of its tools' names, chosen when it was added and kept when it is
 * renamed.
 */
namespace: string, transport: McpTransport, enabled: boolean, 
/**
 * Tools the server marks read-only run without asking.
 */
trustReadOnly: boolean, 
/**
 * The server may ask the reply's model for completions (MCP sampling) without asking
 * the user each time.
 */
samplingAllowed: boolean, 
/**
 * How long one call may take, in seconds.
 */
timeoutSecs: number, status: McpStatus, 
/**
 * The names its tools have in Colloquy (`<namespace>__<tool>`).
 */
tools: Array<string>, createdAt: string, };

export type McpServerInput = { name: string, transport: McpTransportInput, enabled?: boolean, trustReadOnly?: boolean, 
/**
 * Left out: as it was (false for a new server).
 */
samplingAllowed?: boolean, timeoutSecs?: number, };

export type UpdateMcpServer = { id: string, server: McpServerInput, };

export type McpLogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

export type McpLogEntry = { 
/**
 * When it arrived (RFC 3339, UTC).
 */
at: string, level: McpLogLevel, 
/**
 * The part of the server that logged it, if it said.
 */
logger?: string, 
/**
 * Its data (text as is, anything else as JSON), cut at 4 KiB.
 */
text: string, };

export type McpServerLog = { 
/**
 * Whether the connected server offers logging (`logging` capability): only then can
 * the level be set. False while it is not connected.
 */
supported: boolean, 
/**
 * The least severe level asked for with `logging/setLevel`, if one was; the server's
 * own default otherwise.
 */
level?: McpLogLevel, entries: Array<McpLogEntry>, };

export type McpLogLevelRequest = { id: string, level: McpLogLevel, };

export type ElicitationForm = { title?: string, 
/**
 * In the order the server gave them.
 */
fields: Array<ElicitationField>, };

export type ElicitationField = { 
/**
 * The key of the answer's content.
 */
name: string, title?: string, description?: string, required: boolean, input: FieldInput, };

export type FieldInput = { "kind": "text", format?: TextFormat, minLength?: number, maxLength?: number, default?: string, } | { "kind": "number", 
/**
 * Whole numbers only.
 */
integer: boolean, minimum?: number, maximum?: number, default?: number, } | { "kind": "boolean", default?: boolean, } | { "kind": "choice", options: Array<FieldOption>, default?: string, } | { "kind": "multi_choice", options: Array<FieldOption>, minItems?: number, maxItems?: number, default: Array<string>, };

export type TextFormat = "email" | "uri" | "date" | "date-time";

export type FieldOption = { 
/**
 * What the answer holds.
 */
value: string, 
/**
 * What the user sees.
 */
label: string, };

export type ElicitationState = "pending" | "accepted" | "declined" | "cancelled" | "expired" | "withdrawn" | "refused";

export type ElicitationCard = { elicitationId: string, 
/**
 * The tool call during which the server asked.
 */
toolCallId: string, serverName: string, 
/**
 * What the server says it needs.
 */
message: string, 
/**
 * `None` when the schema could not be read (then `problem` says why).
 */
form?: ElicitationForm, problem?: string, state: ElicitationState, 
/**
 * What was sent, once accepted.
 */
content?: Record<string, unknown>, };

export type ElicitationAction = "accept" | "decline" | "cancel";

export type ElicitationRespond = { elicitationId: string, action: ElicitationAction, 
/**
 * The form's values by field name, for `accept`; fields left empty are left out.
 */
content?: Record<string, unknown>, };

export type SamplingRole = "user" | "assistant";

export type SamplingMessage = { role: SamplingRole, text: string, };

export type SamplingState = "pending" | "running" | "done" | "denied" | "failed" | "expired" | "withdrawn";

export type SamplingCard = { samplingId: string, 
/**
 * The tool call during which the server asked.
 */
toolCallId: string, serverId: string, serverName: string, 
/**
 * The model that answers: the reply's own.
 */
model: string, systemPrompt?: string, messages: Array<SamplingMessage>, maxTokens: number, state: SamplingState, 
/**
 * Allowed without asking: the server may always sample.
 */
allowedByRule: boolean, result?: string, problem?: string, };

export type SamplingDecision = "allow" | "deny";

export type SamplingRespond = { samplingId: string, decision: SamplingDecision, 
/**
 * With `allow`: this server may sample from now on without asking (saved with the
 * server, `samplingAllowed`; Settings → MCP turns it off again).
 */
always?: boolean, };

export type ContentAnnotations = { 
/**
 * `user`, `assistant`.
 */
audience?: Array<string>, 
/**
 * 0 (least) to 1 (most important).
 */
priority?: number, lastModified?: string, };

export type McpResource = { serverId: string, serverName: string, uri: string, name: string, title?: string, description?: string, mimeType?: string, };

export type McpResourceTemplate = { serverId: string, serverName: string, uriTemplate: string, name: string, title?: string, description?: string, mimeType?: string, };

export type McpServerProblem = { serverId: string, serverName: string, message: string, };

export type McpResourceCatalog = { resources: Array<McpResource>, templates: Array<McpResourceTemplate>, 
/**
 * Servers that offer resources but could not list them now.
 */
problems: Array<McpServerProblem>, };

export type McpResourceRef = { serverId: string, uri: string, };

export type ResourceContent = { "type": "text", uri: string, mimeType?: string, text: string, } | { "type": "blob", uri: string, mimeType?: string, blob: string, };

export type ResourceAttachment = { serverId: string, serverName: string, uri: string, contents: Array<ResourceContent>, 
/**
 * Whether this is a fresher read than the one first attached (the server said the
 * resource changed since).
 */
updated?: boolean | undefined, };

export type McpPrompt = { serverId: string, serverName: string, name: string, title?: string, description?: string, arguments: Array<McpPromptArgument>, };

export type McpPromptArgument = { name: string, title?: string, description?: string, required: boolean, };

export type McpPromptCatalog = { prompts: Array<McpPrompt>, problems: Array<McpServerProblem>, };

export type McpPromptGetRequest = { serverId: string, name: string, arguments: { [key in string]: string }, };

export type McpPromptExpansion = { text: string, resources: Array<ResourceAttachment>, };

export type McpCompleteRequest = { serverId: string, prompt: string, argument: string, 
/**
 * What is typed so far.
 */
value: string, 
/**
 * The other arguments filled in so far (a server may narrow by them).
 */
context: { [key in string]: string }, };

export type McpCompletion = { values: Array<string>, 
/**
 * The server knows more than it sent.
 */
hasMore: boolean, };

export type AcpVariable = { name: string, secret: boolean, 
/**
 * The value of a variable that is not secret.
 */
value?: string, 
/**
 * False when a secret one has no value in the secret store (lost, or unreadable).
 */
set: boolean, };

export type AcpVariableInput = { name: string, secret: boolean, value: string | null, };

export type AcpAgent = { id: string, name: string, command: string, args: Array<string>, variables: Array<AcpVariable>, 
/**
 * The folder new sessions with this agent work in, when they name none.
 */
workspace?: string, createdAt: string, updatedAt: string, };

export type AcpAgentInput = { name: string, command: string, args: Array<string>, variables: Array<AcpVariableInput>, workspace?: string, };

export type UpdateAcpAgent = { id: string, agent: AcpAgentInput, };

export type AgentSession = { id: string, 
/**
 * The topic its messages live in (`agent-session:<id>`).
 */
topicId: TopicId, title: string, 
/**
 * `claude_code`, or `acp` for an agent of settings' list (`acp_agent_id`).
 */
agent: string, 
/**
 * The ACP agent it runs (absent for Claude Code, or when that agent was deleted).
 */
acpAgentId?: string, 
/**
 * What the Agents list shows: "Claude Code", or the ACP agent's name.
 */
agentName: string, workspace: string, 
/**
 * The Anthropic-format provider it talks through; absent: the agent's own login.
 */
providerId?: ProviderId, model: string, 
/**
 * `default`, `acceptEdits`, `plan` or `dontAsk`.
 */
permissionMode: string, 
/**
 * Whether the next turn resumes the agent's own session (false: it starts fresh).
 */
resumable: boolean, createdAt: string, updatedAt: string, };

export type AgentSessionList = { sessions: Array<AgentSession>, 
/**
 * Taken before the read, so a change made while it was read counts as newer (see
 * `ListVersion`).
 */
version: ListVersion, };

export type AgentSessionInput = { title?: string, 
/**
 * `claude_code` (the default) or `acp`, which needs `acpAgentId`.
 */
agent?: string, 
/**
 * The ACP agent to run (from `acp_agents_list`); implies `agent: "acp"`.
 */
acpAgentId?: string, 
/**
 * An existing folder; not `/` and not the home folder itself. Empty: the ACP agent's
 * own workspace.
 */
workspace: string, providerId?: ProviderId, 
/**
 * Empty: the agent's default model.
 */
model: string, permissionMode?: string, };

export type UpdateAgentSession = { id: string, title?: string, model?: string, permissionMode?: string, };

export type AgentModeRequest = { 
/**
 * The session.
 */
id: string, 
/**
 * One of the `availableModes` ids of the session's latest `agentModes` metadata.
 */
modeId: string, };

export type AgentModeChange = { modeId: string, 
/**
 * `now`: the agent switched (mid-turn too; the live or next reply's `agentMode` says
 * so); `next_start`: the agent is not running, and switches as soon as it next starts.
 */
applied: AgentModeApplied, };

export type AgentModeApplied = "now" | "next_start";

export type UsageTotals = { 
/**
 * Model calls (agent-session turns count one each).
 */
calls: number, inputTokens: number, outputTokens: number, reasoningTokens: number, cachedTokens: number, 
/**
 * The cost of the calls that have a price (or a cost the agent reported); absent
 * when none has.
 */
costUsd?: number, 
/**
 * Calls whose model has no price: their tokens are counted, their cost is not.
 */
unpricedCalls: number, 
/**
 * Time spent in model calls, in milliseconds.
 */
durationMs: number, };

export type ReplyUsage = { messageId: string, totals: UsageTotals, 
/**
 * The first model call's time to first token, in milliseconds.
 */
timeToFirstTokenMs?: number, 
/**
 * Output tokens per second of generation (after the first token), over every call.
 */
tokensPerSecond?: number, 
/**
 * When the first call started (RFC 3339, UTC).
 */
startedAt: string, 
/**
 * The model of the last call.
 */
model: string, };

export type TopicUsage = { topicId: string, total: UsageTotals, replies: Array<ReplyUsage>, };

export type ReplyDetails = { messageId: string, 
/**
 * Absent when the ledger has nothing for this reply (written before it was kept).
 */
usage?: ReplyUsage, 
/**
 * In the order things happened.
 */
timeline: Array<TimelineEntry>, };

export type TimelineEntry = { "kind": "modelCall", 
/**
 * The step of the agent loop (0 first), and the attempt at it (0 first).
 */
step: number, attempt: number, agent: boolean, providerName: string, model: string, startedAt: string, requestMessages?: number, 
/**
 * The size of what was sent, in characters.
 */
requestChars?: number, timeToFirstTokenMs?: number, durationMs: number, tokensPerSecond?: number, inputTokens: number, outputTokens: number, reasoningTokens: number, cachedTokens: number, costUsd?: number, 
/**
 * `stop`, `length`, `tool_calls`, `content_filter`, the provider's own reason, or
 * `stopped`, `stalled`, `failed`.
 */
finish: string, error?: string, 
/**
 * Retries the provider client made before the first byte.
 */
providerRetries: number, } | { "kind": "toolCall", callId: string, toolName: string, input: JsonValue, 
/**
 * `requested`, `approved`, `denied`, `running`, `done`, `error`.
 */
state: string, 
/**
 * When the model asked for it.
 */
requestedAt: string, startedAt?: string, durationMs?: number, 
/**
 * The size of its output, in characters.
 */
outputChars?: number, 
/**
 * Who allowed (or refused) it: `user`, `app`, `rule:<id>` or `default`.
 */
decidedBy?: string, error?: string, } | { "kind": "approvalWait", approvalId: string, callId: string, toolName: string, 
/**
 * `pending`, `approved` or `denied`.
 */
state: string, requestedAt: string, decidedAt?: string, 
/**
 * How long it waited (so far, while pending), in milliseconds.
 */
waitedMs?: number, };

export type UsageReportRequest = { 
/**
 * The first day counted, `YYYY-MM-DD`; absent: since the first call.
 */
from?: string, 
/**
 * The last day counted (inclusive), `YYYY-MM-DD`; absent: up to today.
 */
to?: string, 
/**
 * Days start at midnight this many minutes ahead of UTC (the user's time zone;
 * JavaScript's `-new Date().getTimezoneOffset()`); absent: UTC.
 */
utcOffsetMinutes?: number, };

export type UsageReport = { total: UsageTotals, 
/**
 * Days with usage, oldest first.
 */
byDay: Array<UsageGroup>, 
/**
 * Most expensive first (then most tokens).
 */
byModel: Array<UsageGroup>, byProvider: Array<UsageGroup>, };

export type UsageGroup = { 
/**
 * The day (`YYYY-MM-DD`), the model's name or the provider's name.
 */
key: string, totals: UsageTotals, };

export type ModelPrice = { 
/**
 * A model name; it also prices dated or suffixed versions of it (`gpt-4o` prices
 * `gpt-4o-2024-08-06`, not `gpt-4o-mini` when that has its own price) and names
 * behind a router's prefix (`openai/gpt-4o`).
 */
model: string, inputUsd: number, outputUsd: number, 
/**
 * Input tokens read from the prompt cache; absent: the input price.
 */
cachedInputUsd?: number, 
/**
 * `default`: built in; `custom`: set by the user (over a default or for a new model).
 */
source: PriceSource, };

export type PriceSource = "default" | "custom";

export type ModelPriceInput = { model: string, inputUsd: number, outputUsd: number, cachedInputUsd?: number, };

export type ModelPriceRequest = { model: string, };

/** How an agent session's topic id begins (`TopicId::AGENT_SESSION_PREFIX`). */
export const AGENT_SESSION_TOPIC_PREFIX = "agent-session:";

/** What a topic is, told by its id (`TopicId::kind`). */
export function topicKind(id: TopicId): TopicKind {
  return id.startsWith(AGENT_SESSION_TOPIC_PREFIX) ? "agent_session" : "chat";
}
export const STATUS_REASONS: readonly StatusReason[] = ["user_stop", "stalled", "tool_limit", "awaiting_approval", "steered", "length", "interrupted"];
