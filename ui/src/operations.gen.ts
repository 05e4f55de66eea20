// Generated from crates/protocol/src/operations.rs by `cargo xtask gen`. Do not edit.

import type {
  AcpAgent,
  AcpAgentInput,
  AddModelRequest,
  AgentModeChange,
  AgentModeRequest,
  AgentSession,
  AgentSessionInput,
  AgentSessionList,
  AppInfo,
  AppSettings,
  Approval,
  ApprovalsListRequest,
  Assistant,
  AssistantInput,
  AttachReply,
  AuditEntry,
  AuditListRequest,
  BackupInfo,
  CreateTopic,
  EditMessageRequest,
  ElicitationRespond,
  ExportRequest,
  ExportedFile,
  FeatureInfo,
  FetchedImage,
  IdRequest,
  ImageFetchRequest,
  ImportReport,
  ImportRequest,
  InboxAddRequest,
  InboxItem,
  InboxItemRequest,
  InboxMoveRequest,
  InboxUpdateRequest,
  ListModelsRequest,
  McpCompleteRequest,
  McpCompletion,
  McpLogLevelRequest,
  McpPromptCatalog,
  McpPromptExpansion,
  McpPromptGetRequest,
  McpResourceCatalog,
  McpResourceRef,
  McpServer,
  McpServerInput,
  McpServerLog,
  MessageRequest,
  MessagesPage,
  MessagesPageRequest,
  ModelList,
  ModelPrice,
  ModelPriceInput,
  ModelPriceRequest,
  PolicyRule,
  Provider,
  ProviderInput,
  ProviderPresetInfo,
  ProviderRequest,
  ReplyDetails,
  ReplyRequest,
  ResourceAttachment,
  RestorePlan,
  RestoreRequest,
  SamplingRespond,
  SaveFileRequest,
  SavedFile,
  SearchRequest,
  SearchResults,
  ShowShortcutRequest,
  StoredMessage,
  StreamAttachRequest,
  StreamOpenRequest,
  ToolApprovalRespond,
  ToolEnableRequest,
  ToolInfo,
  ToolRuleInput,
  Topic,
  TopicDeletedIfEmpty,
  TopicList,
  TopicRequest,
  TopicUsage,
  UpdateAcpAgent,
  UpdateAgentSession,
  UpdateAppSettings,
  UpdateAssistant,
  UpdateMcpServer,
  UpdateProvider,
  UpdateToolRule,
  UpdateTopic,
  UsageReport,
  UsageReportRequest,
  WindowOpenRequest,
} from './protocol.gen';

/** The operations `Backend.call` runs: name, request body (`void`: none) and answer. */
export interface Operations {
  app_info: { request: void; response: AppInfo };
  settings_get: { request: void; response: AppSettings };
  settings_update: { request: UpdateAppSettings; response: AppSettings };
  topics_list: { request: void; response: TopicList };
  topic_create: { request: CreateTopic; response: Topic };
  topic_update: { request: UpdateTopic; response: Topic };
  topic_delete: { request: TopicRequest; response: null };
  topic_delete_if_empty: { request: TopicRequest; response: TopicDeletedIfEmpty };
  topic_mark_seen: { request: TopicRequest; response: null };
  inbox_list: { request: TopicRequest; response: Array<InboxItem> };
  inbox_add: { request: InboxAddRequest; response: InboxItem };
  inbox_update: { request: InboxUpdateRequest; response: InboxItem };
  inbox_move: { request: InboxMoveRequest; response: Array<InboxItem> };
  inbox_cancel: { request: InboxItemRequest; response: null };
  inbox_release: { request: InboxItemRequest; response: InboxItem };
  messages_list: { request: TopicRequest; response: Array<StoredMessage> };
  messages_page: { request: MessagesPageRequest; response: MessagesPage };
  reply_stop: { request: ReplyRequest; response: null };
  message_select: { request: MessageRequest; response: null };
  messages_search: { request: SearchRequest; response: SearchResults };
  message_delete: { request: MessageRequest; response: null };
  topic_fork: { request: MessageRequest; response: Topic };
  image_fetch: { request: ImageFetchRequest; response: FetchedImage };
  providers_list: { request: void; response: Array<Provider> };
  provider_create: { request: ProviderInput; response: Provider };
  provider_update: { request: UpdateProvider; response: Provider };
  provider_delete: { request: ProviderRequest; response: null };
  provider_models: { request: ListModelsRequest; response: ModelList };
  provider_demo: { request: void; response: Provider };
  provider_presets: { request: void; response: Array<ProviderPresetInfo> };
  tools_list: { request: void; response: Array<ToolInfo> };
  tool_set_enabled: { request: ToolEnableRequest; response: null };
  tool_approval_respond: { request: ToolApprovalRespond; response: Approval };
  approvals_list: { request: ApprovalsListRequest; response: Array<Approval> };
  tool_rules_list: { request: void; response: Array<PolicyRule> };
  tool_rule_create: { request: ToolRuleInput; response: PolicyRule };
  tool_rule_update: { request: UpdateToolRule; response: PolicyRule };
  tool_rule_delete: { request: IdRequest; response: null };
  tool_audit_list: { request: AuditListRequest; response: Array<AuditEntry> };
  assistants_list: { request: void; response: Array<Assistant> };
  assistant_create: { request: AssistantInput; response: Assistant };
  assistant_update: { request: UpdateAssistant; response: Assistant };
  assistant_delete: { request: IdRequest; response: null };
  assistant_features_list: { request: void; response: Array<FeatureInfo> };
  mcp_servers_list: { request: void; response: Array<McpServer> };
  mcp_server_create: { request: McpServerInput; response: McpServer };
  mcp_server_update: { request: UpdateMcpServer; response: McpServer };
  mcp_server_delete: { request: IdRequest; response: null };
  mcp_server_refresh: { request: IdRequest; response: null };
  mcp_server_log: { request: IdRequest; response: McpServerLog };
  mcp_server_log_level: { request: McpLogLevelRequest; response: McpServerLog };
  mcp_roots_list: { request: void; response: Array<string> };
  mcp_elicitation_respond: { request: ElicitationRespond; response: null };
  mcp_sampling_respond: { request: SamplingRespond; response: null };
  mcp_resources_list: { request: void; response: McpResourceCatalog };
  mcp_resource_read: { request: McpResourceRef; response: ResourceAttachment };
  mcp_prompts_list: { request: void; response: McpPromptCatalog };
  mcp_prompt_get: { request: McpPromptGetRequest; response: McpPromptExpansion };
  mcp_prompt_complete: { request: McpCompleteRequest; response: McpCompletion };
  acp_agents_list: { request: void; response: Array<AcpAgent> };
  acp_agent_presets: { request: void; response: Array<AcpAgentInput> };
  acp_agent_create: { request: AcpAgentInput; response: AcpAgent };
  acp_agent_update: { request: UpdateAcpAgent; response: AcpAgent };
  acp_agent_delete: { request: IdRequest; response: null };
  agent_sessions_list: { request: void; response: AgentSessionList };
  agent_session_create: { request: AgentSessionInput; response: AgentSession };
  agent_session_update: { request: UpdateAgentSession; response: AgentSession };
  agent_session_delete: { request: IdRequest; response: null };
  agent_session_reset: { request: IdRequest; response: AgentSession };
  agent_session_set_mode: { request: AgentModeRequest; response: AgentModeChange };
  usage_reply: { request: MessageRequest; response: ReplyDetails };
  usage_topic: { request: TopicRequest; response: TopicUsage };
  usage_report: { request: UsageReportRequest; response: UsageReport };
  usage_prices: { request: void; response: Array<ModelPrice> };
  usage_price_set: { request: ModelPriceInput; response: Array<ModelPrice> };
  usage_price_reset: { request: ModelPriceRequest; response: Array<ModelPrice> };
  topic_export: { request: ExportRequest; response: ExportedFile };
  topics_import: { request: ImportRequest; response: ImportReport };
  backup_create: { request: void; response: BackupInfo };
  backups_list: { request: void; response: Array<BackupInfo> };
  backup_restore: { request: RestoreRequest; response: RestorePlan };
  window_open: { request: WindowOpenRequest; response: null };
  file_save: { request: SaveFileRequest; response: SavedFile };
  show_shortcut_set: { request: ShowShortcutRequest; response: AppSettings };
  stream_detach: { request: TopicRequest; response: null };
  stream_abort: { request: TopicRequest; response: null };
}

/** The operations `Backend.subscribe` starts: they make the caller a listener of a topic. */
export interface StreamOperations {
  stream_open: { request: StreamOpenRequest; response: AttachReply };
  stream_interrupt: { request: StreamOpenRequest; response: AttachReply };
  stream_edit: { request: EditMessageRequest; response: AttachReply };
  stream_retry: { request: ReplyRequest; response: AttachReply };
  stream_continue: { request: ReplyRequest; response: AttachReply };
  stream_add_model: { request: AddModelRequest; response: AttachReply };
  stream_attach: { request: StreamAttachRequest; response: AttachReply };
}
