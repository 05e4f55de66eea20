//! A topic's system prompt and model settings reach each wire format in its own fields,
//! an assistant's settings apply where the topic sets none, and bad values are refused.

use super::*;

/// The request body the mock server recorded last.
fn last_body(server: &MockServer) -> Value {
    server.requests().last().map(|r| r.body.clone()).unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_topics_prompt_and_settings_reach_every_wire_format_in_its_own_fields() {
    let f = fixture().await;
    let server = mock(Some("k")).await;
    let capabilities = json!({ "scripted": { "tools": true, "reasoning": true, "vision": false } });
    let assistant: protocol::api::Assistant = f
        .call(
            "assistant_create",
            json!({ "name": "Terse", "systemPrompt": "Be terse.", "params": { "temperature": 1.5, "maxOutputTokens": 300 } }),
        )
        .await;
    assert_eq!(assistant.params.temperature, Some(1.5));
    for (format, base) in [
        ("openai_chat", server.base_url()),
        ("openai_responses", server.base_url()),
        ("anthropic", server.base_url()),
        ("gemini", server.gemini_base_url()),
    ] {
        let provider: Provider = f
            .call(
                "provider_create",
                json!({ "name": format, "format": format, "baseUrl": base, "apiKey": "k", "defaultModel": "scripted", "capabilities": capabilities }),
            )
            .await;
        let topic: Topic =
            f.call("topic_create", json!({ "model": { "providerId": provider.id, "model": "scripted" } })).await;
        let topic: Topic = f
            .call(
                "topic_update",
                json!({
                    "id": topic.id,
                    "assistantId": assistant.id,
                    "systemPrompt": "  Answer in French.  ",
                    "params": { "temperature": 0.25, "topP": 0.5, "reasoningEffort": "low" },
                }),
            )
            .await;
        assert_eq!(topic.system_prompt.as_deref(), Some("Answer in French."));
        server.push_script(Script::text(["D'accord."]));
        assert_eq!(terminal_status(&f.send(&topic, "hi").await), TerminalStatus::Success, "{format}");
        let body = last_body(&server);
        let system = "Be terse.\n\nAnswer in French.";
        // The topic's temperature wins over the assistant's; its max tokens apply.
        match format {
            "openai_chat" => {
                assert_eq!(body["messages"][0], json!({ "role": "system", "content": system }), "{format}");
                assert_eq!(
                    (&body["temperature"], &body["top_p"], &body["max_tokens"], &body["reasoning_effort"]),
                    (&json!(0.25), &json!(0.5), &json!(300), &json!("low")),
                    "{format}"
                );
            }
            "openai_responses" => {
                assert_eq!(body["input"][0], json!({ "role": "system", "content": system }), "{format}");
                assert_eq!(
                    (&body["temperature"], &body["top_p"], &body["max_output_tokens"], &body["reasoning"]["effort"]),
                    (&json!(0.25), &json!(0.5), &json!(300), &json!("low")),
                    "{format}"
                );
            }
            "anthropic" => {
                assert_eq!(body["system"], json!(system), "{format}");
                // Thinking runs at the default temperature and a top-p of at least 0.95.
                assert_eq!(body["thinking"]["budget_tokens"], json!(1024), "{format}");
                assert!(body.get("temperature").is_none() && body.get("top_p").is_none(), "{format}: {body}");
                assert_eq!(body["max_tokens"], json!(2048), "{format}: room for the thinking budget");
            }
            _ => {
                assert_eq!(body["systemInstruction"]["parts"][0]["text"], json!(system), "{format}");
                let config = &body["generationConfig"];
                assert_eq!(
                    (&config["temperature"], &config["topP"], &config["maxOutputTokens"]),
                    (&json!(0.25), &json!(0.5), &json!(300)),
                    "{format}"
                );
                assert_eq!(config["thinkingConfig"]["thinkingBudget"], json!(1024), "{format}");
            }
        }
    }
}

#[tokio::test]
async fn settings_are_cleared_by_empty_values_and_bad_ones_change_nothing() {
    let f = fixture().await;
    let server = mock(None).await;
    f.provider(&server, "").await;
    let topic = f.topic().await;
    let set: Topic = f
        .call(
            "topic_update",
            json!({ "id": topic.id, "systemPrompt": "Be kind.", "params": { "temperature": 0.5, "maxOutputTokens": 99 } }),
        )
        .await;
    assert_eq!((set.system_prompt.as_deref(), set.params.temperature), (Some("Be kind."), Some(0.5)));

    for (request, field) in [
        (json!({ "id": topic.id, "params": { "temperature": 3 } }), "params.temperature"),
        (json!({ "id": topic.id, "params": { "topP": 0 } }), "params.topP"),
        (json!({ "id": topic.id, "params": { "maxOutputTokens": 0 } }), "params.maxOutputTokens"),
        (json!({ "id": topic.id, "systemPrompt": "x".repeat(100_001) }), "systemPrompt"),
    ] {
        let err = f.engine.call("topic_update", request).await.unwrap_err();
        assert_eq!((err.kind, err.field.as_deref()), (protocol::ErrorKind::BadRequest, Some(field)));
    }
    let err =
        f.engine.call("topic_update", json!({ "id": topic.id, "params": { "temprature": 1 } })).await.unwrap_err();
    assert!(err.message.contains("temprature"), "an unknown setting is named: {}", err.message);
    let kept = f.call::<protocol::api::TopicList>("topics_list", Value::Null).await.topics;
    assert_eq!(kept[0].params, set.params, "a refused change leaves the settings as they were");

    let cleared: Topic = f.call("topic_update", json!({ "id": topic.id, "systemPrompt": "", "params": {} })).await;
    assert_eq!((cleared.system_prompt.as_deref(), cleared.params), (None, protocol::api::ModelParams::default()));
    server.push_script(Script::text(["ok"]));
    f.send(&cleared, "hi").await;
    let body = last_body(&server);
    assert_eq!(body["messages"][0]["role"], json!("user"), "no system message: {body}");
    assert!(body.get("temperature").is_none() && body.get("max_tokens").is_none(), "{body}");
}
