//! Typed identifiers. All are opaque strings on the wire; new ones are UUIDv7 so they
//! sort by creation time.

use serde::{Deserialize, Serialize};
use std::fmt;
use ts_rs::TS;

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// A fresh, time-ordered id.
            pub fn new() -> Self {
                Self(uuid::Uuid::now_v7().to_string())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(value.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }
    };
}

string_id!(
    /// A conversation. Every stream, listener and status is keyed by it.
    TopicId
);
string_id!(
    /// A stored message (user or assistant row).
    MessageId
);
string_id!(
    /// One user turn: the user message and the assistant replies it started.
    TurnId
);
string_id!(
    /// One model's reply within a turn. `seq` counts per execution.
    ExecutionId
);
string_id!(
    /// A configured model provider.
    ProviderId
);

/// What a topic is, told by its id ([`TopicId::kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TopicKind {
    /// A conversation with models, created by the user.
    Chat,
    /// The conversation of an agent session (`agent-session:<session id>`).
    AgentSession,
}

impl TopicId {
    /// How an agent session's topic id begins. The one place it is spelled: the store binds
    /// it in SQL and the UI gets it generated (`AGENT_SESSION_TOPIC_PREFIX`, `topicKind`).
    pub const AGENT_SESSION_PREFIX: &'static str = "agent-session:";

    /// The topic of agent session `session_id`.
    pub fn agent_session(session_id: &str) -> Self {
        Self(format!("{}{session_id}", Self::AGENT_SESSION_PREFIX))
    }

    pub fn kind(&self) -> TopicKind {
        if self.0.starts_with(Self::AGENT_SESSION_PREFIX) { TopicKind::AgentSession } else { TopicKind::Chat }
    }
}

/// Which model answers: a provider and the provider's own model name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelRef {
    pub provider_id: ProviderId,
    pub model: String,
}

impl fmt::Display for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.provider_id, self.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_sessions_topic_is_told_apart_by_its_id() {
        let topic = TopicId::agent_session("s1");
        assert_eq!((topic.as_str(), topic.kind()), ("agent-session:s1", TopicKind::AgentSession));
        assert_eq!(TopicId::new().kind(), TopicKind::Chat);
        assert_eq!(TopicId::from("my agent-session:notes").kind(), TopicKind::Chat);
    }
}
