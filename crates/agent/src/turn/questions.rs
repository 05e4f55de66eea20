//! A running call's questions from its server: each shown as a card in the reply (a
//! `data-mcp-elicitation` or `data-mcp-sampling` part, replaced as it changes), open in
//! the shared [`OpenQuestions`] until the user answers, it expires, or the call ends. An
//! allowed sampling request runs on the reply's own model, here, and is reported to the
//! hooks like any model call (so the usage ledger counts it).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use protocol::elicitation::{ELICITATION_PART, ElicitationCard, ElicitationState};
use protocol::sampling::{SAMPLING_PART, SamplingCard, SamplingRole, SamplingState};
use protocol::{DataChunk, UiChunk};
use providers::{ChatMessage, CompletionEvent, CompletionRequest, LanguageModel, StopReason, TokenUsage};
use tokio::sync::oneshot;
use tools::asks::{ElicitAnswer, OpenQuestions, Sampled, Sampling, ServerAsk};

use crate::hooks::{ModelCallEnd, ModelCallReport};

/// How long a question waits for the user before the server is told `cancel`.
const QUESTION_WAIT: Duration = Duration::from_secs(10 * 60);

/// A card to send: `new` when it opens a part, else it replaces its earlier self.
pub(super) struct CardChunk {
    pub chunk: UiChunk,
    pub new: bool,
}

/// The model a sampling request runs on: the reply's.
#[derive(Clone)]
pub(super) struct SamplingModel {
    pub model: Arc<dyn LanguageModel>,
    /// The provider's name for it.
    pub name: String,
}

/// The questions of one running call.
pub(super) struct CallQuestions {
    registry: Option<Arc<OpenQuestions>>,
    call_id: String,
    model: SamplingModel,
    /// The cards of questions still waiting, by id.
    open: BTreeMap<String, ElicitationCard>,
    /// The cards of sampling requests waiting for the user or the model, by id.
    samplings: BTreeMap<String, SamplingCard>,
    waiting: FuturesUnordered<BoxFuture<'static, Event>>,
}

/// Something that happened to one of the call's questions.
enum Event {
    Elicitation(Settled),
    /// The user allowed or denied a sampling request (or it expired, or was withdrawn).
    Decided {
        id: String,
        decision: Decision,
        sampling: Sampling,
        answer: oneshot::Sender<Result<Sampled, String>>,
    },
    /// The model answered a sampling request (or failed).
    Sampled {
        id: String,
        result: Result<Sampled, String>,
        report: ModelCallReport,
        answer: oneshot::Sender<Result<Sampled, String>>,
    },
    /// The server gave up on a running sampling request.
    SamplingWithdrawn {
        id: String,
    },
}

enum Decision {
    Allow,
    Deny,
    Expired,
    Withdrawn,
}

/// What settling an event gives: a card to send, and a model call to report.
pub(super) struct Settlement {
    pub card: CardChunk,
    pub report: Option<ModelCallReport>,
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
    pub(super) fn new(registry: Option<Arc<OpenQuestions>>, call_id: &str, model: SamplingModel) -> Self {
        Self {
            registry,
            call_id: call_id.to_owned(),
            model,
            open: BTreeMap::new(),
            samplings: BTreeMap::new(),
            waiting: FuturesUnordered::new(),
        }
    }

    /// Whether a question waits for the user or the model (the call's own timeout stands
    /// still).
    pub(super) fn waiting(&self) -> bool {
        !self.open.is_empty() || !self.samplings.is_empty()
    }

    /// A question arrived: its card.
    pub(super) fn arrive(&mut self, ask: ServerAsk) -> CardChunk {
        let (elicitation, answer) = match ask {
            ServerAsk::Elicit { elicitation, answer } => (elicitation, answer),
            ServerAsk::Sample { sampling, answer } => return self.arrive_sampling(sampling, answer),
        };
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
                self.waiting.push(Box::pin(async move { Event::Elicitation(settle(id, answered, answer).await) }));
            }
        }
        CardChunk { chunk: chunk(&card), new: true }
    }

    fn arrive_sampling(&mut self, sampling: Sampling, answer: oneshot::Sender<Result<Sampled, String>>) -> CardChunk {
        let id = uuid::Uuid::now_v7().to_string();
        let mut card = SamplingCard {
            sampling_id: id.clone(),
            tool_call_id: self.call_id.clone(),
            server_id: sampling.server_id.clone(),
            server_name: sampling.server_name.clone(),
            model: self.model.name.clone(),
            system_prompt: sampling.system_prompt.clone(),
            messages: sampling.messages.clone(),
            max_tokens: sampling.max_tokens,
            state: SamplingState::Pending,
            allowed_by_rule: sampling.allowed,
            result: None,
            problem: None,
        };
        match &self.registry {
            _ if sampling.allowed => {
                card.state = SamplingState::Running;
                self.waiting.push(Box::pin(run_sampling(id.clone(), self.model.clone(), sampling, answer)));
            }
            Some(registry) => {
                let decided = registry.open_sampling(id.clone(), sampling.server_id.clone());
                self.waiting.push(Box::pin(decide(id.clone(), decided, sampling, answer)));
            }
            None => {
                card.state = SamplingState::Denied;
                card.problem = Some("this reply cannot take answers to a server's requests".into());
                let _ = answer.send(Err("Colloquy cannot ask its user about this request".into()));
                return CardChunk { chunk: sampling_chunk(&card), new: true };
            }
        }
        self.samplings.insert(id, card.clone());
        CardChunk { chunk: sampling_chunk(&card), new: true }
    }

    /// The next question to settle (answered, expired, withdrawn by the server, a sampling
    /// request allowed, denied or answered by the model): its answer goes to the server and
    /// its card is updated. Never resolves while none waits.
    pub(super) async fn settled(&mut self) -> Settlement {
        let Some(event) = self.waiting.next().await else {
            return std::future::pending().await;
        };
        let plain = |card| Settlement { card, report: None };
        match event {
            Event::Elicitation(settled) => plain(self.elicitation_settled(settled)),
            Event::Decided { id, decision, sampling, answer } => plain(self.decided(id, decision, sampling, answer)),
            Event::Sampled { id, result, report, answer } => {
                let mut card = self.samplings.remove(&id).unwrap_or_else(|| gone_sampling(&id, &self.call_id));
                match &result {
                    Ok(sampled) => {
                        card.state = SamplingState::Done;
                        card.result = Some(sampled.text.clone());
                    }
                    Err(why) => {
                        card.state = SamplingState::Failed;
                        card.problem = Some(why.clone());
                    }
                }
                let _ = answer.send(result);
                Settlement { card: CardChunk { chunk: sampling_chunk(&card), new: false }, report: Some(report) }
            }
            Event::SamplingWithdrawn { id } => {
                let mut card = self.samplings.remove(&id).unwrap_or_else(|| gone_sampling(&id, &self.call_id));
                card.state = SamplingState::Withdrawn;
                plain(CardChunk { chunk: sampling_chunk(&card), new: false })
            }
        }
    }

    fn decided(
        &mut self,
        id: String,
        decision: Decision,
        sampling: Sampling,
        answer: oneshot::Sender<Result<Sampled, String>>,
    ) -> CardChunk {
        if let Some(registry) = &self.registry {
            registry.close(&id);
        }
        let Some(card) = self.samplings.get_mut(&id) else {
            return CardChunk { chunk: sampling_chunk(&gone_sampling(&id, &self.call_id)), new: false };
        };
        let (state, told) = match decision {
            Decision::Allow => {
                card.state = SamplingState::Running;
                let chunk = sampling_chunk(card);
                self.waiting.push(Box::pin(run_sampling(id, self.model.clone(), sampling, answer)));
                return CardChunk { chunk, new: false };
            }
            Decision::Deny => (SamplingState::Denied, Some("the user declined the request")),
            Decision::Expired => (SamplingState::Expired, Some("nobody allowed the request in time")),
            Decision::Withdrawn => (SamplingState::Withdrawn, None),
        };
        if let Some(told) = told {
            let _ = answer.send(Err(told.into()));
        }
        let mut card = self.samplings.remove(&id).unwrap_or_else(|| gone_sampling(&id, &self.call_id));
        card.state = state;
        CardChunk { chunk: sampling_chunk(&card), new: false }
    }

    fn elicitation_settled(&mut self, Settled { id, outcome, answer }: Settled) -> CardChunk {
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
        // Dropping the waiting futures drops their answer senders: the server hears `cancel`
        // (and a sampling request an error).
        self.waiting.clear();
        let sampling_state =
            if state == ElicitationState::Cancelled { SamplingState::Denied } else { SamplingState::Withdrawn };
        let mut cards: Vec<CardChunk> = std::mem::take(&mut self.open)
            .into_values()
            .map(|mut card| {
                if let Some(registry) = &self.registry {
                    registry.close(&card.elicitation_id);
                }
                card.state = state;
                CardChunk { chunk: chunk(&card), new: false }
            })
            .collect();
        cards.extend(std::mem::take(&mut self.samplings).into_values().map(|mut card| {
            if let Some(registry) = &self.registry {
                registry.close(&card.sampling_id);
            }
            card.state = sampling_state;
            CardChunk { chunk: sampling_chunk(&card), new: false }
        }));
        cards
    }
}

impl Drop for CallQuestions {
    /// A turn dropped mid-call (its task ended) leaves no question open behind it.
    fn drop(&mut self) {
        if let Some(registry) = &self.registry {
            for id in self.open.keys().chain(self.samplings.keys()) {
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

/// Waits for the user's decision on a sampling request.
async fn decide(
    id: String,
    decided: oneshot::Receiver<bool>,
    sampling: Sampling,
    mut answer: oneshot::Sender<Result<Sampled, String>>,
) -> Event {
    let decision = tokio::select! {
        given = decided => match given {
            Ok(true) => Decision::Allow,
            Ok(false) => Decision::Deny,
            Err(_) => Decision::Withdrawn,
        },
        _ = answer.closed() => Decision::Withdrawn,
        _ = tokio::time::sleep(QUESTION_WAIT) => Decision::Expired,
    };
    Event::Decided { id, decision, sampling, answer }
}

/// Runs an allowed sampling request on the reply's model: its text, in full.
async fn run_sampling(
    id: String,
    model: SamplingModel,
    sampling: Sampling,
    mut answer: oneshot::Sender<Result<Sampled, String>>,
) -> Event {
    let mut messages = Vec::with_capacity(sampling.messages.len() + 1);
    if let Some(system) = &sampling.system_prompt {
        messages.push(ChatMessage::system(system.clone()));
    }
    for message in &sampling.messages {
        messages.push(match message.role {
            SamplingRole::User => ChatMessage::user(message.text.clone()),
            SamplingRole::Assistant => ChatMessage::assistant(message.text.clone()),
        });
    }
    let request_chars = sampling.messages.iter().map(|m| m.text.chars().count() as u64).sum::<u64>()
        + sampling.system_prompt.as_deref().map_or(0, |p| p.chars().count() as u64);
    let request = CompletionRequest {
        model: model.name.clone(),
        messages,
        max_tokens: Some(sampling.max_tokens),
        temperature: sampling.temperature,
        ..CompletionRequest::default()
    };
    let request_messages = request.messages.len() as u32;
    let started_at = std::time::SystemTime::now();
    let started = tokio::time::Instant::now();
    let mut first = None;
    let mut text = String::new();
    let mut usage: Option<TokenUsage> = None;
    let mut retries = 0;
    let run = async {
        let mut stream = model.model.stream(request);
        while let Some(event) = stream.next().await {
            match event {
                Ok(CompletionEvent::TextDelta(delta)) => {
                    first.get_or_insert_with(|| started.elapsed());
                    text.push_str(&delta);
                }
                Ok(CompletionEvent::Usage(counted)) => usage = Some(counted),
                Ok(CompletionEvent::Retrying { .. }) => retries += 1,
                Ok(CompletionEvent::Finish { reason }) => return Ok(reason),
                Ok(_) => {}
                Err(error) => return Err(format!("the model failed: {error}")),
            }
        }
        Err("the model's answer ended early".to_owned())
    };
    let ended = tokio::select! {
        ended = run => ended,
        _ = answer.closed() => return Event::SamplingWithdrawn { id },
    };
    let report = ModelCallReport {
        step: 0,
        attempt: 0,
        request_messages,
        request_chars,
        started_at,
        time_to_first_token: first,
        duration: started.elapsed(),
        provider_retries: retries,
        usage,
        end: match &ended {
            Ok(reason) => ModelCallEnd::Finished(reason.clone()),
            Err(why) => ModelCallEnd::Failed(why.clone()),
        },
    };
    let result = ended.map(|reason| Sampled {
        text,
        model: model.name.clone(),
        stop_reason: match reason {
            StopReason::Stop => "endTurn".into(),
            StopReason::Length => "maxTokens".into(),
            other => other.as_str().to_owned(),
        },
    });
    Event::Sampled { id, result, report, answer }
}

fn gone_sampling(id: &str, call_id: &str) -> SamplingCard {
    SamplingCard {
        sampling_id: id.to_owned(),
        tool_call_id: call_id.to_owned(),
        server_id: String::new(),
        server_name: String::new(),
        model: String::new(),
        system_prompt: None,
        messages: Vec::new(),
        max_tokens: 0,
        state: SamplingState::Withdrawn,
        allowed_by_rule: false,
        result: None,
        problem: None,
    }
}

fn sampling_chunk(card: &SamplingCard) -> UiChunk {
    UiChunk::Data(DataChunk {
        kind: SAMPLING_PART.into(),
        id: Some(card.sampling_id.clone()),
        data: serde_json::to_value(card).unwrap_or_default(),
        transient: None,
    })
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
