//! What a model can do when the user has not said: a guess from its name and wire format.
//!
//! The guess only decides defaults; every model's capabilities are editable in settings.
//! It leans cautious where being wrong costs a failed request (`reasoning_effort` sent to
//! a model that rejects it) and generous where it costs nothing (native tools: every
//! current chat API takes them).

use protocol::api::{ApiFormat, ModelCapabilities, ProviderKind};

pub(crate) fn guess(format: ApiFormat, kind: ProviderKind, model: &str) -> ModelCapabilities {
    let name = model.to_ascii_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|n| name.contains(n));
    if kind == ProviderKind::Demo {
        return ModelCapabilities { tools: true, reasoning: false, vision: false, custom: false };
    }
    let not_chat = has(&["embed", "whisper", "tts", "dall-e", "moderation", "transcribe"]);
    // OpenAI's reasoning models take `reasoning_effort` / `reasoning.effort`.
    let bare = name.rsplit('/').next().unwrap_or(&name);
    let openai_reasoning = ["o1", "o3", "o4", "gpt-5"].iter().any(|p| bare.starts_with(p));
    let reasoning = match format {
        ApiFormat::OpenaiChat | ApiFormat::OpenaiResponses => openai_reasoning && !bare.starts_with("gpt-5-chat"),
        ApiFormat::Gemini => has(&["gemini-2.5", "gemini-3"]),
        // Extended thinking costs tokens; the user switches it on per model.
        ApiFormat::Anthropic => false,
    };
    let vision = match format {
        ApiFormat::Anthropic | ApiFormat::Gemini => true,
        ApiFormat::OpenaiChat | ApiFormat::OpenaiResponses => {
            has(&[
                "gpt-4o",
                "gpt-4.1",
                "gpt-4-turbo",
                "gpt-5",
                "vision",
                "-vl",
                "llava",
                "pixtral",
                "gemma3",
                "llama-4",
                "grok-4",
                "claude",
                "gemini",
            ]) || (openai_reasoning && !bare.starts_with("o1-mini") && !bare.starts_with("o3-mini"))
        }
    };
    ModelCapabilities { tools: !not_chat, reasoning, vision, custom: false }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(format: ApiFormat, model: &str) -> (bool, bool, bool) {
        let c = guess(format, ProviderKind::OpenaiCompatible, model);
        (c.tools, c.reasoning, c.vision)
    }

    #[test]
    fn guesses_follow_the_model_family() {
        assert_eq!(caps(ApiFormat::OpenaiChat, "gpt-4o-mini"), (true, false, true));
        assert_eq!(caps(ApiFormat::OpenaiResponses, "o4-mini"), (true, true, true));
        assert_eq!(caps(ApiFormat::OpenaiChat, "openai/gpt-5"), (true, true, true));
        assert_eq!(caps(ApiFormat::OpenaiChat, "o3-mini"), (true, true, false));
        assert_eq!(caps(ApiFormat::OpenaiChat, "deepseek-chat"), (true, false, false));
        assert_eq!(caps(ApiFormat::OpenaiChat, "llama3.2"), (true, false, false));
        assert_eq!(caps(ApiFormat::OpenaiChat, "text-embedding-3-small"), (false, false, false));
        assert_eq!(caps(ApiFormat::Anthropic, "claude-sonnet-4-5"), (true, false, true));
        assert_eq!(caps(ApiFormat::Gemini, "gemini-2.5-flash"), (true, true, true));
        let demo = guess(ApiFormat::OpenaiChat, ProviderKind::Demo, "scripted");
        assert!(demo.tools && !demo.reasoning);
    }
}
