//! A running call's questions from its server (MCP elicitation): each shown as a card in
//! the reply (a `data-mcp-elicitation` part, replaced as it changes), open in the shared
//! [`OpenQuestions`] until the user answers, it expires, or the call ends.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use protocol::elicitation::{ELICITATION_PART, ElicitationCard, ElicitationState};
use protocol::{DataChunk, UiChunk};
use tokio::sync::oneshot;
use tools::asks::{ElicitAnswer, OpenQuestions, ServerAsk};

/// How long a question waits for the user before the server is told `cancel`.
const QUESTION_WAIT: Duration = Duration::from_secs(10 * 60);

/// A card to send: `new` when it opens a part, else it replaces its earlier self.
pub(super) struct CardChunk {
    pub chunk: UiChunk,
    pub new: bool,
}

/// The questions of one running call.
pub(super) struct CallQuestions {
    registry: Option<Arc<OpenQuestions>>,
    call_id: String,
    /// The cards of questions still waiting, by id.
    open: BTreeMap<String, ElicitationCard>,
    waiting: FuturesUnordered<BoxFuture<'static, Settled>>,
}

struct Settled {
    id: String,
    outcome: Outcome,
    answer: oneshot::Sender<ElicitAnswer>,
}

enum Outcome {
    Answered(ElicitAnswer),
    Expired,
    /// The server withdrew it, or the question was dropped.
    Withdrawn,
}

impl CallQuestions {
    pub(super) fn new(registry: Option<Arc<OpenQuestions>>, call_id: &str) -> Self {
        Self { registry, call_id: call_id.to_owned(), open: BTreeMap::new(), waiting: FuturesUnordered::new() }
    }

    /// Whether a question waits for the user (the call's own timeout stands still).
    pub(super) fn waiting(&self) -> bool {
        !self.open.is_empty()
    }

    /// A question arrived: its card.
    pub(super) fn arrive(&mut self, ask: ServerAsk) -> CardChunk {
        let ServerAsk::Elicit { elicitation, answer } = ask;
        let id = uuid::Uuid::now_v7().to_string();
        let mut card = ElicitationCard {
            elicitation_id: id.clone(),
            tool_call_id: self.call_id.clone(),
            server_name: elicitation.server_name,
            message: elicitation.message,
            form: None,
            problem: None,
            state: ElicitationState::Pending,
            content: None,
        };
        match (elicitation.form, &self.registry) {
            (Err(problem), _) => {
                card.state = ElicitationState::Refused;
                card.problem = Some(format!("Colloquy cannot show this form, and told the server so: {problem}"));
            }
            (Ok(form), None) => {
                card.form = Some(form);
                card.state = ElicitationState::Refused;
                card.problem = Some("this reply cannot take answers to a server's questions".into());
                let _ = answer.send(ElicitAnswer::Cancel);
            }
            (Ok(form), Some(registry)) => {
                let answered = registry.open(id.clone(), form.clone());
                card.form = Some(form);
                self.open.insert(id.clone(), card.clone());
                self.waiting.push(Box::pin(settle(id, answered, answer)));
            }
        }
        CardChunk { chunk: chunk(&card), new: true }
    }

    /// The next question to settle (answered, expired, withdrawn by the server): its
    /// answer goes to the server and its card is updated. Never resolves while none waits.
    pub(super) async fn settled(&mut self) -> CardChunk {
        let Some(Settled { id, outcome, answer }) = self.waiting.next().await else {
            return std::future::pending().await;
        };
        if let Some(registry) = &self.registry {
            registry.close(&id);
        }
        let mut card = self.open.remove(&id).unwrap_or_else(|| gone_card(&id, &self.call_id));
        card.state = match outcome {
            Outcome::Answered(ElicitAnswer::Accept(content)) => {
                card.content = Some(content.clone());
                let _ = answer.send(ElicitAnswer::Accept(content));
                ElicitationState::Accepted
            }
            Outcome::Answered(ElicitAnswer::Decline) => {
                let _ = answer.send(ElicitAnswer::Decline);
                ElicitationState::Declined
            }
            Outcome::Answered(ElicitAnswer::Cancel) => {
                let _ = answer.send(ElicitAnswer::Cancel);
                ElicitationState::Cancelled
            }
            Outcome::Expired => {
                let _ = answer.send(ElicitAnswer::Cancel);
                ElicitationState::Expired
            }
            Outcome::Withdrawn => ElicitationState::Withdrawn,
        };
        CardChunk { chunk: chunk(&card), new: false }
    }

    /// The call ends (`state`: `Cancelled` when the user stopped the reply, `Withdrawn`
    /// when the call finished or failed first): questions still open are answered
    /// `cancel` and their cards say so.
    pub(super) fn end(&mut self, state: ElicitationState) -> Vec<CardChunk> {
        // Dropping the waiting futures drops their answer senders: the server hears `cancel`.
        self.waiting.clear();
        std::mem::take(&mut self.open)
            .into_values()
            .map(|mut card| {
                if let Some(registry) = &self.registry {
                    registry.close(&card.elicitation_id);
                }
                card.state = state;
                CardChunk { chunk: chunk(&card), new: false }
            })
            .collect()
    }
}

impl Drop for CallQuestions {
    /// A turn dropped mid-call (its task ended) leaves no question open behind it.
    fn drop(&mut self) {
        if let Some(registry) = &self.registry {
            for id in self.open.keys() {
                registry.close(id);
            }
        }
    }
}

async fn settle(
    id: String,
    answered: oneshot::Receiver<ElicitAnswer>,
    mut answer: oneshot::Sender<ElicitAnswer>,
) -> Settled {
    let outcome = tokio::select! {
        given = answered => match given {
            Ok(given) => Outcome::Answered(given),
            Err(_) => Outcome::Withdrawn,
        },
        _ = answer.closed() => Outcome::Withdrawn,
        _ = tokio::time::sleep(QUESTION_WAIT) => Outcome::Expired,
    };
    Settled { id, outcome, answer }
}

fn gone_card(id: &str, call_id: &str) -> ElicitationCard {
    ElicitationCard {
        elicitation_id: id.to_owned(),
        tool_call_id: call_id.to_owned(),
        server_name: String::new(),
        message: String::new(),
        form: None,
        problem: None,
        state: ElicitationState::Withdrawn,
        content: None,
    }
}

fn chunk(card: &ElicitationCard) -> UiChunk {
    UiChunk::Data(DataChunk {
        kind: ELICITATION_PART.into(),
        id: Some(card.elicitation_id.clone()),
        data: serde_json::to_value(card).unwrap_or_default(),
        transient: None,
    })
}
