//! Model lists: asked of the endpoint in the provider's own format, with its key only.

use super::*;

#[tokio::test]
async fn a_model_list_comes_from_the_endpoint() {
    let f = fixture().await;
    let server = mock(Some("sk")).await;
    let list: protocol::api::ModelList =
        f.call("provider_models", json!({ "baseUrl": server.base_url(), "apiKey": "sk" })).await;
    assert_eq!(list.models, vec!["scripted"]);
    let err =
        f.engine.call("provider_models", json!({ "baseUrl": server.base_url(), "apiKey": "bad" })).await.unwrap_err();
    assert!(err.message.contains("authentication failed"), "{}", err.message);
}

#[tokio::test]
async fn audit_11_a_saved_key_goes_only_to_its_providers_address() {
    let f = fixture().await;
    let saved = mock(Some("sk-saved")).await;
    let provider = f.provider(&saved, "sk-saved").await;
    let elsewhere = mock(None).await;
    let request = json!({ "baseUrl": format!("{}/", elsewhere.base_url()), "providerId": provider.id });
    let err = f.engine.call("provider_models", request).await.unwrap_err();
    assert_eq!((err.kind, err.field.as_deref()), (ErrorKind::BadRequest, Some("baseUrl")), "{err:?}");
    let saved_origin = url::Url::parse(&saved.base_url()).unwrap().origin().ascii_serialization();
    assert!(
        err.message.contains(&format!("sent only to {saved_origin}"))
            && err.message.contains("enter the API key again"),
        "{}",
        err.message
    );
    assert!(elsewhere.requests().is_empty(), "nothing was sent there");

    // The key typed again goes there; the saved address still gets the saved key.
    let typed = json!({ "baseUrl": elsewhere.base_url(), "providerId": provider.id, "apiKey": "sk-other" });
    let list: protocol::api::ModelList = f.call("provider_models", typed).await;
    assert_eq!(list.models, vec!["scripted"]);
    let list: protocol::api::ModelList =
        f.call("provider_models", json!({ "baseUrl": saved.base_url(), "providerId": provider.id })).await;
    assert_eq!(list.models, vec!["scripted"]);
}

/// "Load models" asks in the provider's own format: the form's, else the saved provider's.
#[tokio::test]
async fn the_model_list_is_asked_for_in_the_providers_own_format() {
    let f = fixture().await;
    let server = mock(Some("sk-models")).await;
    let providers = provider_per_format(&f, &server, "sk-models").await;
    for (format, provider) in &providers {
        let (path, auth) = match format {
            ApiFormat::Anthropic => ("/v1/models?", "x-api-key"),
            ApiFormat::Gemini => ("/v1beta/models?", "x-goog-api-key"),
            _ => ("/v1/models", "authorization"),
        };
        // From the form (key typed), then from the saved provider (stored key, stored format).
        let typed = json!({ "baseUrl": provider.base_url, "format": format, "apiKey": "sk-models" });
        let saved = json!({ "baseUrl": provider.base_url, "providerId": provider.id });
        for request in [typed, saved] {
            let list: protocol::api::ModelList = f.call("provider_models", request).await;
            assert_eq!(list.models, vec!["scripted"], "{}", format.as_str());
            let asked = server.requests().last().unwrap().clone();
            assert!(asked.path.starts_with(path), "{}: {}", format.as_str(), asked.path);
            assert!(asked.header(auth).is_some_and(|v| v.contains("sk-models")), "{}: {auth}", format.as_str());
        }
    }
}
