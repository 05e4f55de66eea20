//! Questions a server asks the user while one of its calls runs (MCP elicitation and
//! sampling): on
//! their way from the connection to whoever shows them ([`AskSink`], in the call's
//! [`crate::ToolContext`]), and the open ones waiting for the user's answer
//! ([`OpenQuestions`]).
//!
//! Whoever receives a [`ServerAsk`] answers through its `answer` sender; dropping it
//! answers `cancel` (a stopped reply, an ended call).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use protocol::elicitation::{ElicitationAction, ElicitationForm};
use serde_json::{Map, Value};
use tokio::sync::oneshot;

/// A form a server asks the user to fill in.
#[derive(Clone, Debug)]
pub struct Elicitation {
    pub server_name: String,
    /// What the server says it needs.
    pub message: String,
    /// The form, or why its schema could not be read (the server was already told; the
    /// card only says so).
    pub form: Result<ElicitationForm, String>,
}

/// The user's answer, as the server gets it.
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitAnswer {
    /// The form's content, already checked against it.
    Accept(Map<String, Value>),
    Decline,
    Cancel,
}

/// A completion a server asks of the reply's model (MCP sampling), text only.
#[derive(Clone, Debug)]
pub struct Sampling {
    pub server_id: String,
    pub server_name: String,
    pub system_prompt: Option<String>,
    pub messages: Vec<protocol::sampling::SamplingMessage>,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    /// The user let this server sample without asking.
    pub allowed: bool,
}

/// The model's answer to a sampling request.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampled {
    pub text: String,
    /// The model that answered.
    pub model: String,
    /// MCP's words: `endTurn`, `maxTokens`, `stopSequence`, or the provider's own.
    pub stop_reason: String,
}

/// Something a server asks during a call.
pub enum ServerAsk {
    Elicit {
        elicitation: Elicitation,
        answer: oneshot::Sender<ElicitAnswer>,
    },
    /// Answered with the model's completion, or why there is none (the user said no, the
    /// model failed), in words for the server.
    Sample {
        sampling: Sampling,
        answer: oneshot::Sender<Result<Sampled, String>>,
    },
}

/// Where a call's server questions go.
pub type AskSink = Arc<dyn Fn(ServerAsk) + Send + Sync>;

/// Why an answer was not taken.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AnswerError {
    /// Answered already, or the call that asked has ended.
    #[error("this question is no longer open: it was answered, or the call that asked it has ended")]
    NotOpen,
    /// The content does not fit the form; the question stays open.
    #[error("{0}")]
    Invalid(String),
}

/// Elicitations waiting for the user, by id. Shared by the turns that show them and the
/// operation that answers them.
#[derive(Default)]
pub struct OpenQuestions {
    open: Mutex<HashMap<String, Open>>,
}

enum Open {
    Form {
        form: ElicitationForm,
        answer: oneshot::Sender<ElicitAnswer>,
    },
    /// A sampling request waiting for the user's allow (true) or deny.
    Sampling {
        server_id: String,
        answer: oneshot::Sender<bool>,
    },
}

impl OpenQuestions {
    /// Opens a question; its answer arrives on the receiver.
    pub fn open(&self, id: String, form: ElicitationForm) -> oneshot::Receiver<ElicitAnswer> {
        let (answer, receiver) = oneshot::channel();
        if let Ok(mut open) = self.open.lock() {
            open.insert(id, Open::Form { form, answer });
        }
        receiver
    }

    /// Opens a sampling request of the server; the user's decision (allow: true) arrives
    /// on the receiver.
    pub fn open_sampling(&self, id: String, server_id: String) -> oneshot::Receiver<bool> {
        let (answer, receiver) = oneshot::channel();
        if let Ok(mut open) = self.open.lock() {
            open.insert(id, Open::Sampling { server_id, answer });
        }
        receiver
    }

    /// Allows or denies a sampling request; returns the id of the server that asked.
    pub fn decide_sampling(&self, id: &str, allow: bool) -> Result<String, AnswerError> {
        let Ok(mut open) = self.open.lock() else { return Err(AnswerError::NotOpen) };
        if !matches!(open.get(id), Some(Open::Sampling { .. })) {
            return Err(AnswerError::NotOpen);
        }
        match open.remove(id) {
            Some(Open::Sampling { server_id, answer }) => {
                answer.send(allow).map_err(|_| AnswerError::NotOpen)?;
                Ok(server_id)
            }
            _ => Err(AnswerError::NotOpen),
        }
    }

    /// Forgets a question (it ended without an answer).
    pub fn close(&self, id: &str) {
        if let Ok(mut open) = self.open.lock() {
            open.remove(id);
        }
    }

    /// Whether the question waits for an answer.
    pub fn is_open(&self, id: &str) -> bool {
        self.open.lock().is_ok_and(|open| open.contains_key(id))
    }

    /// Answers a question. Accepted content must fit the form (missing content is an
    /// empty form); content that does not leaves the question open, with what is wrong.
    pub fn answer(
        &self,
        id: &str,
        action: ElicitationAction,
        content: Option<Map<String, Value>>,
    ) -> Result<(), AnswerError> {
        let Ok(mut open) = self.open.lock() else { return Err(AnswerError::NotOpen) };
        let Some(Open::Form { form, .. }) = open.get(id) else { return Err(AnswerError::NotOpen) };
        let answer = match action {
            ElicitationAction::Accept => {
                let content = content.unwrap_or_default();
                form.check(&content).map_err(AnswerError::Invalid)?;
                ElicitAnswer::Accept(content)
            }
            ElicitationAction::Decline => ElicitAnswer::Decline,
            ElicitationAction::Cancel => ElicitAnswer::Cancel,
        };
        match open.remove(id) {
            Some(Open::Form { answer: sender, .. }) => sender.send(answer).map_err(|_| AnswerError::NotOpen),
            _ => Err(AnswerError::NotOpen),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn an_answer_that_does_not_fit_leaves_the_question_open() {
        let questions = OpenQuestions::default();
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}, "required": ["n"]});
        let answer = questions.open("q".into(), ElicitationForm::from_schema(&schema).unwrap());
        let content = |n: i64| json!({"n": n}).as_object().cloned();
        assert_eq!(
            questions.answer("q", ElicitationAction::Accept, content(9)),
            Err(AnswerError::Invalid("n: must be at most 3".into()))
        );
        assert_eq!(
            questions.answer("q", ElicitationAction::Accept, None),
            Err(AnswerError::Invalid("n is required".into()))
        );
        assert!(questions.is_open("q"));
        questions.answer("q", ElicitationAction::Accept, content(2)).unwrap();
        assert_eq!(answer.await.unwrap(), ElicitAnswer::Accept(content(2).unwrap()));
        assert_eq!(questions.answer("q", ElicitationAction::Decline, None), Err(AnswerError::NotOpen));
    }
}
