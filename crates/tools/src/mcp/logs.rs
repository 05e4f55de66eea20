//! What a server says through MCP logging (`notifications/message`): kept per server in a
//! bounded ring (the last [`LOG_ENTRIES`], each cut to [`LOG_ENTRY_BYTES`]), across
//! reconnects, for Settings → MCP; never printed to our own log above DEBUG.
//!
//! MCP logging is deprecated by SEP-2577 (rmcp marks it so), but servers still use it.
#![allow(deprecated)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use protocol::mcp::{McpLogEntry, McpLogLevel};
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use serde_json::Value;

/// How many messages a server's log keeps, and how much of each.
pub const LOG_ENTRIES: usize = 200;
pub const LOG_ENTRY_BYTES: usize = 4 * 1024;

#[derive(Clone, Default)]
pub(crate) struct ServerLog(Arc<Mutex<VecDeque<McpLogEntry>>>);

impl ServerLog {
    pub(crate) fn push(&self, message: LoggingMessageNotificationParam) {
        let text = match &message.data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let entry = McpLogEntry { at: now(), level: level_of(message.level), logger: message.logger, text: cut(text) };
        if let Ok(mut entries) = self.0.lock() {
            if entries.len() == LOG_ENTRIES {
                entries.pop_front();
            }
            entries.push_back(entry);
        }
    }

    pub(crate) fn entries(&self) -> Vec<McpLogEntry> {
        self.0.lock().map(|e| e.iter().cloned().collect()).unwrap_or_default()
    }
}

/// Now, as RFC 3339 in UTC.
fn now() -> String {
    let now = time::OffsetDateTime::now_utc();
    now.format(&time::format_description::well_known::Rfc3339).unwrap_or_else(|_| now.unix_timestamp().to_string())
}

fn cut(mut text: String) -> String {
    if text.len() > LOG_ENTRY_BYTES {
        let mut at = LOG_ENTRY_BYTES;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let dropped = text.len() - at;
        text.truncate(at);
        text.push_str(&format!(" … ({dropped} more bytes not kept)"));
    }
    text
}

pub(crate) fn level_of(level: LoggingLevel) -> McpLogLevel {
    match level {
        LoggingLevel::Debug => McpLogLevel::Debug,
        LoggingLevel::Info => McpLogLevel::Info,
        LoggingLevel::Notice => McpLogLevel::Notice,
        LoggingLevel::Warning => McpLogLevel::Warning,
        LoggingLevel::Error => McpLogLevel::Error,
        LoggingLevel::Critical => McpLogLevel::Critical,
        LoggingLevel::Alert => McpLogLevel::Alert,
        LoggingLevel::Emergency => McpLogLevel::Emergency,
    }
}

pub(crate) fn rmcp_level(level: McpLogLevel) -> LoggingLevel {
    match level {
        McpLogLevel::Debug => LoggingLevel::Debug,
        McpLogLevel::Info => LoggingLevel::Info,
        McpLogLevel::Notice => LoggingLevel::Notice,
        McpLogLevel::Warning => LoggingLevel::Warning,
        McpLogLevel::Error => LoggingLevel::Error,
        McpLogLevel::Critical => LoggingLevel::Critical,
        McpLogLevel::Alert => LoggingLevel::Alert,
        McpLogLevel::Emergency => LoggingLevel::Emergency,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_last_entries_and_cuts_long_ones() {
        let log = ServerLog::default();
        for n in 0..LOG_ENTRIES + 5 {
            log.push(LoggingMessageNotificationParam::new(LoggingLevel::Info, Value::String(format!("m{n}"))));
        }
        let entries = log.entries();
        assert_eq!(entries.len(), LOG_ENTRIES);
        assert_eq!(entries[0].text, "m5");
        log.push(LoggingMessageNotificationParam::new(LoggingLevel::Error, Value::String("é".repeat(LOG_ENTRY_BYTES))));
        let last = log.entries().pop().unwrap();
        assert!(last.text.len() < LOG_ENTRY_BYTES + 64 && last.text.ends_with("not kept)"), "{}", last.text.len());
        assert_eq!(last.level, McpLogLevel::Error);
    }
}
