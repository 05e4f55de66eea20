//! A server's tools as Colloquy offers them: read from the server's `tools/list` answer,
//! checked (a tool with an unusable schema is left out and said so), and named
//! `<namespace>__<tool>` so tools of different servers never clash. A server's namespace
//! is chosen once, when it is added ([`unique_namespace`]), and kept.

use std::collections::HashSet;

use protocol::tool::ToolAnnotations;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::schema::InputSchema;

/// Longest tool name every provider accepts.
const MAX_NAME: usize = 64;

/// One tool of a server, as cached.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct McpToolSpec {
    /// Its name on the server (what `tools/call` takes).
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Value,
    pub annotations: ToolAnnotations,
}

/// Reads a `tools/list` answer (as JSON, whatever the SDK's version of it). Tools that
/// cannot be offered are reported in `problems`.
pub fn read_tools(tools: &[Value]) -> (Vec<McpToolSpec>, Vec<String>) {
    let mut out = Vec::with_capacity(tools.len());
    let mut problems = Vec::new();
    let mut seen = HashSet::new();
    for tool in tools {
        let Some(name) = tool.get("name").and_then(Value::as_str).filter(|n| !n.trim().is_empty()) else {
            problems.push("a tool without a name was left out".to_owned());
            continue;
        };
        if !seen.insert(name.to_owned()) {
            problems.push(format!("{name}: listed twice; the second was left out"));
            continue;
        }
        let schema = tool.get("inputSchema").cloned().unwrap_or_else(|| serde_json::json!({ "type": "object" }));
        if let Err(problem) = InputSchema::compile(&schema) {
            problems.push(format!("{name}: {problem}; it is not offered"));
            continue;
        }
        let hints = tool.get("annotations");
        let hint = |key: &str| hints.and_then(|h| h.get(key)).and_then(Value::as_bool);
        let read_only = hint("readOnlyHint").unwrap_or(false);
        out.push(McpToolSpec {
            name: name.to_owned(),
            title: tool.get("title").and_then(Value::as_str).map(str::to_owned),
            description: tool.get("description").and_then(Value::as_str).unwrap_or_default().to_owned(),
            input_schema: schema,
            annotations: ToolAnnotations {
                read_only,
                // MCP's default for a tool that is not read-only is "may be destructive".
                destructive: !read_only && hint("destructiveHint").unwrap_or(true),
                idempotent: hint("idempotentHint").unwrap_or(false),
                open_world: hint("openWorldHint").unwrap_or(true),
            },
        });
    }
    (out, problems)
}

/// A name as a namespace: lowercase letters, digits and single `_`s, at most 24
/// characters (never `__`, which separates it from the tool's name).
pub fn slug(server_name: &str) -> String {
    let mut slug: String = server_name
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
        .collect();
    while slug.contains("__") {
        slug = slug.replace("__", "_");
    }
    let slug = slug.trim_matches('_');
    let slug: String = slug.chars().take(24).collect();
    let slug = slug.trim_end_matches('_');
    if slug.is_empty() { "mcp".to_owned() } else { slug.to_owned() }
}

/// The namespace for a new server called `name`, given the namespaces other servers have:
/// its [`slug`], or the first of `<slug>_2`, `<slug>_3`, … that is free.
pub fn unique_namespace(name: &str, taken: &HashSet<String>) -> String {
    let base = slug(name);
    let mut candidate = base.clone();
    let mut n = 2;
    while taken.contains(&candidate) {
        candidate = format!("{base}_{n}");
        n += 1;
    }
    candidate
}

/// The name a tool gets in Colloquy: `<namespace>__<tool>`, with characters providers
/// refuse replaced and cut to 64 characters; `taken` keeps names unique (two tools of one
/// server that clean up to the same name: the later one in the server's list gets `_2`).
pub fn namespaced(prefix: &str, tool: &str, taken: &mut HashSet<String>) -> String {
    let clean: String =
        tool.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    let base: String = format!("{prefix}__{clean}").chars().take(MAX_NAME).collect();
    let mut candidate = base.clone();
    let mut n = 2;
    while !taken.insert(candidate.clone()) {
        let suffix = format!("_{n}");
        let keep = MAX_NAME - suffix.len();
        candidate = format!("{}{suffix}", base.chars().take(keep).collect::<String>());
        n += 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_are_read_with_their_hints_and_bad_ones_are_reported() {
        let (tools, problems) = read_tools(&[
            json!({"name": "echo", "description": "Echoes", "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}},
                   "annotations": {"readOnlyHint": true}}),
            json!({"name": "rm", "inputSchema": {"type": "object"}}),
            json!({"name": "broken", "inputSchema": {"type": "object", "properties": {"a": {"type": 5}}}}),
            json!({"name": "listy", "inputSchema": {"type": "array"}}),
            json!({"description": "nameless"}),
            json!({"name": "echo"}),
        ]);
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, vec!["echo", "rm"]);
        assert!(tools[0].annotations.read_only && !tools[0].annotations.destructive);
        assert!(tools[1].annotations.destructive, "not read-only means may be destructive");
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems[0].starts_with("broken: the input schema is invalid"), "{problems:?}");
    }

    #[test]
    fn names_are_namespaced_clean_unique_and_short() {
        assert_eq!(slug("  My Docs Server!"), "my_docs_server");
        assert_eq!(slug("  "), "mcp");
        assert_eq!(slug("a very long server name that goes on_"), "a_very_long_server_name");
        let taken: HashSet<String> = ["everything".to_owned(), "everything_2".to_owned()].into();
        assert_eq!(unique_namespace("Everything!", &taken), "everything_3");
        assert_eq!(unique_namespace("Files", &taken), "files");
        let mut taken = HashSet::new();
        assert_eq!(namespaced("fs", "read.file", &mut taken), "fs__read_file");
        assert_eq!(namespaced("fs", "read_file", &mut taken), "fs__read_file_2");
        let long = namespaced("fs", &"x".repeat(100), &mut taken);
        assert_eq!(long.len(), 64);
        let again = namespaced("fs", &"x".repeat(100), &mut taken);
        assert!(again.len() == 64 && again.ends_with("_2") && again != long);
    }
}
