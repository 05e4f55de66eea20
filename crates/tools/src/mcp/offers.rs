//! What servers offer beside tools, through the hub: resources and resource templates
//! (listed, read), prompts (listed, run) and argument completion. Unlike tools, these
//! are asked of the live connection each time (the user is waiting on a picker, not a
//! model on a request), with the hub's request timeout; a server that cannot answer is
//! named with why, and the others still answer.
//!
//! The servers' JSON is read here, leniently: an entry without the fields it needs is
//! left out, never a reason to fail the whole list.

use std::collections::BTreeMap;
use std::time::Duration;

use protocol::mcp_content::{
    McpCompletion, McpPrompt, McpPromptArgument, McpPromptCatalog, McpPromptExpansion, McpResource, McpResourceCatalog,
    McpResourceTemplate, McpServerProblem, ResourceAttachment, ResourceContent,
};
use serde_json::Value;

use super::McpHub;

/// How long a call waits for its server to (re)connect before it fails.
const CONNECT_WAIT: Duration = Duration::from_secs(10);

/// The most a read resource may hold (text and decoded blobs together), like an attached
/// file.
pub const MAX_RESOURCE_BYTES: usize = 20 * 1024 * 1024;

/// The longest URI taken from the user.
const MAX_URI: usize = 8 * 1024;

impl McpHub {
    /// The resources and resource templates of every enabled server that offers them.
    pub async fn resources(&self) -> McpResourceCatalog {
        let timeout = self.inner.request_timeout();
        let mut catalog = McpResourceCatalog::default();
        for (server_id, server_name, client) in self.inner.connections() {
            let Some(client) = client else {
                catalog.problems.push(not_connected(&server_id, &server_name));
                continue;
            };
            if !client.offers().resources {
                continue;
            }
            match client.list_resources(timeout).await {
                Ok(list) => catalog.resources.extend(read_resources(&list, &server_id, &server_name)),
                Err(message) => catalog.problems.push(problem(&server_id, &server_name, message)),
            }
            // Templates are optional: a server without any may not answer the request.
            if let Ok(list) = client.list_resource_templates(timeout).await {
                catalog.templates.extend(read_templates(&list, &server_id, &server_name));
            }
        }
        catalog
    }

    /// Reads one resource of one server. An error in words: no such server, not
    /// connected, the server refused, or the contents are too large.
    pub async fn read_resource(&self, server_id: &str, uri: &str) -> Result<ResourceAttachment, String> {
        let uri = checked_uri(uri)?;
        let client = self.inner.client(server_id, CONNECT_WAIT).await?;
        let server_name = self.inner.server_name(server_id).unwrap_or_default();
        if !client.offers().resources {
            return Err(format!("the MCP server {server_name} offers no resources"));
        }
        let answer = client
            .read_resource(uri, self.inner.request_timeout())
            .await
            .map_err(|why| format!("{server_name} could not read {uri}: {why}"))?;
        let contents = read_contents(&answer, uri)?;
        // Told of changes from now on, when the server can tell (best effort: the
        // attachment is fine without).
        if client.offers().subscriptions
            && let Err(error) = client.subscribe(uri, self.inner.request_timeout()).await
        {
            tracing::debug!(server = %server_name, %error, "could not subscribe to an MCP resource");
        }
        Ok(ResourceAttachment {
            server_id: server_id.to_owned(),
            server_name,
            uri: uri.to_owned(),
            contents,
            updated: false,
        })
    }

    /// Whether the server said the resource changed since it was last read here, and
    /// forgets that it did.
    pub fn take_resource_update(&self, server_id: &str, uri: &str) -> bool {
        self.inner.take_resource_update(server_id, uri)
    }

    /// Whether the server said the resource changed since it was last read here.
    pub fn resource_update_pending(&self, server_id: &str, uri: &str) -> bool {
        self.inner.resource_update_pending(server_id, uri)
    }

    /// The prompts of every enabled server that offers them.
    pub async fn prompts(&self) -> McpPromptCatalog {
        let timeout = self.inner.request_timeout();
        let mut catalog = McpPromptCatalog::default();
        for (server_id, server_name, client) in self.inner.connections() {
            let Some(client) = client else {
                catalog.problems.push(not_connected(&server_id, &server_name));
                continue;
            };
            if !client.offers().prompts {
                continue;
            }
            match client.list_prompts(timeout).await {
                Ok(list) => catalog.prompts.extend(read_prompts(&list, &server_id, &server_name)),
                Err(message) => catalog.problems.push(problem(&server_id, &server_name, message)),
            }
        }
        catalog
    }

    /// Runs a prompt: its messages as text for the composer, its embedded resources read.
    pub async fn get_prompt(
        &self,
        server_id: &str,
        name: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<McpPromptExpansion, String> {
        let client = self.inner.client(server_id, CONNECT_WAIT).await?;
        let server_name = self.inner.server_name(server_id).unwrap_or_default();
        let answer = client
            .get_prompt(name, arguments, self.inner.request_timeout())
            .await
            .map_err(|why| format!("{server_name}'s prompt {name} could not be run: {why}"))?;
        read_expansion(&answer, server_id, &server_name)
    }

    /// Values the server suggests for a prompt's argument. None (not an error) when the
    /// server does not complete.
    pub async fn complete_prompt_argument(
        &self,
        server_id: &str,
        prompt: &str,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Result<McpCompletion, String> {
        let client = self.inner.client(server_id, CONNECT_WAIT).await?;
        if !client.offers().completions {
            return Ok(McpCompletion::default());
        }
        let answer =
            client.complete_prompt_argument(prompt, argument, value, context, self.inner.request_timeout()).await?;
        Ok(read_completion(&answer))
    }
}

fn not_connected(server_id: &str, server_name: &str) -> McpServerProblem {
    problem(server_id, server_name, format!("{server_name} is not connected (see its status in Settings → MCP)"))
}

fn problem(server_id: &str, server_name: &str, message: String) -> McpServerProblem {
    McpServerProblem { server_id: server_id.to_owned(), server_name: server_name.to_owned(), message }
}

fn checked_uri(uri: &str) -> Result<&str, String> {
    let uri = uri.trim();
    if uri.is_empty() {
        return Err("the resource URI is empty".to_owned());
    }
    if uri.len() > MAX_URI || uri.chars().any(char::is_control) {
        return Err("the resource URI is too long or holds control characters".to_owned());
    }
    Ok(uri)
}

fn string(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
}

/// The entries of a list answer: rmcp's `list_all_*` gives an array; a page gives them
/// under `key`.
fn entries<'a>(list: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    list.as_array().or_else(|| list.get(key).and_then(Value::as_array)).into_iter().flatten()
}

pub(crate) fn read_resources(list: &Value, server_id: &str, server_name: &str) -> Vec<McpResource> {
    entries(list, "resources")
        .filter_map(|entry| {
            let uri = string(entry, "uri")?;
            Some(McpResource {
                server_id: server_id.to_owned(),
                server_name: server_name.to_owned(),
                name: string(entry, "name").unwrap_or_else(|| uri.clone()),
                uri,
                title: string(entry, "title"),
                description: string(entry, "description"),
                mime_type: string(entry, "mimeType"),
            })
        })
        .collect()
}

pub(crate) fn read_templates(list: &Value, server_id: &str, server_name: &str) -> Vec<McpResourceTemplate> {
    entries(list, "resourceTemplates")
        .filter_map(|entry| {
            let uri_template = string(entry, "uriTemplate")?;
            Some(McpResourceTemplate {
                server_id: server_id.to_owned(),
                server_name: server_name.to_owned(),
                name: string(entry, "name").unwrap_or_else(|| uri_template.clone()),
                uri_template,
                title: string(entry, "title"),
                description: string(entry, "description"),
                mime_type: string(entry, "mimeType"),
            })
        })
        .collect()
}

/// A `resources/read` answer's contents; refused when there are none or they are too
/// large.
pub(crate) fn read_contents(answer: &Value, uri: &str) -> Result<Vec<ResourceContent>, String> {
    let mut total = 0usize;
    let mut contents = Vec::new();
    for entry in entries(answer, "contents") {
        let content = read_content(entry, uri);
        total += match &content {
            Some(ResourceContent::Text { text, .. }) => text.len(),
            Some(ResourceContent::Blob { blob, .. }) => blob.len() / 4 * 3,
            None => 0,
        };
        if total > MAX_RESOURCE_BYTES {
            return Err(format!("{uri} is larger than {} MB, too large to attach", MAX_RESOURCE_BYTES / 1024 / 1024));
        }
        contents.extend(content);
    }
    if contents.is_empty() {
        return Err(format!("the server returned nothing for {uri}"));
    }
    Ok(contents)
}

fn read_content(entry: &Value, uri: &str) -> Option<ResourceContent> {
    let own_uri = string(entry, "uri").unwrap_or_else(|| uri.to_owned());
    let mime_type = string(entry, "mimeType");
    if let Some(text) = entry.get("text").and_then(Value::as_str) {
        return Some(ResourceContent::Text { uri: own_uri, mime_type, text: text.to_owned() });
    }
    let blob = entry.get("blob").and_then(Value::as_str)?;
    use base64::Engine as _;
    // Kept only when it is what it says: base64 (the model and the UI decode it).
    let blob: String = blob.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(&blob).ok()?;
    Some(ResourceContent::Blob { uri: own_uri, mime_type, blob })
}

pub(crate) fn read_prompts(list: &Value, server_id: &str, server_name: &str) -> Vec<McpPrompt> {
    entries(list, "prompts")
        .filter_map(|entry| {
            let name = string(entry, "name")?;
            let arguments = entry
                .get("arguments")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|argument| {
                    Some(McpPromptArgument {
                        name: string(argument, "name")?,
                        title: string(argument, "title"),
                        description: string(argument, "description"),
                        required: argument.get("required").and_then(Value::as_bool).unwrap_or(false),
                    })
                })
                .collect();
            Some(McpPrompt {
                server_id: server_id.to_owned(),
                server_name: server_name.to_owned(),
                name,
                title: string(entry, "title"),
                description: string(entry, "description"),
                arguments,
            })
        })
        .collect()
}

/// A `prompts/get` answer as composer text and resources. Messages not the user's are
/// marked with their role; content the composer cannot hold is named.
pub(crate) fn read_expansion(answer: &Value, server_id: &str, server_name: &str) -> Result<McpPromptExpansion, String> {
    let mut paragraphs = Vec::new();
    let mut resources = Vec::new();
    for message in entries(answer, "messages") {
        let assistant = message.get("role").and_then(Value::as_str) == Some("assistant");
        let content = message.get("content").unwrap_or(&Value::Null);
        let text = match content.get("type").and_then(Value::as_str).unwrap_or_default() {
            "text" => string(content, "text"),
            "resource" => {
                let resource = content.get("resource").unwrap_or(&Value::Null);
                let uri = string(resource, "uri").unwrap_or_default();
                match read_content(resource, &uri) {
                    Some(content) => {
                        resources.push(ResourceAttachment {
                            server_id: server_id.to_owned(),
                            server_name: server_name.to_owned(),
                            uri,
                            contents: vec![content],
                            updated: false,
                        });
                        None
                    }
                    None => Some(format!("[a resource the prompt included could not be read: {uri}]")),
                }
            }
            "resource_link" => string(content, "uri").map(|uri| format!("<{uri}>")),
            "image" => Some("[the prompt included an image, which is not attached]".to_owned()),
            "audio" => Some("[the prompt included audio, which is not attached]".to_owned()),
            other => Some(format!("[the prompt included {other} content, which is not shown]")),
        };
        if let Some(text) = text {
            paragraphs.push(if assistant { format!("Assistant: {text}") } else { text });
        }
    }
    if paragraphs.is_empty() && resources.is_empty() {
        return Err(format!("{server_name}'s prompt returned no messages"));
    }
    Ok(McpPromptExpansion { text: paragraphs.join("\n\n"), resources })
}

pub(crate) fn read_completion(answer: &Value) -> McpCompletion {
    let completion = answer.get("completion").unwrap_or(answer);
    let values = completion
        .get("values")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .take(100)
        .map(str::to_owned)
        .collect();
    McpCompletion { values, has_more: completion.get("hasMore").and_then(Value::as_bool).unwrap_or(false) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_keep_good_entries_and_leave_out_broken_ones() {
        let list = json!([
            {"uri": "demo://a", "name": "A", "mimeType": "text/plain"},
            {"name": "no uri"},
            {"uri": "demo://b"}
        ]);
        let resources = read_resources(&list, "s", "Server");
        assert_eq!(resources.len(), 2);
        assert_eq!(resources[1].name, "demo://b", "a resource without a name is named by its URI");
        let templates = read_templates(&json!([{"uriTemplate": "demo://t/{id}", "name": "T"}, {}]), "s", "Server");
        assert_eq!(templates.len(), 1);
        let prompts = read_prompts(
            &json!([{"name": "p", "arguments": [{"name": "city", "required": true}, {"nameless": 1}]}]),
            "s",
            "Server",
        );
        assert_eq!(prompts[0].arguments.len(), 1);
        assert!(prompts[0].arguments[0].required);
    }

    #[test]
    fn contents_are_checked() {
        let answer = json!({"contents": [
            {"uri": "demo://a", "mimeType": "text/plain", "text": "hello"},
            {"uri": "demo://a", "mimeType": "image/png", "blob": "aGk="},
            {"uri": "demo://a", "blob": "not base64!"}
        ]});
        let contents = read_contents(&answer, "demo://a").unwrap();
        assert_eq!(contents.len(), 2, "a blob that is not base64 is left out");
        assert!(read_contents(&json!({"contents": []}), "demo://x").unwrap_err().contains("nothing"));
        let huge = json!({"contents": [{"uri": "demo://h", "text": "x".repeat(MAX_RESOURCE_BYTES + 1)}]});
        assert!(read_contents(&huge, "demo://h").unwrap_err().contains("too large"));
        assert!(checked_uri("  ").is_err() && checked_uri("a\u{0}b").is_err());
    }

    #[test]
    fn a_prompt_expands_into_text_and_resources() {
        let answer = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "Hi"}},
            {"role": "assistant", "content": {"type": "text", "text": "Hello"}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "demo://r", "text": "R"}}},
            {"role": "user", "content": {"type": "image", "data": "aGk=", "mimeType": "image/png"}}
        ]});
        let expansion = read_expansion(&answer, "s", "Server").unwrap();
        assert_eq!(expansion.text, "Hi\n\nAssistant: Hello\n\n[the prompt included an image, which is not attached]");
        assert_eq!(expansion.resources.len(), 1);
        assert!(read_expansion(&json!({"messages": []}), "s", "Server").is_err());
        let completion = read_completion(&json!({"completion": {"values": ["a", 1, "b"], "hasMore": true}}));
        assert_eq!(completion.values, vec!["a", "b"]);
        assert!(completion.has_more);
    }
}
