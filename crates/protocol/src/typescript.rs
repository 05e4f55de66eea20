//! The TypeScript declarations of the protocol, generated from these Rust types.
//!
//! `ui/src/protocol.gen.ts` is this module's output, committed; a test fails when the two
//! drift apart (run `cargo xtask gen` to rewrite it).

use ts_rs::{Config, TS};

use crate::acp::{AcpAgent, AcpAgentInput, AcpVariable, AcpVariableInput, UpdateAcpAgent};
use crate::api::*;
use crate::archive::*;
use crate::chunk::{DataChunk, FinishReason, UiChunk};
use crate::elicitation::{
    ElicitationAction, ElicitationCard, ElicitationField, ElicitationForm, ElicitationRespond, ElicitationState,
    FieldInput, FieldOption, TextFormat,
};
use crate::envelope::*;
use crate::error::{ApiError, ErrorKind};
use crate::ids::*;
use crate::mcp::*;
use crate::mcp_content::*;
use crate::message::*;
use crate::sampling::{SamplingCard, SamplingDecision, SamplingMessage, SamplingRespond, SamplingRole, SamplingState};
use crate::search::*;
use crate::tool::*;
use crate::usage::*;

/// The generated file's full text.
pub fn declarations() -> String {
    let cfg = Config::default();
    let decls = [
        TopicId::decl(&cfg),
        MessageId::decl(&cfg),
        TurnId::decl(&cfg),
        ExecutionId::decl(&cfg),
        ProviderId::decl(&cfg),
        TopicKind::decl(&cfg),
        ModelRef::decl(&cfg),
        ErrorKind::decl(&cfg),
        ApiError::decl(&cfg),
        FinishReason::decl(&cfg),
        DataChunk::decl(&cfg),
        UiChunk::decl(&cfg),
        MessageRole::decl(&cfg),
        MessageStatus::decl(&cfg),
        StatusReason::decl(&cfg),
        Usage::decl(&cfg),
        MessageMetadata::decl(&cfg),
        PartState::decl(&cfg),
        ToolState::decl(&cfg),
        ToolApproval::decl(&cfg),
        Decider::decl(&cfg),
        DataPart::decl(&cfg),
        UiPart::decl(&cfg),
        UiMessage::decl(&cfg),
        ExecutionRef::decl(&cfg),
        StreamEvent::decl(&cfg),
        ExecutionSnapshot::decl(&cfg),
        TerminalStatus::decl(&cfg),
        ExecutionTerminal::decl(&cfg),
        LaggedNotice::decl(&cfg),
        StreamMessage::decl(&cfg),
        ExecutionCursor::decl(&cfg),
        TopicStatus::decl(&cfg),
        TopicStatusEvent::decl(&cfg),
        StatusSnapshot::decl(&cfg),
        PathChanged::decl(&cfg),
        TopicPathVersion::decl(&cfg),
        PathVersion::decl(&cfg),
        ListName::decl(&cfg),
        ListChanged::decl(&cfg),
        ListVersions::decl(&cfg),
        ListVersion::decl(&cfg),
        StatusMessage::decl(&cfg),
        AttachReply::decl(&cfg),
        Topic::decl(&cfg),
        TopicList::decl(&cfg),
        CreateTopic::decl(&cfg),
        UpdateTopic::decl(&cfg),
        StoredMessage::decl(&cfg),
        StreamOpenRequest::decl(&cfg),
        ReplyRequest::decl(&cfg),
        MessageRequest::decl(&cfg),
        SearchRequest::decl(&cfg),
        SearchResults::decl(&cfg),
        SearchHit::decl(&cfg),
        SnippetPiece::decl(&cfg),
        MessagesPageRequest::decl(&cfg),
        MessagesPage::decl(&cfg),
        EditMessageRequest::decl(&cfg),
        ForkOrigin::decl(&cfg),
        ModelParams::decl(&cfg),
        ReasoningLevel::decl(&cfg),
        AddModelRequest::decl(&cfg),
        TopicRequest::decl(&cfg),
        StreamAttachRequest::decl(&cfg),
        ProviderKind::decl(&cfg),
        ApiFormat::decl(&cfg),
        ProviderPresetInfo::decl(&cfg),
        Provider::decl(&cfg),
        ProviderInput::decl(&cfg),
        UpdateProvider::decl(&cfg),
        ProviderRequest::decl(&cfg),
        ListModelsRequest::decl(&cfg),
        ModelList::decl(&cfg),
        AppInfo::decl(&cfg),
        ExportFormat::decl(&cfg),
        ExportRequest::decl(&cfg),
        ExportedFile::decl(&cfg),
        ImportRequest::decl(&cfg),
        ImportSource::decl(&cfg),
        ImportReport::decl(&cfg),
        ImportedTopic::decl(&cfg),
        ImportSkip::decl(&cfg),
        SaveFileRequest::decl(&cfg),
        SavedFile::decl(&cfg),
        BackupInfo::decl(&cfg),
        RestoreRequest::decl(&cfg),
        RestorePlan::decl(&cfg),
        FeatureInfo::decl(&cfg),
        AppSettings::decl(&cfg),
        UpdateAppSettings::decl(&cfg),
        Theme::decl(&cfg),
        InboxMode::decl(&cfg),
        InboxState::decl(&cfg),
        InboxItem::decl(&cfg),
        InboxAddRequest::decl(&cfg),
        InboxUpdateRequest::decl(&cfg),
        InboxMoveRequest::decl(&cfg),
        InboxItemRequest::decl(&cfg),
        WindowOpenRequest::decl(&cfg),
        TopicDeletedIfEmpty::decl(&cfg),
        ShowShortcutRequest::decl(&cfg),
        Attachment::decl(&cfg),
        ModelCapabilities::decl(&cfg),
        ToolAnnotations::decl(&cfg),
        ToolSource::decl(&cfg),
        ToolInfo::decl(&cfg),
        ToolContent::decl(&cfg),
        ToolOutput::decl(&cfg),
        PolicyDecision::decl(&cfg),
        MatchOp::decl(&cfg),
        RuleCondition::decl(&cfg),
        RuleScope::decl(&cfg),
        PolicyRule::decl(&cfg),
        ApprovalState::decl(&cfg),
        Approval::decl(&cfg),
        AuditEntry::decl(&cfg),
        ApprovalDecision::decl(&cfg),
        ApprovalScope::decl(&cfg),
        ToolApprovalRespond::decl(&cfg),
        ApprovalsListRequest::decl(&cfg),
        ToolRuleInput::decl(&cfg),
        UpdateToolRule::decl(&cfg),
        IdRequest::decl(&cfg),
        ImageFetchRequest::decl(&cfg),
        FetchedImage::decl(&cfg),
        AuditListRequest::decl(&cfg),
        ToolEnableRequest::decl(&cfg),
        Assistant::decl(&cfg),
        AssistantInput::decl(&cfg),
        UpdateAssistant::decl(&cfg),
        McpSecretName::decl(&cfg),
        McpTransport::decl(&cfg),
        McpTransportInput::decl(&cfg),
        McpState::decl(&cfg),
        McpStatus::decl(&cfg),
        McpServer::decl(&cfg),
        McpServerInput::decl(&cfg),
        UpdateMcpServer::decl(&cfg),
        McpLogLevel::decl(&cfg),
        McpLogEntry::decl(&cfg),
        McpServerLog::decl(&cfg),
        McpLogLevelRequest::decl(&cfg),
        ElicitationForm::decl(&cfg),
        ElicitationField::decl(&cfg),
        FieldInput::decl(&cfg),
        TextFormat::decl(&cfg),
        FieldOption::decl(&cfg),
        ElicitationState::decl(&cfg),
        ElicitationCard::decl(&cfg),
        ElicitationAction::decl(&cfg),
        ElicitationRespond::decl(&cfg),
        SamplingRole::decl(&cfg),
        SamplingMessage::decl(&cfg),
        SamplingState::decl(&cfg),
        SamplingCard::decl(&cfg),
        SamplingDecision::decl(&cfg),
        SamplingRespond::decl(&cfg),
        ContentAnnotations::decl(&cfg),
        McpResource::decl(&cfg),
        McpResourceTemplate::decl(&cfg),
        McpServerProblem::decl(&cfg),
        McpResourceCatalog::decl(&cfg),
        McpResourceRef::decl(&cfg),
        ResourceContent::decl(&cfg),
        ResourceAttachment::decl(&cfg),
        McpPrompt::decl(&cfg),
        McpPromptArgument::decl(&cfg),
        McpPromptCatalog::decl(&cfg),
        McpPromptGetRequest::decl(&cfg),
        McpPromptExpansion::decl(&cfg),
        McpCompleteRequest::decl(&cfg),
        McpCompletion::decl(&cfg),
        AcpVariable::decl(&cfg),
        AcpVariableInput::decl(&cfg),
        AcpAgent::decl(&cfg),
        AcpAgentInput::decl(&cfg),
        UpdateAcpAgent::decl(&cfg),
        AgentSession::decl(&cfg),
        AgentSessionList::decl(&cfg),
        AgentSessionInput::decl(&cfg),
        UpdateAgentSession::decl(&cfg),
        AgentModeRequest::decl(&cfg),
        AgentModeChange::decl(&cfg),
        AgentModeApplied::decl(&cfg),
        UsageTotals::decl(&cfg),
        ReplyUsage::decl(&cfg),
        TopicUsage::decl(&cfg),
        ReplyDetails::decl(&cfg),
        TimelineEntry::decl(&cfg),
        UsageReportRequest::decl(&cfg),
        UsageReport::decl(&cfg),
        UsageGroup::decl(&cfg),
        ModelPrice::decl(&cfg),
        PriceSource::decl(&cfg),
        ModelPriceInput::decl(&cfg),
        ModelPriceRequest::decl(&cfg),
    ];
    let mut out = String::from("// Generated from crates/protocol by `cargo xtask gen`. Do not edit.\n\n");
    out.push_str(
        "export type JsonValue = number | string | boolean | null | JsonValue[] | { [key: string]: JsonValue };\n\n",
    );
    for decl in decls {
        out.push_str("export ");
        out.push_str(&decl);
        out.push_str("\n\n");
    }
    out.push_str(&topic_kind_helpers());
    // The reasons the UI can tell from an error's code.
    let reasons: Vec<String> = StatusReason::ALL.iter().map(|reason| format!("\"{}\"", reason.as_str())).collect();
    out.push_str(&format!("export const STATUS_REASONS: readonly StatusReason[] = [{}];\n", reasons.join(", ")));
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// ts-rs exports types only: how an agent session's topic id is spelled comes as a
/// constant and a `topicKind` helper, written from [`TopicId::AGENT_SESSION_PREFIX`].
fn topic_kind_helpers() -> String {
    let name = |kind: TopicKind| serde_json::to_string(&kind).unwrap_or_default();
    format!(
        "/** How an agent session's topic id begins (`TopicId::AGENT_SESSION_PREFIX`). */\n\
         export const AGENT_SESSION_TOPIC_PREFIX = {prefix:?};\n\n\
         /** What a topic is, told by its id (`TopicId::kind`). */\n\
         export function topicKind(id: TopicId): TopicKind {{\n  \
         return id.startsWith(AGENT_SESSION_TOPIC_PREFIX) ? {session} : {chat};\n}}\n",
        prefix = TopicId::AGENT_SESSION_PREFIX,
        session = name(TopicKind::AgentSession),
        chat = name(TopicKind::Chat),
    )
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    #[test]
    fn generated_typescript_is_up_to_date() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/protocol.gen.ts");
        let expected = super::declarations();
        if std::env::var_os("COLLOQUY_UPDATE_GENERATED").is_some() {
            std::fs::write(&path, &expected).expect("write protocol.gen.ts");
            return;
        }
        let actual = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(actual == expected, "ui/src/protocol.gen.ts is stale: run `cargo xtask gen`");
    }
}
