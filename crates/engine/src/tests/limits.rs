//! Text fields have bounds: a name or title that would bloat every list is refused,
//! naming the field and its limit, and nothing is stored.

use protocol::api::Assistant;

use super::*;

fn refused(err: &protocol::ApiError, field: &str, max: usize) {
    assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some(field)), "{err:?}");
    assert!(err.message.contains(&format!("at most {max} characters")), "{}", err.message);
}

#[tokio::test]
async fn audit_25_titles_names_and_prompts_are_bounded_and_say_their_limit() {
    let f = fixture().await;
    let server = mock(None).await;
    let huge = "x".repeat(1_500_000);

    let err = f.engine.call("topic_create", json!({ "title": huge })).await.unwrap_err();
    refused(&err, "title", 200);
    let topic = f.topic().await;
    let err = f.engine.call("topic_update", json!({ "id": topic.id, "title": "t".repeat(201) })).await.unwrap_err();
    refused(&err, "title", 200);
    // At the limit (in characters, not bytes) is fine.
    let _: Topic = f.call("topic_update", json!({ "id": topic.id, "title": "é".repeat(200) })).await;

    let provider = json!({ "name": "n".repeat(101), "baseUrl": server.base_url(), "defaultModel": "scripted" });
    refused(&f.engine.call("provider_create", provider).await.unwrap_err(), "name", 100);
    let provider = json!({ "name": "Mock", "baseUrl": server.base_url(), "defaultModel": "m".repeat(201) });
    refused(&f.engine.call("provider_create", provider).await.unwrap_err(), "defaultModel", 200);
    let provider = json!({
        "name": "Mock", "baseUrl": server.base_url(), "defaultModel": "scripted", "models": ["ok", "m".repeat(201)]
    });
    refused(&f.engine.call("provider_create", provider).await.unwrap_err(), "models.1", 200);

    refused(&f.engine.call("assistant_create", json!({ "name": huge })).await.unwrap_err(), "name", 100);
    let assistant = json!({ "name": "Writer", "systemPrompt": "p".repeat(100_001) });
    refused(&f.engine.call("assistant_create", assistant).await.unwrap_err(), "systemPrompt", 100_000);
    let long_prompt = "p".repeat(100_000);
    let saved: Assistant = f.call("assistant_create", json!({ "name": "Writer", "systemPrompt": long_prompt })).await;
    assert_eq!(saved.system_prompt.len(), 100_000);

    let mcp = json!({ "name": huge, "transport": { "kind": "http", "url": "http://127.0.0.1:1/mcp" } });
    refused(&f.engine.call("mcp_server_create", mcp).await.unwrap_err(), "name", 100);

    // Nothing refused was stored.
    let topics = f.call::<protocol::api::TopicList>("topics_list", json!({})).await.topics;
    assert_eq!(topics.len(), 1);
    assert!(f.call::<Vec<Provider>>("providers_list", json!({})).await.is_empty());
    let listed = serde_json::to_string(&f.engine.call("topics_list", json!({})).await.unwrap()).unwrap();
    assert!(listed.len() < 10_000, "topics_list stays small: {} bytes", listed.len());
}
