//! The reply the mock gives when no script is queued. It doubles as the app's demo model,
//! so it has to look like a real answer: a heading, a paragraph about the prompt, a list
//! and a Rust code block, streamed word by word. The same prompt always gets the same reply.

/// The default reply to `prompt`, split into the chunks to stream (words with their
/// trailing whitespace, roughly one token each).
pub fn default_reply(prompt: &str) -> Vec<String> {
    split_into_tokens(&default_reply_text(prompt))
}

/// The default reply to `prompt` as one markdown string.
pub fn default_reply_text(prompt: &str) -> String {
    let topic = topic_of(prompt);
    let seed = fnv1a(prompt.trim().as_bytes());
    let pick = |options: &[&'static str], salt: u64| {
        options[(seed.rotate_left((salt * 13) as u32) % options.len() as u64) as usize]
    };

    let heading = pick(
        &["A quick look at your question", "Here is a first answer", "Let's break it down", "Thinking it through"],
        1,
    );
    let opener = pick(
        &[
            "That is a good thing to ask about.",
            "Here is how I would approach it.",
            "Let me walk through it step by step.",
        ],
        2,
    );
    let steps = pick(
        &[
            "- **Start small:** pin down the exact input and the output you expect.\n\
             - **Make it visible:** print or log the intermediate values.\n\
             - **Write it down:** turn what you learn into a test.",
            "- **Understand** what the code does today.\n\
             - **Change** one thing at a time and check the result.\n\
             - **Keep** a test so the fix stays fixed.",
            "- Split the problem into pieces you can check one by one.\n\
             - Prefer plain data and small functions.\n\
             - Measure before you optimise anything.",
        ],
        3,
    );
    let code = pick(
        &[
            "fn main() {\n    let prompt = PROMPT;\n    let words = prompt.split_whitespace().count();\n    println!(\"{words} words in: {prompt}\");\n}",
            "fn shout(text: &str) -> String {\n    text.to_uppercase()\n}\n\nfn main() {\n    println!(\"{}\", shout(PROMPT));\n}",
            "fn main() {\n    let prompt = PROMPT;\n    let reversed: String = prompt.chars().rev().collect();\n    println!(\"{reversed}\");\n}",
        ],
        4,
    );
    // `{:?}` renders a valid Rust string literal, escapes included.
    let code = code.replace("PROMPT", &format!("{topic:?}"));
    format!(
        "## {heading}\n\n\
         You asked about “{topic}”. {opener} This answer comes from Colloquy's built-in demo model, \
         which runs on your own machine, so you can try streaming, markdown and code blocks before \
         connecting a real provider.\n\n\
         {steps}\n\n\
         A tiny Rust example that works with your prompt:\n\n\
         ```rust\n{code}\n```\n\n\
         To chat with a real model, add an OpenAI-compatible provider in Settings."
    )
}

/// The prompt's first line, cut to a readable length.
fn topic_of(prompt: &str) -> String {
    const MAX_CHARS: usize = 60;
    let line = prompt.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("");
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return "nothing in particular".to_owned();
    }
    if line.chars().count() <= MAX_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(MAX_CHARS).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

/// Words with their trailing whitespace: concatenated, they give back `text` exactly.
fn split_into_tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut in_space = false;
    for c in text.chars() {
        if !c.is_whitespace() && in_space {
            tokens.push(std::mem::take(&mut current));
        }
        in_space = c.is_whitespace();
        current.push(c);
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

/// FNV-1a: stable across Rust versions and platforms, unlike `DefaultHasher`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPTS: [&str; 6] = [
        "How do I read a file line by line in Rust?",
        "",
        "   \n\n  hello   world  \nsecond line",
        "Explain \"quotes\", back\\slashes and {braces} in format strings please, with a very long prompt that goes on",
        "Ünïcödé ✓ 🎉 日本語で説明してください",
        "```rust\nfn injected() {}\n```",
    ];

    #[test]
    fn is_deterministic_per_prompt() {
        for prompt in PROMPTS {
            assert_eq!(default_reply(prompt), default_reply(prompt));
        }
        assert_ne!(default_reply_text(PROMPTS[0]), default_reply_text(PROMPTS[3]));
    }

    #[test]
    fn looks_like_a_real_markdown_answer_of_a_realistic_length() {
        for prompt in PROMPTS {
            let text = default_reply_text(prompt);
            assert!(text.starts_with("## "), "{text}");
            assert!(text.contains("\n- "), "a bullet list: {text}");
            assert!(text.contains("\n```rust\n") && text.contains("\n```\n"), "a rust block: {text}");
            assert!(text.contains(&format!("“{}”", topic_of(prompt))), "mentions the prompt: {text}");
            let tokens = default_reply(prompt).len();
            assert!((80..=150).contains(&tokens), "{tokens} tokens for {prompt:?}");
        }
    }

    #[test]
    fn chunks_concatenate_to_the_text() {
        for prompt in PROMPTS {
            assert_eq!(default_reply(prompt).concat(), default_reply_text(prompt));
        }
    }

    #[test]
    fn quotes_the_prompt_as_a_valid_rust_string() {
        let text = default_reply_text(PROMPTS[3]);
        assert!(
            text.contains(r#"let prompt = "Explain \"quotes\", back\\slashes and {braces}"#)
                || text.contains(r#"shout("Explain \"quotes\""#),
            "{text}"
        );
    }

    #[test]
    fn topics_are_the_first_line_cut_short() {
        assert_eq!(topic_of("   \n\n  hello   world  \nsecond"), "hello world");
        assert_eq!(topic_of(""), "nothing in particular");
        assert_eq!(topic_of(&"é".repeat(100)).chars().count(), 61);
    }
}
