//! The engine's answer to each operation of the table in `protocol::operations`: one
//! method per operation, each handing the typed request to its handler. Parsing the JSON
//! request and the `call(name, request)` entry point come from the table
//! ([`protocol::Operations::call`]).

use protocol::acp::{AcpAgent, AcpAgentInput, UpdateAcpAgent};
use protocol::api::{
    AgentModeChange, AgentModeRequest, AgentSession, AgentSessionInput, AgentSessionList, AppInfo, AppSettings,
    ApprovalsListRequest, Assistant, AssistantInput, AuditListRequest, CreateTopic, FetchedImage, IdRequest,
    ImageFetchRequest, InboxAddRequest, InboxItem, InboxItemRequest, InboxMoveRequest, InboxUpdateRequest,
    ListModelsRequest, MessageRequest, MessagesPage, MessagesPageRequest, ModelList, Provider, ProviderInput,
    ProviderPresetInfo, ProviderRequest, ReplyRequest, StoredMessage, ToolApprovalRespond, ToolEnableRequest,
    ToolRuleInput, Topic, TopicDeletedIfEmpty, TopicList, TopicRequest, UpdateAgentSession, UpdateAppSettings,
    UpdateAssistant, UpdateProvider, UpdateToolRule, UpdateTopic,
};
use protocol::archive::{
    BackupInfo, ExportRequest, ExportedFile, ImportReport, ImportRequest, RestorePlan, RestoreRequest, SavedFile,
};
use protocol::elicitation::ElicitationRespond;
use protocol::mcp::{McpLogLevelRequest, McpServer, McpServerInput, McpServerLog, UpdateMcpServer};
use protocol::mcp_content::{
    McpCompleteRequest, McpCompletion, McpPromptCatalog, McpPromptExpansion, McpPromptGetRequest, McpResourceCatalog,
    McpResourceRef, ResourceAttachment,
};
use protocol::sampling::SamplingRespond;
use protocol::search::{SearchRequest, SearchResults};
use protocol::tool::{Approval, AuditEntry, PolicyRule, ToolInfo};
use protocol::usage::{
    ModelPrice, ModelPriceInput, ModelPriceRequest, ReplyDetails, TopicUsage, UsageReport, UsageReportRequest,
};
use protocol::{ApiError, ErrorKind, Operations};

use crate::Engine;

impl Operations for Engine {
    async fn app_info(&self) -> Result<AppInfo, ApiError> {
        Ok(self.info())
    }

    async fn settings_get(&self) -> Result<AppSettings, ApiError> {
        self.settings().await
    }

    async fn settings_update(&self, request: UpdateAppSettings) -> Result<AppSettings, ApiError> {
        self.update_settings(request).await
    }

    async fn topics_list(&self) -> Result<TopicList, ApiError> {
        // Taken before the read: a change stored while it reads counts as newer.
        let version = self.inner.streams.status().list_version();
        Ok(TopicList { topics: self.inner.store.list_topics().await?, version })
    }

    async fn topic_create(&self, request: CreateTopic) -> Result<Topic, ApiError> {
        self.create_topic(request).await
    }

    async fn topic_update(&self, request: UpdateTopic) -> Result<Topic, ApiError> {
        self.update_topic(request).await
    }

    async fn topic_delete(&self, request: TopicRequest) -> Result<(), ApiError> {
        self.inner.store.get_topic(&request.topic_id).await?;
        self.inner.streams.close_topic(&request.topic_id).await;
        self.inner.store.delete_topic(&request.topic_id).await?;
        self.offer_mcp_roots().await;
        Ok(())
    }

    async fn topic_delete_if_empty(&self, request: TopicRequest) -> Result<TopicDeletedIfEmpty, ApiError> {
        if crate::sessions::is_session(&request.topic_id) {
            return Err(ApiError::bad_request("topicId", "an agent session is deleted with agent_session_delete"));
        }
        let deleted = self.inner.store.delete_topic_if_empty(&request.topic_id).await?;
        if deleted {
            self.inner.streams.close_topic(&request.topic_id).await;
        }
        Ok(TopicDeletedIfEmpty { deleted })
    }

    async fn reply_stop(&self, request: ReplyRequest) -> Result<(), ApiError> {
        self.stop_reply(request).await
    }

    async fn topic_mark_seen(&self, request: TopicRequest) -> Result<(), ApiError> {
        self.inner.store.mark_topic_seen(&request.topic_id).await?;
        self.inner.streams.status().mark_seen(&request.topic_id);
        Ok(())
    }

    async fn inbox_list(&self, request: TopicRequest) -> Result<Vec<InboxItem>, ApiError> {
        self.inner.store.get_topic(&request.topic_id).await?;
        Ok(self.inner.store.list_inbox(&request.topic_id).await?)
    }

    async fn inbox_add(&self, request: InboxAddRequest) -> Result<InboxItem, ApiError> {
        Engine::inbox_add(self, request).await
    }

    async fn inbox_update(&self, request: InboxUpdateRequest) -> Result<InboxItem, ApiError> {
        Engine::inbox_update(self, request).await
    }

    async fn inbox_move(&self, request: InboxMoveRequest) -> Result<Vec<InboxItem>, ApiError> {
        Engine::inbox_move(self, request).await
    }

    async fn inbox_cancel(&self, request: InboxItemRequest) -> Result<(), ApiError> {
        Engine::inbox_cancel(self, request).await
    }

    async fn inbox_release(&self, request: InboxItemRequest) -> Result<InboxItem, ApiError> {
        Engine::inbox_release(self, request).await
    }

    async fn messages_list(&self, request: TopicRequest) -> Result<Vec<StoredMessage>, ApiError> {
        self.inner.branches.list(request).await
    }

    async fn messages_page(&self, request: MessagesPageRequest) -> Result<MessagesPage, ApiError> {
        self.inner.branches.page(request).await
    }

    async fn message_select(&self, request: MessageRequest) -> Result<(), ApiError> {
        self.inner.branches.select(request).await
    }

    async fn messages_search(&self, request: SearchRequest) -> Result<SearchResults, ApiError> {
        Ok(self.inner.store.search_messages(&request).await?)
    }

    async fn message_delete(&self, request: MessageRequest) -> Result<(), ApiError> {
        self.inner.branches.delete(request).await
    }

    async fn topic_fork(&self, request: MessageRequest) -> Result<Topic, ApiError> {
        self.inner.branches.fork(request).await
    }

    async fn image_fetch(&self, request: ImageFetchRequest) -> Result<FetchedImage, ApiError> {
        crate::images::fetch_image(request).await
    }

    async fn providers_list(&self) -> Result<Vec<Provider>, ApiError> {
        self.list_providers().await
    }

    async fn provider_create(&self, request: ProviderInput) -> Result<Provider, ApiError> {
        self.create_provider(request).await
    }

    async fn provider_update(&self, request: UpdateProvider) -> Result<Provider, ApiError> {
        self.update_provider(request).await
    }

    async fn provider_delete(&self, request: ProviderRequest) -> Result<(), ApiError> {
        self.inner.store.delete_provider(&request.provider_id).await?;
        if let Err(err) = self.inner.secrets.delete(request.provider_id.as_str()) {
            tracing::warn!(error = %err, "could not remove the deleted provider's key");
        }
        Ok(())
    }

    async fn provider_models(&self, request: ListModelsRequest) -> Result<ModelList, ApiError> {
        Engine::provider_models(self, request).await
    }

    async fn provider_demo(&self) -> Result<Provider, ApiError> {
        self.demo_provider().await
    }

    async fn provider_presets(&self) -> Result<Vec<ProviderPresetInfo>, ApiError> {
        Ok(crate::model_providers::presets())
    }

    async fn tools_list(&self) -> Result<Vec<ToolInfo>, ApiError> {
        self.list_tools().await
    }

    async fn tool_set_enabled(&self, request: ToolEnableRequest) -> Result<(), ApiError> {
        self.set_tool_enabled(request).await
    }

    async fn tool_approval_respond(&self, request: ToolApprovalRespond) -> Result<Approval, ApiError> {
        self.respond_approval(request).await
    }

    async fn approvals_list(&self, request: ApprovalsListRequest) -> Result<Vec<Approval>, ApiError> {
        self.list_approvals(request).await
    }

    async fn tool_rules_list(&self) -> Result<Vec<PolicyRule>, ApiError> {
        Ok(self.inner.store.list_rules().await?)
    }

    async fn tool_rule_create(&self, request: ToolRuleInput) -> Result<PolicyRule, ApiError> {
        self.save_rule(None, request).await
    }

    async fn tool_rule_update(&self, request: UpdateToolRule) -> Result<PolicyRule, ApiError> {
        self.update_rule(request).await
    }

    async fn tool_rule_delete(&self, request: IdRequest) -> Result<(), ApiError> {
        Ok(self.inner.store.delete_rule(&request.id).await?)
    }

    async fn tool_audit_list(&self, request: AuditListRequest) -> Result<Vec<AuditEntry>, ApiError> {
        self.list_audit(request).await
    }

    async fn assistants_list(&self) -> Result<Vec<Assistant>, ApiError> {
        Ok(self.inner.store.list_assistants().await?)
    }

    async fn assistant_create(&self, request: AssistantInput) -> Result<Assistant, ApiError> {
        self.save_assistant(None, request).await
    }

    async fn assistant_update(&self, request: UpdateAssistant) -> Result<Assistant, ApiError> {
        self.update_assistant(request).await
    }

    async fn assistant_delete(&self, request: IdRequest) -> Result<(), ApiError> {
        self.inner.store.delete_assistant(&request.id).await?;
        self.offer_mcp_roots().await;
        Ok(())
    }

    async fn assistant_features_list(&self) -> Result<Vec<protocol::api::FeatureInfo>, ApiError> {
        // The registry `assistant_create`/`assistant_update` check names against.
        Ok(agent::features::FeatureRegistry::builtin().describe())
    }

    async fn mcp_servers_list(&self) -> Result<Vec<McpServer>, ApiError> {
        self.list_mcp_servers().await
    }

    async fn mcp_server_create(&self, request: McpServerInput) -> Result<McpServer, ApiError> {
        self.save_mcp_server(None, request).await
    }

    async fn mcp_server_update(&self, request: UpdateMcpServer) -> Result<McpServer, ApiError> {
        self.update_mcp_server(request).await
    }

    async fn mcp_server_delete(&self, request: IdRequest) -> Result<(), ApiError> {
        self.delete_mcp_server(&request.id).await
    }

    async fn mcp_server_refresh(&self, request: IdRequest) -> Result<(), ApiError> {
        self.refresh_mcp_server(&request.id).await
    }

    async fn mcp_server_log(&self, request: IdRequest) -> Result<McpServerLog, ApiError> {
        self.inner.mcp.mcp_log(&request.id).await
    }

    async fn mcp_server_log_level(&self, request: McpLogLevelRequest) -> Result<McpServerLog, ApiError> {
        self.inner.mcp.set_mcp_log_level(request).await
    }

    async fn mcp_roots_list(&self) -> Result<Vec<String>, ApiError> {
        Ok(self.inner.mcp.hub().roots().iter().map(|folder| folder.display().to_string()).collect())
    }

    async fn mcp_elicitation_respond(&self, request: ElicitationRespond) -> Result<(), ApiError> {
        self.inner.mcp.respond_elicitation(request)
    }

    async fn mcp_sampling_respond(&self, request: SamplingRespond) -> Result<(), ApiError> {
        self.inner.mcp.respond_sampling(request).await
    }

    async fn mcp_resources_list(&self) -> Result<McpResourceCatalog, ApiError> {
        Ok(self.inner.mcp.hub().resources().await)
    }

    async fn mcp_resource_read(&self, request: McpResourceRef) -> Result<ResourceAttachment, ApiError> {
        self.inner.mcp.read_resource(request).await
    }

    async fn mcp_prompts_list(&self) -> Result<McpPromptCatalog, ApiError> {
        Ok(self.inner.mcp.hub().prompts().await)
    }

    async fn mcp_prompt_get(&self, request: McpPromptGetRequest) -> Result<McpPromptExpansion, ApiError> {
        self.inner.mcp.get_prompt(request).await
    }

    async fn mcp_prompt_complete(&self, request: McpCompleteRequest) -> Result<McpCompletion, ApiError> {
        self.inner.mcp.complete_prompt(request).await
    }

    async fn acp_agents_list(&self) -> Result<Vec<AcpAgent>, ApiError> {
        self.inner.acp_agents.list().await
    }

    async fn acp_agent_presets(&self) -> Result<Vec<AcpAgentInput>, ApiError> {
        Ok(protocol::acp::acp_presets())
    }

    async fn acp_agent_create(&self, request: AcpAgentInput) -> Result<AcpAgent, ApiError> {
        self.inner.acp_agents.create(request).await
    }

    async fn acp_agent_update(&self, request: UpdateAcpAgent) -> Result<AcpAgent, ApiError> {
        self.inner.acp_agents.update(request).await
    }

    async fn acp_agent_delete(&self, request: IdRequest) -> Result<(), ApiError> {
        self.inner.acp_agents.delete(&request.id).await
    }

    async fn agent_sessions_list(&self) -> Result<AgentSessionList, ApiError> {
        // Taken before the read: a change stored while it reads counts as newer.
        let version = self.inner.streams.status().list_version();
        Ok(AgentSessionList { sessions: self.list_sessions().await?, version })
    }

    async fn agent_session_create(&self, request: AgentSessionInput) -> Result<AgentSession, ApiError> {
        self.create_session(request).await
    }

    async fn agent_session_update(&self, request: UpdateAgentSession) -> Result<AgentSession, ApiError> {
        self.update_session(request).await
    }

    async fn agent_session_delete(&self, request: IdRequest) -> Result<(), ApiError> {
        self.delete_session(&request.id).await
    }

    async fn agent_session_reset(&self, request: IdRequest) -> Result<AgentSession, ApiError> {
        self.reset_session(&request.id).await
    }

    async fn agent_session_set_mode(&self, request: AgentModeRequest) -> Result<AgentModeChange, ApiError> {
        self.inner.sessions.set_agent_mode(request).await
    }

    async fn usage_reply(&self, request: MessageRequest) -> Result<ReplyDetails, ApiError> {
        self.inner.usage.reply(request).await
    }

    async fn usage_topic(&self, request: TopicRequest) -> Result<TopicUsage, ApiError> {
        self.inner.usage.topic(request).await
    }

    async fn usage_report(&self, request: UsageReportRequest) -> Result<UsageReport, ApiError> {
        self.inner.usage.report(request).await
    }

    async fn usage_prices(&self) -> Result<Vec<ModelPrice>, ApiError> {
        self.inner.usage.prices().await
    }

    async fn usage_price_set(&self, request: ModelPriceInput) -> Result<Vec<ModelPrice>, ApiError> {
        self.inner.usage.set_price(request).await
    }

    async fn usage_price_reset(&self, request: ModelPriceRequest) -> Result<Vec<ModelPrice>, ApiError> {
        self.inner.usage.reset_price(request).await
    }

    async fn topic_export(&self, request: ExportRequest) -> Result<ExportedFile, ApiError> {
        self.inner.archive.export(request).await
    }

    async fn topics_import(&self, request: ImportRequest) -> Result<ImportReport, ApiError> {
        let report = self.inner.archive.import(request).await?;
        // Imported topics keep their workspace folders.
        self.offer_mcp_roots().await;
        Ok(report)
    }

    async fn backup_create(&self) -> Result<BackupInfo, ApiError> {
        self.inner.archive.backup().await
    }

    async fn backups_list(&self) -> Result<Vec<BackupInfo>, ApiError> {
        self.inner.archive.backups()
    }

    async fn backup_restore(&self, request: RestoreRequest) -> Result<RestorePlan, ApiError> {
        self.inner.archive.restore(request).await
    }

    /// Served by the desktop shell itself; a browser downloads the file instead.
    async fn file_save(&self) -> Result<SavedFile, ApiError> {
        Err(ApiError::new(ErrorKind::BadRequest, "only the desktop app saves files; a browser downloads them"))
    }

    /// Served by the desktop shell itself; a browser has no app to bring forward.
    async fn show_shortcut_set(&self) -> Result<AppSettings, ApiError> {
        Err(ApiError::new(
            ErrorKind::BadRequest,
            "only the desktop app has a global shortcut; a browser tab cannot be brought forward from other apps",
        ))
    }

    /// Served by the desktop shell itself; over HTTP there is no window to open.
    async fn window_open(&self) -> Result<(), ApiError> {
        Err(ApiError::new(
            ErrorKind::BadRequest,
            "only the desktop app opens windows; open the topic in a new tab instead",
        ))
    }
}
