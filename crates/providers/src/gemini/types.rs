//! Lenient wire types for Gemini's `GenerateContentResponse` and model lists (camelCase).

use serde::Deserialize;
use serde_json::Value;

/// One `data:` frame of `streamGenerateContent?alt=sse`, or one element of a whole answer.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerateContentResponse {
    #[serde(default, deserialize_with = "crate::decoder::lenient_list")]
    pub candidates: Vec<Candidate>,
    #[serde(default)]
    pub prompt_feedback: Option<PromptFeedback>,
    #[serde(default)]
    pub usage_metadata: Option<UsageMetadata>,
    #[serde(default)]
    pub response_id: Option<String>,
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    #[serde(default)]
    pub index: Option<u32>,
    #[serde(default)]
    pub content: Option<Content>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Content {
    #[serde(default, deserialize_with = "crate::decoder::lenient_list")]
    pub parts: Vec<Part>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    #[serde(default)]
    pub text: Option<String>,
    /// The text is a thought summary, not the answer.
    #[serde(default)]
    pub thought: Option<bool>,
    #[serde(default)]
    pub thought_signature: Option<String>,
    #[serde(default)]
    pub function_call: Option<FunctionCall>,
}

#[derive(Debug, Default, Deserialize)]
pub struct FunctionCall {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub args: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptFeedback {
    #[serde(default)]
    pub block_reason: Option<String>,
    #[serde(default)]
    pub block_reason_message: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageMetadata {
    #[serde(default)]
    pub prompt_token_count: Option<u64>,
    #[serde(default)]
    pub candidates_token_count: Option<u64>,
    /// Thinking tokens, billed as output.
    #[serde(default)]
    pub thoughts_token_count: Option<u64>,
    /// Prompt tokens read from a context cache (part of `prompt_token_count`).
    #[serde(default)]
    pub cached_content_token_count: Option<u64>,
}

/// `GET /v1beta/models`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPage {
    #[serde(default, deserialize_with = "crate::decoder::lenient_list")]
    pub models: Vec<ModelEntry>,
    #[serde(default)]
    pub next_page_token: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelEntry {
    /// `models/gemini-2.5-flash`.
    #[serde(default)]
    pub name: Option<String>,
    /// Absent on some proxies: then the model is assumed to generate content.
    #[serde(default)]
    pub supported_generation_methods: Option<Vec<String>>,
}
