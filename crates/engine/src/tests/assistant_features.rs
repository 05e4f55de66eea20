//! An assistant's features (reply strategies) select what its turns do: checked against
//! the registry when it is saved, passed into each turn of a topic that uses it.

use protocol::api::Assistant;

use super::tools::{call, tool_fixture};
use super::*;

#[tokio::test]
async fn an_assistant_without_tool_loop_makes_one_model_call_when_the_model_calls_a_tool() {
    let t = tool_fixture().await;
    let assistant: Assistant = t
        .f
        .call("assistant_create", json!({ "name": "One shot", "features": ["context-rounds", "prompt-tool-calling"] }))
        .await;
    assert_eq!(
        assistant.features.as_deref(),
        Some(&["context-rounds".to_owned(), "prompt-tool-calling".to_owned()][..])
    );
    let _: Topic = t.f.call("topic_update", json!({ "id": t.topic.id, "assistantId": assistant.id })).await;
    t.server.push_script(call("current_time", json!({})));
    let stream = t.f.send(&t.topic, "what time").await;
    assert_eq!(terminal_status(&stream), TerminalStatus::Success);
    let rows = t.settled().await;
    assert_eq!(t.chat_requests().len(), 1, "no round follows the tool call");
    assert_eq!(rows[1].status, MessageStatus::Success);
    let states: Vec<_> = rows[1]
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            UiPart::DynamicTool { tool_name, state, .. } => {
                Some((tool_name.clone(), serde_json::to_value(state).unwrap()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(states, [("current_time".to_owned(), json!("output-available"))], "the call was answered");

    // The same assistant with the defaults again: the turn goes on after the call.
    let body = json!({ "id": assistant.id, "assistant": { "name": "One shot" } });
    let assistant: Assistant = t.f.call("assistant_update", body).await;
    assert_eq!(assistant.features, None);
    t.server.push_script(call("current_time", json!({})));
    t.server.push_script(Script::text(["It is late."]));
    t.f.send(&t.topic, "and now?").await;
    let rows = t.settled().await;
    assert_eq!(t.chat_requests().len(), 3);
    assert!(rows[3].message.text().ends_with("It is late."));
}

#[tokio::test]
async fn create_and_update_refuse_an_unknown_or_repeated_feature_and_keep_an_empty_list() {
    let f = fixture().await;
    let err = f
        .engine
        .call("assistant_create", json!({ "name": "A", "features": ["tool-loop", "finish-cut-off"] }))
        .await
        .unwrap_err();
    assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some("features")));
    assert_eq!(
        err.message,
        "features: there is no feature named \"finish-cut-off\"; \
         the features are: context-rounds, prompt-tool-calling, tool-loop"
    );
    assert!(f.call::<Vec<Assistant>>("assistants_list", json!({})).await.is_empty(), "nothing was saved");

    let saved: Assistant = f.call("assistant_create", json!({ "name": "A", "features": [] })).await;
    assert_eq!(saved.features, Some(Vec::new()), "[]: no strategies, kept as such");

    let body = json!({ "id": saved.id, "assistant": { "name": "A", "features": ["tool-loop", "tool-loop"] } });
    let err = f.engine.call("assistant_update", body).await.unwrap_err();
    assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some("features")));
    assert_eq!(
        err.message,
        "features: \"tool-loop\" is named twice; the features are: context-rounds, prompt-tool-calling, tool-loop"
    );
    let body = json!({ "id": saved.id, "assistant": { "name": "A", "features": ["nope"] } });
    assert_eq!(f.engine.call("assistant_update", body).await.unwrap_err().field.as_deref(), Some("features"));
    let kept: Vec<Assistant> = f.call("assistants_list", json!({})).await;
    assert_eq!(kept[0].features, Some(Vec::new()), "a refused update changes nothing");
}
