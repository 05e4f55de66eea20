//! Presets: the providers people actually use, as data — a name, the wire format, where the
//! API lives and whether it needs a key. Settings start from one and the user edits freely.

use protocol::api::ApiFormat;
use serde::Serialize;

/// A known provider to start a configuration from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderPreset {
    /// Stable identifier, e.g. `anthropic`.
    pub id: &'static str,
    /// What the user sees, e.g. `Anthropic`.
    pub name: &'static str,
    pub format: ApiFormat,
    /// The base URL to call; empty when the user must type one (a generic endpoint).
    pub base_url: &'static str,
    /// Whether calls fail without an API key. Local servers take none; a generic endpoint
    /// may or may not.
    pub needs_api_key: bool,
}

/// Every preset, in the order to offer them.
pub const PRESETS: &[ProviderPreset] = &[
    ProviderPreset {
        id: "openai",
        name: "OpenAI",
        format: ApiFormat::OpenaiResponses,
        base_url: "https://api.openai.com/v1",
        needs_api_key: true,
    },
    ProviderPreset {
        id: "anthropic",
        name: "Anthropic",
        format: ApiFormat::Anthropic,
        base_url: "https://api.anthropic.com/v1",
        needs_api_key: true,
    },
    ProviderPreset {
        id: "gemini",
        name: "Google Gemini",
        format: ApiFormat::Gemini,
        base_url: "https://generativelanguage.googleapis.com/v1beta",
        needs_api_key: true,
    },
    ProviderPreset {
        id: "openrouter",
        name: "OpenRouter",
        format: ApiFormat::OpenaiChat,
        base_url: "https://openrouter.ai/api/v1",
        needs_api_key: true,
    },
    ProviderPreset {
        id: "deepseek",
        name: "DeepSeek",
        format: ApiFormat::OpenaiChat,
        base_url: "https://api.deepseek.com/v1",
        needs_api_key: true,
    },
    ProviderPreset {
        id: "ollama",
        name: "Ollama",
        format: ApiFormat::OpenaiChat,
        base_url: "http://localhost:11434/v1",
        needs_api_key: false,
    },
    ProviderPreset {
        id: "lmstudio",
        name: "LM Studio",
        format: ApiFormat::OpenaiChat,
        base_url: "http://localhost:1234/v1",
        needs_api_key: false,
    },
    ProviderPreset {
        id: "openai_compatible",
        name: "OpenAI-compatible endpoint",
        format: ApiFormat::OpenaiChat,
        base_url: "",
        needs_api_key: false,
    },
];

/// The preset with this id.
pub fn preset(id: &str) -> Option<&'static ProviderPreset> {
    PRESETS.iter().find(|preset| preset.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate_base_url;

    #[test]
    fn every_preset_has_a_unique_id_and_a_valid_base_url() {
        for (position, preset) in PRESETS.iter().enumerate() {
            assert!(PRESETS[..position].iter().all(|other| other.id != preset.id), "{} twice", preset.id);
            if preset.base_url.is_empty() {
                assert_eq!(preset.id, "openai_compatible");
                continue;
            }
            let url = validate_base_url(preset.base_url).unwrap();
            assert_eq!(url.as_str(), preset.base_url, "stored as validation would save it");
        }
    }

    #[test]
    fn presets_cover_every_format_and_are_found_by_id() {
        for format in ApiFormat::ALL {
            assert!(PRESETS.iter().any(|preset| preset.format == format), "{format}");
        }
        assert_eq!(preset("gemini").map(|p| p.format), Some(ApiFormat::Gemini));
        assert_eq!(preset("nope"), None);
        let json = serde_json::to_value(preset("ollama").unwrap()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"id":"ollama","name":"Ollama","format":"openai_chat","baseUrl":"http://localhost:11434/v1","needsApiKey":false})
        );
    }
}
