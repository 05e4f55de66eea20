//! The registry and each built-in feature on its own. (The loop with its default features
//! is tested end to end in the crate's loop tests.)

use std::collections::HashMap;
use std::sync::Arc;

use providers::{
    ChatMessage, ChatRole, CompletionRequest, CompletionStream, ContentPart, LanguageModel, StopReason, ToolCall,
    ToolResult, ToolSpec,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use ::turn::TurnOutcome;

use crate::{TurnRequest, run_turn};

fn prompt_ctx<'a>(
    tools: &'a [ToolSpec],
    tool_calling: ToolCalling,
    rounds_left: &'a HashMap<String, u32>,
) -> PromptContext<'a> {
    PromptContext { step: 0, tools, tool_calling, rounds_left }
}

fn response_ctx<'a>(tool_calls: &'a [ToolCall], finish: &'a StopReason) -> ResponseContext<'a> {
    ResponseContext { step: 0, text: "", tool_calls, finish }
}

fn names(features: &[Arc<dyn Feature>]) -> Vec<&str> {
    features.iter().map(|f| f.name()).collect()
}

fn read_file_spec() -> ToolSpec {
    ToolSpec { name: "read_file".into(), description: "Reads a file.".into(), input_schema: json!({"type": "object"}) }
}

fn call(id: &str) -> ToolCall {
    ToolCall { id: id.into(), name: "read_file".into(), arguments: json!({"path": "a.txt"}) }
}

/// A conversation with one call of `read_file` and its result.
fn with_result(call_id: &str, text: &str) -> Vec<ChatMessage> {
    vec![
        ChatMessage::system("Be brief."),
        ChatMessage::user("Read a.txt"),
        ChatMessage::new(ChatRole::Assistant, vec![ContentPart::ToolCall(call(call_id))]),
        ChatMessage::tool_results(vec![ToolResult::text(call_id, "read_file", text, false)]),
    ]
}

// ---- the registry ----------------------------------------------------------------------

#[test]
fn an_unknown_name_is_an_error_that_names_it_and_the_known_ones() {
    let error = match FeatureRegistry::builtin().build(&["tool-loop", "finish-cut-off"]) {
        Err(error) => error,
        Ok(features) => panic!("built {:?}", names(&features)),
    };
    assert_eq!(error.name, "finish-cut-off");
    assert_eq!(
        error.to_string(),
        "there is no feature named \"finish-cut-off\"; the features are: context-rounds, prompt-tool-calling, tool-loop"
    );
}

#[test]
fn features_compose_in_registration_order_whatever_order_they_are_named_in() {
    let registry = FeatureRegistry::builtin();
    let built = registry.build(&["tool-loop", "prompt-tool-calling", "context-rounds", "tool-loop"]).unwrap();
    assert_eq!(names(&built), ["context-rounds", "prompt-tool-calling", "tool-loop"]);
    assert_eq!(names(&registry.build(&["tool-loop"]).unwrap()), ["tool-loop"]);
    assert!(registry.build::<&str>(&[]).unwrap().is_empty());
}

struct Named(&'static str);

impl Feature for Named {
    fn name(&self) -> &str {
        self.0
    }
}

#[test]
fn a_new_feature_is_one_registration_and_registering_a_name_again_replaces_it_in_place() {
    let mut registry = FeatureRegistry::builtin();
    registry.register("finish-cut-off", "test", || Arc::new(Named("finish-cut-off")));
    registry.register("context-rounds", "test", || Arc::new(Named("context-rounds (replaced)")));
    assert_eq!(
        registry.names().collect::<Vec<_>>(),
        ["context-rounds", "prompt-tool-calling", "tool-loop", "finish-cut-off"]
    );
    let built = registry.build(&["finish-cut-off", "context-rounds"]).unwrap();
    assert_eq!(names(&built), ["context-rounds (replaced)", "finish-cut-off"]);
}

#[test]
fn the_defaults_are_what_the_loop_did_before_features_had_names() {
    assert_eq!(default_features(ToolCalling::Native), ["context-rounds", "tool-loop"]);
    assert_eq!(default_features(ToolCalling::Prompt), ["context-rounds", "prompt-tool-calling", "tool-loop"]);
    for tool_calling in [ToolCalling::Native, ToolCalling::Prompt] {
        assert!(FeatureRegistry::builtin().build(&default_features(tool_calling)).is_ok());
    }
}

/// A model the turn must never call: a misconfigured turn fails before any model call.
struct Unreachable;

impl LanguageModel for Unreachable {
    fn stream(&self, _request: CompletionRequest) -> CompletionStream {
        panic!("a turn with an unknown feature called the model")
    }

    fn format_name(&self) -> &'static str {
        ""
    }
}

#[tokio::test]
async fn a_turn_whose_configuration_names_an_unknown_feature_fails_with_a_clear_error() {
    let completion = CompletionRequest { messages: vec![ChatMessage::user("Hi")], ..CompletionRequest::default() };
    let mut request = TurnRequest::new(Arc::new(Unreachable), completion, std::time::Duration::from_secs(5));
    request.feature_names = Some(vec!["tool-loop".into(), "summarise".into()]);
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let mut sink = tx;
    let outcome = run_turn(request, CancellationToken::new(), &mut sink).await;
    drop(sink);
    let TurnOutcome::Failed { error } = outcome else { panic!("{outcome:?}") };
    assert_eq!(error.kind, protocol::ErrorKind::BadRequest);
    assert_eq!(error.field.as_deref(), Some("features"));
    assert!(error.message.contains("no feature named \"summarise\""), "{}", error.message);
    let mut chunks = Vec::new();
    while let Some(chunk) = rx.recv().await {
        chunks.push(chunk);
    }
    assert!(
        chunks.iter().any(|c| matches!(c, protocol::UiChunk::Error { error_text } if error_text == &error.message)),
        "{chunks:?}"
    );
}

// ---- context-rounds --------------------------------------------------------------------

#[test]
fn context_rounds_replaces_a_result_whose_rounds_are_used_up_by_a_note() {
    let tools = [read_file_spec()];
    let mut messages = with_result("c1", "the whole file");
    let untouched = messages.clone();
    let still_seen = HashMap::from([("c1".to_owned(), 1)]);
    ContextRounds.process_prompts(&prompt_ctx(&tools, ToolCalling::Native, &still_seen), &mut messages);
    assert_eq!(messages, untouched);

    let used_up = HashMap::from([("c1".to_owned(), 0), ("other".to_owned(), 3)]);
    ContextRounds.process_prompts(&prompt_ctx(&tools, ToolCalling::Native, &used_up), &mut messages);
    assert_eq!(messages[..3], untouched[..3]);
    let ContentPart::ToolResult(result) = &messages[3].content[0] else { panic!("{:?}", messages[3]) };
    assert_eq!(result.call_id, "c1");
    assert_eq!(
        result.text_content(),
        "[this result of read_file was removed from the context to save space; the user still sees it]"
    );
}

#[test]
fn context_rounds_leaves_results_without_a_limit_alone() {
    let mut messages = with_result("c1", "the whole file");
    let untouched = messages.clone();
    let other = HashMap::from([("c2".to_owned(), 0)]);
    ContextRounds.process_prompts(&prompt_ctx(&[], ToolCalling::Native, &other), &mut messages);
    assert_eq!(messages, untouched);
}

// ---- prompt-tool-calling ---------------------------------------------------------------

#[test]
fn prompt_tool_calling_writes_calls_and_results_as_text_and_lists_the_tools_after_the_system_prompt() {
    let tools = [read_file_spec()];
    let mut messages = with_result("c1", "hello");
    PromptToolCalling.process_prompts(&prompt_ctx(&tools, ToolCalling::Prompt, &HashMap::new()), &mut messages);
    assert_eq!(messages.len(), 5);
    assert_eq!(messages[0].text(), "Be brief.");
    assert_eq!(messages[1].role, ChatRole::System);
    assert!(messages[1].text().contains("- read_file: Reads a file."), "{}", messages[1].text());
    assert_eq!(messages[2].text(), "Read a.txt");
    assert_eq!(messages[3].role, ChatRole::Assistant);
    assert_eq!(
        messages[3].text(),
        "<tool_call>{\"arguments\":{\"path\":\"a.txt\"},\"name\":\"read_file\"}</tool_call>"
    );
    assert_eq!(messages[4].role, ChatRole::User);
    assert_eq!(messages[4].text(), "<tool_result name=\"read_file\" id=\"c1\">\nhello\n</tool_result>");
}

#[test]
fn prompt_tool_calling_without_tools_still_writes_earlier_calls_as_text() {
    let mut messages = with_result("c1", "hello");
    PromptToolCalling.process_prompts(&prompt_ctx(&[], ToolCalling::Prompt, &HashMap::new()), &mut messages);
    assert_eq!(messages.len(), 4);
    assert!(messages.iter().all(|m| m.role != ChatRole::Tool));
    assert_eq!(messages.iter().filter(|m| m.role == ChatRole::System).count(), 1);
}

#[test]
fn prompt_tool_calling_does_nothing_for_a_model_with_native_tools() {
    let tools = [read_file_spec()];
    let mut messages = with_result("c1", "hello");
    let untouched = messages.clone();
    PromptToolCalling.process_prompts(&prompt_ctx(&tools, ToolCalling::Native, &HashMap::new()), &mut messages);
    assert_eq!(messages, untouched);
}

// ---- tool-loop -------------------------------------------------------------------------

#[test]
fn tool_loop_asks_for_another_round_exactly_when_the_model_called_tools() {
    let calls = [call("c1")];
    assert_eq!(
        ToolLoop.response_complete(&response_ctx(&calls, &StopReason::ToolCalls)),
        RoundAction::NextRound { messages: Vec::new() }
    );
    for finish in [StopReason::Stop, StopReason::Length] {
        assert_eq!(ToolLoop.response_complete(&response_ctx(&[], &finish)), RoundAction::Done);
    }
}

/// A model whose every reply is one call of a tool that does not exist (the loop answers
/// it with an error, so no tool is needed), counting the calls it gets.
struct CallsAMissingTool(std::sync::atomic::AtomicU32);

impl LanguageModel for CallsAMissingTool {
    fn stream(&self, _request: CompletionRequest) -> CompletionStream {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(futures::stream::iter([
            Ok(providers::CompletionEvent::ToolCallStart { index: 0, id: "c1".into(), name: "lookup".into() }),
            Ok(providers::CompletionEvent::Finish { reason: StopReason::ToolCalls }),
        ]))
    }

    fn format_name(&self) -> &'static str {
        ""
    }
}

#[tokio::test]
async fn without_tool_loop_a_turn_is_one_model_call_whose_calls_are_answered_but_not_followed_up() {
    let model = Arc::new(CallsAMissingTool(Default::default()));
    let completion =
        CompletionRequest { messages: vec![ChatMessage::user("Look it up")], ..CompletionRequest::default() };
    let mut request = TurnRequest::new(model.clone(), completion, std::time::Duration::from_secs(5));
    request.feature_names = Some(vec!["context-rounds".into()]);
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let mut sink = tx;
    let outcome = run_turn(request, CancellationToken::new(), &mut sink).await;
    drop(sink);
    assert_eq!(outcome, TurnOutcome::Finished { reason: protocol::FinishReason::ToolCalls });
    assert_eq!(model.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    let mut chunks = Vec::new();
    while let Some(chunk) = rx.recv().await {
        chunks.push(chunk);
    }
    assert!(
        chunks
            .iter()
            .any(|c| matches!(c, protocol::UiChunk::ToolOutputError { tool_call_id, .. } if tool_call_id == "c1")),
        "{chunks:?}"
    );
}

// The trait's defaults: a feature that overrides nothing changes nothing.
#[test]
fn a_feature_that_overrides_nothing_changes_nothing() {
    let feature = Named("quiet");
    let mut messages = with_result("c1", "hello");
    let untouched = messages.clone();
    feature.process_prompts(&prompt_ctx(&[], ToolCalling::Prompt, &HashMap::new()), &mut messages);
    assert_eq!(messages, untouched);
    assert_eq!(feature.response_complete(&response_ctx(&[call("c1")], &StopReason::ToolCalls)), RoundAction::Done);
    assert!(feature.hooks().is_none());
}

#[test]
fn the_registry_describes_every_feature_it_builds_in_composition_order() {
    let registry = FeatureRegistry::builtin();
    let described = registry.describe();
    assert_eq!(
        described.iter().map(|info| info.name.as_str()).collect::<Vec<_>>(),
        registry.names().collect::<Vec<_>>()
    );
    assert!(described.iter().all(|info| !info.description.trim().is_empty()), "{described:?}");
}
