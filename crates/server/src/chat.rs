//! The AI SDK's chat endpoints: what a stock `useChat` with `DefaultChatTransport`
//! (package `ai`) calls, answered with the UI message stream our topic actor already
//! emits.
//!
//! - `POST /api/chat` `{ id, messages, trigger, messageId? }`: `id` names the topic (made
//!   if there is none); `submit-message` sends the last (user) message's text and files
//!   as a new turn, `regenerate-message` writes a new version of the reply `messageId`
//!   (else the last assistant message). The answer is the reply as `data: <chunk>`
//!   events, `data: [DONE]` at the end, with `x-vercel-ai-ui-message-stream: v1`.
//!   A reply that stops for tool approvals ends its response with `finish`; the client's
//!   answers (`addToolApprovalResponse`: tool parts in state `approval-responded`) come
//!   back as a `submit-message` whose last message is that reply. They are answered as
//!   `tool_approval_respond` answers them, and the response continues the client's
//!   message with only what it does not hold yet (the results of the answered calls, then
//!   the parts after them), which a stock client appends to that message.
//! - `GET /api/chat/{id}/stream`: the topic's live reply (204 when there is none), for
//!   `useChat({ resume: true })` after a reload.
//! - `POST /api/chat/{id}/stop`: stops the topic's live reply (the AI SDK leaves stopping
//!   to the server: closing the response only detaches).
//!
//! A stock client folds a stream from nothing, so a reply joined part-way (a resume, or a
//! response that fell behind and was caught up with a snapshot) starts with the reply so
//! far written as `start`, `*-start` and `*-delta` chunks; the live chunks after it that
//! continue a part begun before the join are renamed onto that part.
//!
//! One model answers per response: a turn several models answer side by side is followed
//! on the first reply to start.

use std::collections::HashSet;
use std::convert::Infallible;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use engine::ListenerId;
use futures::StreamExt;
use protocol::api::{
    ApprovalDecision, ApprovalsListRequest, Attachment, ReplyRequest, StreamOpenRequest, ToolApprovalRespond,
};
use protocol::message::{PartState, ToolState, UiMessage, UiPart};
use protocol::tool::ApprovalState;
use protocol::{
    ApiError, AttachReply, ErrorKind, ExecutionId, MessageId, Operations, StreamMessage, TerminalStatus, TopicId,
    TurnId, UiChunk,
};
use serde::Deserialize;
use serde_json::Value;

use crate::AppState;
use crate::routes::error_response;
use crate::sse::{Delivery, Resume};

/// The header a stock client checks for on a UI message stream.
const STREAM_HEADER: &str = "x-vercel-ai-ui-message-stream";

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/chat", post(chat))
        .route("/chat/{id}/stream", get(resume))
        .route("/chat/{id}/stop", post(stop))
}

/// What `DefaultChatTransport` posts. Other fields (the transport's `body` extras) are
/// ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChatRequest {
    id: String,
    #[serde(default)]
    messages: Vec<ClientMessage>,
    #[serde(default)]
    trigger: Option<String>,
    #[serde(default)]
    message_id: Option<String>,
}

#[derive(Deserialize)]
struct ClientMessage {
    #[serde(default)]
    id: String,
    role: String,
    #[serde(default)]
    parts: Vec<Value>,
}

async fn chat(State(state): State<AppState>, body: Result<Bytes, BytesRejection>) -> Response {
    match start_chat(&state, body).await {
        Ok(response) => response,
        Err(err) => error_response(err),
    }
}

async fn start_chat(state: &AppState, body: Result<Bytes, BytesRejection>) -> Result<Response, ApiError> {
    let body = body.map_err(|rejection| ApiError::bad_request("body", rejection.body_text()))?;
    let request: ChatRequest = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request("body", format!("not a chat request ({{ id, messages, trigger }}): {e}")))?;
    // Everything is checked before the topic is made: a bad request leaves nothing behind.
    let action = action(&request)?;
    if let Action::Answer { message_id, answers, .. } = &action {
        check_answers(state, &TopicId(request.id.clone()), message_id, answers).await?;
    }
    let topic_id = state.engine.chat_topic(&request.id).await?;
    let (listener, subscription) = state.engine.listener(ListenerId::unique(), &topic_id);
    let reply = match action {
        Action::Send { text, attachments } => {
            let request = StreamOpenRequest {
                topic_id: topic_id.clone(),
                text,
                message_id: None,
                model: None,
                models: None,
                attachments: (!attachments.is_empty()).then_some(attachments),
            };
            state.engine.stream_open(request, listener).await?
        }
        Action::Regenerate(message_id) => {
            let request = ReplyRequest { topic_id: topic_id.clone(), message_id };
            state.engine.stream_retry(request, listener).await?
        }
        Action::Answer { answers, known_parts, .. } => {
            answer_approvals(state, answers).await?;
            // The last answer continued the reply: follow it from a snapshot (it may even
            // have ended already; a finished turn stays attachable for a while).
            let reply = state.engine.stream_attach(&topic_id, Vec::new(), listener).await?;
            if !reply.live {
                return Err(ApiError::conflict("the reply did not go on after the answers; reload the chat"));
            }
            return Ok(ui_message_stream(state, reply, subscription, topic_id, Join::Continue(known_parts)));
        }
    };
    Ok(ui_message_stream(state, reply, subscription, topic_id, Join::Start))
}

/// Whether every answer a client sends back is to a question of this chat's `message_id`
/// still waiting: nothing is answered unless all are.
async fn check_answers(
    state: &AppState,
    topic_id: &TopicId,
    message_id: &str,
    answers: &[ApprovalAnswer],
) -> Result<(), ApiError> {
    let asked = state
        .engine
        .approvals_list(ApprovalsListRequest {
            topic_id: Some(topic_id.clone()),
            message_id: Some(message_id.to_owned()),
            all: Some(true),
        })
        .await
        .map_err(|err| match err.kind {
            ErrorKind::NotFound => ApiError::bad_request(
                "id",
                format!("no chat `{topic_id}` asked for approvals: start it with a user message"),
            ),
            _ => err,
        })?;
    for answer in answers {
        match asked.iter().find(|approval| approval.id == answer.id) {
            None => {
                return Err(ApiError::bad_request(
                    "messages",
                    format!("approval `{}` is not a question of this chat's last reply", answer.id),
                ));
            }
            Some(approval) if approval.state != ApprovalState::Pending => {
                return Err(ApiError::conflict(format!(
                    "approval `{}` ({}) was answered already",
                    answer.id, approval.tool_name
                )));
            }
            Some(_) => {}
        }
    }
    // The reply goes on once all its questions are answered: a partial answer would leave
    // this response nothing to follow.
    let unanswered = asked
        .iter()
        .filter(|approval| approval.state == ApprovalState::Pending)
        .filter(|approval| !answers.iter().any(|answer| answer.id == approval.id))
        .count();
    if unanswered > 0 {
        return Err(ApiError::bad_request(
            "messages",
            format!("the reply waits for {unanswered} more approval answer(s): answer every call it asked about"),
        ));
    }
    Ok(())
}

/// Answers the approvals a client sends back ([`check_answers`] first); the last one
/// continues the reply.
async fn answer_approvals(state: &AppState, answers: Vec<ApprovalAnswer>) -> Result<(), ApiError> {
    for answer in answers {
        let decision = if answer.approved { ApprovalDecision::Approve } else { ApprovalDecision::Deny };
        let request = ToolApprovalRespond {
            approval_id: answer.id,
            decision,
            scope: None,
            reason: answer.reason,
            updated_input: None,
        };
        state.engine.tool_approval_respond(request).await?;
    }
    Ok(())
}

/// How a response joins the reply it follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Join {
    /// It started the reply: it follows the first reply of the turn whose chunks come from
    /// the first (a retry's turn also holds the version it replaces, caught up first).
    #[default]
    Start,
    /// It joins a reply already under way (`resume`): from a snapshot.
    Resume,
    /// It continues the client's copy of the reply, which holds its first `n` parts (a
    /// reply continued after the client's approval answers): from a snapshot, of which
    /// only the results of those parts' calls and the parts after them are sent.
    Continue(usize),
}

impl Join {
    /// Whether the response follows a reply it did not start (from a snapshot).
    fn joins(self) -> bool {
        self != Join::Start
    }
}

/// What a chat request asks for.
enum Action {
    Send {
        text: String,
        attachments: Vec<Attachment>,
    },
    Regenerate(MessageId),
    /// The client's answers to the approvals its last (assistant) message asked for.
    Answer {
        message_id: String,
        answers: Vec<ApprovalAnswer>,
        known_parts: usize,
    },
}

/// One `approval-responded` tool part of a client's message.
#[derive(Debug)]
struct ApprovalAnswer {
    id: String,
    approved: bool,
    reason: Option<String>,
}

/// The answers in `parts`: tool parts in state `approval-responded` with
/// `approval: { id, approved, reason? }`.
fn approval_answers(parts: &[Value]) -> Result<Vec<ApprovalAnswer>, ApiError> {
    let mut answers = Vec::new();
    for part in parts {
        if part.get("state").and_then(Value::as_str) != Some("approval-responded") {
            continue;
        }
        let approval = part.get("approval");
        let id = approval.and_then(|a| a.get("id")).and_then(Value::as_str).filter(|id| !id.is_empty());
        let approved = approval.and_then(|a| a.get("approved")).and_then(Value::as_bool);
        let (Some(id), Some(approved)) = (id, approved) else {
            return Err(ApiError::bad_request(
                "messages",
                "a tool part in state `approval-responded` needs `approval: { id, approved }`",
            ));
        };
        let reason = approval.and_then(|a| a.get("reason")).and_then(Value::as_str).map(str::to_owned);
        answers.push(ApprovalAnswer { id: id.to_owned(), approved, reason });
    }
    Ok(answers)
}

fn action(request: &ChatRequest) -> Result<Action, ApiError> {
    match request.trigger.as_deref().unwrap_or("submit-message") {
        "submit-message" => {
            let last =
                request.messages.last().ok_or_else(|| ApiError::bad_request("messages", "no message to send"))?;
            if last.role == "assistant" {
                let answers = approval_answers(&last.parts)?;
                if answers.is_empty() || last.id.is_empty() {
                    return Err(ApiError::bad_request(
                        "messages",
                        "the last message is the assistant's without approval answers; only a user message, or \
                         a reply with answered approvals, can be sent",
                    ));
                }
                return Ok(Action::Answer { message_id: last.id.clone(), answers, known_parts: last.parts.len() });
            }
            if last.role != "user" {
                return Err(ApiError::bad_request(
                    "messages",
                    format!("the last message is the {}'s; only a user message can be sent", last.role),
                ));
            }
            let (text, attachments) = user_content(&last.parts)?;
            Ok(Action::Send { text, attachments })
        }
        "regenerate-message" => {
            let message_id = request
                .message_id
                .clone()
                .or_else(|| request.messages.iter().rev().find(|m| m.role == "assistant").map(|m| m.id.clone()))
                .filter(|id| !id.is_empty())
                .ok_or_else(|| ApiError::bad_request("messageId", "which reply to regenerate"))?;
            Ok(Action::Regenerate(MessageId::from(message_id.as_str())))
        }
        other => {
            Err(ApiError::bad_request("trigger", format!("`{other}` is not `submit-message` or `regenerate-message`")))
        }
    }
}

async fn resume(State(state): State<AppState>, UrlPath(id): UrlPath<String>) -> Response {
    let topic_id = TopicId(id);
    // A reply that has ended is in the client's history already: replaying it would add
    // its parts a second time to the message a stock client holds.
    if !state.engine.is_streaming(&topic_id).await {
        return StatusCode::NO_CONTENT.into_response();
    }
    let (listener, subscription) = state.engine.listener(ListenerId::unique(), &topic_id);
    match state.engine.stream_attach(&topic_id, Vec::new(), listener).await {
        Ok(reply) if reply.live => ui_message_stream(&state, reply, subscription, topic_id, Join::Resume),
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(err) => error_response(err),
    }
}

async fn stop(State(state): State<AppState>, UrlPath(id): UrlPath<String>) -> Response {
    match state.engine.stream_abort(&TopicId(id)).await {
        Ok(()) => axum::Json(Value::Null).into_response(),
        Err(err) => error_response(err),
    }
}

/// A user message's text parts (joined) and its files as attachments. Files must be
/// `data:<type>;base64,…` URLs: the server does not fetch what a client points at.
fn user_content(parts: &[Value]) -> Result<(String, Vec<Attachment>), ApiError> {
    let mut texts = Vec::new();
    let mut attachments = Vec::new();
    for part in parts {
        match part.get("type").and_then(Value::as_str) {
            Some("text") => texts.push(part.get("text").and_then(Value::as_str).unwrap_or_default().to_owned()),
            Some("file") => {
                let url = part.get("url").and_then(Value::as_str).unwrap_or_default();
                let Some((media_type, data)) = url.strip_prefix("data:").and_then(|rest| rest.split_once(";base64,"))
                else {
                    return Err(ApiError::bad_request(
                        "messages",
                        "a file part must carry its bytes as a `data:<type>;base64,…` URL",
                    ));
                };
                let media_type = part.get("mediaType").and_then(Value::as_str).unwrap_or(media_type).to_owned();
                let filename = part.get("filename").and_then(Value::as_str).unwrap_or("file").to_owned();
                attachments.push(Attachment { media_type, filename, data: data.to_owned() });
            }
            // Other parts (step markers, data parts, reasoning) say nothing to send.
            _ => {}
        }
    }
    Ok((texts.join("\n\n"), attachments))
}

/// The reply as a UI message stream: one `data:` event per chunk, `[DONE]` last.
fn ui_message_stream(
    state: &AppState,
    reply: AttachReply,
    subscription: engine::Subscription,
    topic_id: TopicId,
    join: Join,
) -> Response {
    let resume = Resume { engine: state.engine.clone(), topic_id };
    let delivery = Delivery::new(&reply, subscription, resume);
    let follower = Follower { turn: reply.turn_id.clone(), join, ..Follower::default() };
    let chunks = futures::stream::unfold((delivery, follower), |(mut delivery, mut follower)| async move {
        loop {
            if follower.done {
                return None;
            }
            let chunks = follower.follow(delivery.next().await?);
            if !chunks.is_empty() {
                return Some((chunks, (delivery, follower)));
            }
        }
    })
    .flat_map(futures::stream::iter)
    .map(|chunk| Ok::<_, Infallible>(Event::default().json_data(&chunk).unwrap_or_default()))
    .chain(futures::stream::once(async { Ok(Event::default().data("[DONE]")) }));
    let shutdown = state.shutdown.clone();
    let stream = chunks.take_until(async move { shutdown.cancelled().await });
    let mut response = Sse::new(stream).keep_alive(KeepAlive::default()).into_response();
    response.headers_mut().insert(STREAM_HEADER, HeaderValue::from_static("v1"));
    response
}

/// Turns one topic's stream messages into the chunks of one reply.
#[derive(Default)]
struct Follower {
    /// The turn the response is about. A topic's listener also hears the turn before it
    /// while that one stays attachable for a while after it ended.
    turn: Option<TurnId>,
    join: Join,
    /// The execution this response follows: the first of the turn to show up.
    execution: Option<ExecutionId>,
    /// A `start` was sent.
    began: bool,
    /// The text and reasoning ids begun in this response.
    begun: HashSet<String>,
    /// The part a joined reply left open, to which live deltas of an id begun before the
    /// join belong.
    open_text: Option<String>,
    open_reasoning: Option<String>,
    /// Ids made for parts written from a snapshot.
    made: usize,
    /// The followed reply ended (or the stream can go no further).
    done: bool,
}

impl Follower {
    fn follow(&mut self, message: StreamMessage) -> Vec<UiChunk> {
        if self.done {
            return Vec::new();
        }
        match message {
            StreamMessage::Chunk(event) => {
                let joins = self.join.joins() || event.seq == 1;
                if !self.follows(&event.execution.turn_id, &event.execution.execution_id, joins) {
                    return Vec::new();
                }
                let mut out = Vec::new();
                if !self.began && !matches!(event.chunk, UiChunk::Start { .. }) {
                    out.push(UiChunk::Start {
                        message_id: Some(event.execution.message_id.to_string()),
                        message_metadata: None,
                    });
                }
                self.began = true;
                out.push(match &event.chunk {
                    // The stored message's id, so the client's message is the app's.
                    UiChunk::Start { message_id: None, message_metadata } => UiChunk::Start {
                        message_id: Some(event.execution.message_id.to_string()),
                        message_metadata: message_metadata.clone(),
                    },
                    chunk => self.rename(chunk.clone()),
                });
                out
            }
            StreamMessage::Snapshot(snapshot) => {
                if !self.follows(&snapshot.turn_id, &snapshot.execution_id, self.join.joins()) {
                    return Vec::new();
                }
                self.replay(&snapshot.message, &snapshot.message_id)
            }
            StreamMessage::Terminal(terminal) => {
                let ours = self.turn.as_ref().is_none_or(|turn| *turn == terminal.turn_id);
                if ours
                    && (self.execution.as_ref() == Some(&terminal.execution_id)
                        || (self.execution.is_none() && terminal.is_topic_done))
                {
                    self.done = true;
                    // A reply that stopped waiting for an approval ends this response; the
                    // app (or `tool_approval_respond`) answers it.
                    if terminal.status == TerminalStatus::AwaitingApproval {
                        return vec![UiChunk::Finish { finish_reason: None, message_metadata: None }];
                    }
                }
                Vec::new()
            }
            StreamMessage::Lagged(_) => {
                self.done = true;
                vec![UiChunk::Error {
                    error_text: "the reply could not be followed to its end; reload to see it".to_owned(),
                }]
            }
        }
    }

    /// Whether a message of `execution` belongs to this response; `joins`: the execution
    /// may become the one followed when none is yet.
    fn follows(&mut self, turn: &TurnId, execution: &ExecutionId, joins: bool) -> bool {
        if self.turn.as_ref().is_some_and(|ours| ours != turn) {
            return false;
        }
        match &self.execution {
            Some(followed) => followed == execution,
            None if joins => {
                self.execution = Some(execution.clone());
                true
            }
            None => false,
        }
    }

    /// A live chunk, with a text or reasoning id begun before the join renamed onto the
    /// part the snapshot left open.
    fn rename(&mut self, chunk: UiChunk) -> UiChunk {
        match chunk {
            UiChunk::TextStart { id } => {
                self.begun.insert(id.clone());
                UiChunk::TextStart { id }
            }
            UiChunk::TextDelta { id, delta } => UiChunk::TextDelta { id: self.text_id(id, false), delta },
            UiChunk::TextEnd { id } => UiChunk::TextEnd { id: self.text_id(id, true) },
            UiChunk::ReasoningStart { id, provider_metadata } => {
                self.begun.insert(id.clone());
                UiChunk::ReasoningStart { id, provider_metadata }
            }
            UiChunk::ReasoningDelta { id, delta } => {
                UiChunk::ReasoningDelta { id: self.reasoning_id(id, false), delta }
            }
            UiChunk::ReasoningEnd { id, provider_metadata } => {
                UiChunk::ReasoningEnd { id: self.reasoning_id(id, true), provider_metadata }
            }
            chunk => chunk,
        }
    }

    fn text_id(&mut self, id: String, ends: bool) -> String {
        if self.begun.contains(&id) {
            return id;
        }
        let open = if ends { self.open_text.take() } else { self.open_text.clone() };
        open.unwrap_or(id)
    }

    fn reasoning_id(&mut self, id: String, ends: bool) -> String {
        if self.begun.contains(&id) {
            return id;
        }
        let open = if ends { self.open_reasoning.take() } else { self.open_reasoning.clone() };
        open.unwrap_or(id)
    }

    fn fresh_id(&mut self, kind: &str) -> String {
        self.made += 1;
        let id = format!("joined-{kind}-{}", self.made);
        self.begun.insert(id.clone());
        id
    }

    /// The reply so far as chunks a client folds from nothing. A snapshot after chunks
    /// were already sent (a catch-up) replaces nothing a stock client holds, so it is
    /// written only at the start.
    fn replay(&mut self, message: &UiMessage, message_id: &MessageId) -> Vec<UiChunk> {
        if self.began {
            return Vec::new();
        }
        self.began = true;
        let mut out = vec![UiChunk::Start {
            message_id: Some(message_id.to_string()),
            message_metadata: message.metadata.clone(),
        }];
        let mut step_open = false;
        // A client continuing its copy holds the first parts: of those, only a call's
        // result that came since is new to it.
        let known = match self.join {
            Join::Continue(parts) => parts,
            Join::Start | Join::Resume => 0,
        };
        for (index, part) in message.parts.iter().enumerate() {
            if index < known {
                match part {
                    UiPart::StepStart => step_open = true,
                    UiPart::DynamicTool { tool_call_id, state, output, error_text, .. } => {
                        out.extend(tool_result(tool_call_id, *state, output, error_text));
                    }
                    _ => {}
                }
                continue;
            }
            match part {
                UiPart::StepStart => {
                    if step_open {
                        out.push(UiChunk::FinishStep);
                    }
                    out.push(UiChunk::StartStep);
                    step_open = true;
                }
                UiPart::Text { text, state } => {
                    let id = self.fresh_id("text");
                    out.push(UiChunk::TextStart { id: id.clone() });
                    if !text.is_empty() {
                        out.push(UiChunk::TextDelta { id: id.clone(), delta: text.clone() });
                    }
                    if *state == Some(PartState::Streaming) {
                        self.open_text = Some(id);
                    } else {
                        out.push(UiChunk::TextEnd { id });
                    }
                }
                UiPart::Reasoning { text, state, provider_metadata, .. } => {
                    let id = self.fresh_id("reasoning");
                    out.push(UiChunk::ReasoningStart { id: id.clone(), provider_metadata: None });
                    if !text.is_empty() {
                        out.push(UiChunk::ReasoningDelta { id: id.clone(), delta: text.clone() });
                    }
                    if *state == Some(PartState::Streaming) {
                        self.open_reasoning = Some(id);
                    } else {
                        out.push(UiChunk::ReasoningEnd { id, provider_metadata: provider_metadata.clone() });
                    }
                }
                UiPart::DynamicTool { tool_name, tool_call_id, state, input, output, error_text, approval } => {
                    let (tool_call_id, tool_name) = (tool_call_id.clone(), tool_name.clone());
                    out.push(UiChunk::ToolInputStart {
                        tool_call_id: tool_call_id.clone(),
                        tool_name: tool_name.clone(),
                        dynamic: Some(true),
                    });
                    if *state != ToolState::InputStreaming {
                        out.push(UiChunk::ToolInputAvailable {
                            tool_call_id: tool_call_id.clone(),
                            tool_name,
                            input: input.clone().unwrap_or_else(|| Value::Object(Default::default())),
                            dynamic: Some(true),
                        });
                    }
                    if let (ToolState::ApprovalRequested | ToolState::ApprovalResponded, Some(approval)) =
                        (state, approval)
                    {
                        out.push(UiChunk::ToolApprovalRequest {
                            approval_id: approval.id.clone(),
                            tool_call_id: tool_call_id.clone(),
                        });
                    }
                    out.extend(tool_result(&tool_call_id, *state, output, error_text));
                }
                UiPart::SourceUrl { source_id, url, title } => out.push(UiChunk::SourceUrl {
                    source_id: source_id.clone(),
                    url: url.clone(),
                    title: title.clone(),
                }),
                UiPart::File { media_type, url, .. } => {
                    out.push(UiChunk::File { url: url.clone(), media_type: media_type.clone() })
                }
                UiPart::Data(data) => out.push(UiChunk::Data(protocol::chunk::DataChunk {
                    kind: data.kind.clone(),
                    id: data.id.clone(),
                    data: data.data.clone(),
                    transient: None,
                })),
            }
        }
        out
    }
}

/// The chunk that gives a call its result, when it has one.
fn tool_result(
    tool_call_id: &str,
    state: ToolState,
    output: &Option<Value>,
    error_text: &Option<String>,
) -> Option<UiChunk> {
    let tool_call_id = tool_call_id.to_owned();
    match state {
        ToolState::OutputAvailable => Some(UiChunk::ToolOutputAvailable {
            tool_call_id,
            output: output.clone().unwrap_or(Value::Null),
            dynamic: Some(true),
            preliminary: None,
        }),
        ToolState::OutputError => Some(UiChunk::ToolOutputError {
            tool_call_id,
            error_text: error_text.clone().unwrap_or_default(),
            dynamic: Some(true),
        }),
        ToolState::OutputDenied => Some(UiChunk::ToolOutputDenied { tool_call_id }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::message::MessageRole;

    fn message(parts: Vec<UiPart>) -> UiMessage {
        UiMessage { id: "m".into(), role: MessageRole::Assistant, parts, metadata: None }
    }

    #[test]
    fn a_joined_reply_is_written_from_nothing_and_its_open_part_takes_the_live_deltas() {
        let mut follower = Follower::default();
        let snapshot = message(vec![
            UiPart::StepStart,
            UiPart::Reasoning { id: None, text: "think".into(), state: Some(PartState::Done), provider_metadata: None },
            UiPart::Text { text: "Hello ".into(), state: Some(PartState::Streaming) },
        ]);
        let chunks = follower.replay(&snapshot, &MessageId::from("m1"));
        let kinds: Vec<_> = chunks.iter().map(|c| serde_json::to_value(c).unwrap()["type"].clone()).collect();
        assert_eq!(
            kinds,
            ["start", "start-step", "reasoning-start", "reasoning-delta", "reasoning-end", "text-start", "text-delta"]
        );
        let open = follower.open_text.clone().unwrap();
        // The live tail names the part by the id it streamed under before the join.
        assert_eq!(
            follower.rename(UiChunk::TextDelta { id: "t1".into(), delta: "world".into() }),
            UiChunk::TextDelta { id: open.clone(), delta: "world".into() }
        );
        assert_eq!(follower.rename(UiChunk::TextEnd { id: "t1".into() }), UiChunk::TextEnd { id: open });
        // A part begun after the join keeps its own id.
        assert_eq!(follower.rename(UiChunk::TextStart { id: "t2".into() }), UiChunk::TextStart { id: "t2".into() });
        assert_eq!(
            follower.rename(UiChunk::TextDelta { id: "t2".into(), delta: "!".into() }),
            UiChunk::TextDelta { id: "t2".into(), delta: "!".into() }
        );
    }

    #[test]
    fn a_continued_reply_sends_only_the_results_and_parts_the_client_lacks() {
        let mut follower = Follower { join: Join::Continue(2), ..Follower::default() };
        let tool = |id: &str, state: ToolState, output: Option<Value>| UiPart::DynamicTool {
            tool_name: "write_file".into(),
            tool_call_id: id.into(),
            state,
            input: Some(serde_json::json!({})),
            output,
            error_text: None,
            approval: None,
        };
        // The client holds the step and the call it answered; the call ran since, then a
        // second step answered.
        let snapshot = message(vec![
            UiPart::StepStart,
            tool("c1", ToolState::OutputAvailable, Some(serde_json::json!("written"))),
            UiPart::StepStart,
            UiPart::Text { text: "Done.".into(), state: Some(PartState::Done) },
        ]);
        let chunks = follower.replay(&snapshot, &MessageId::from("m1"));
        let kinds: Vec<_> = chunks.iter().map(|c| serde_json::to_value(c).unwrap()["type"].clone()).collect();
        assert_eq!(
            kinds,
            ["start", "tool-output-available", "finish-step", "start-step", "text-start", "text-delta", "text-end"]
        );
        assert!(matches!(&chunks[0], UiChunk::Start { message_id: Some(id), .. } if id == "m1"));

        let answers = approval_answers(&[
            serde_json::json!({ "type": "dynamic-tool", "state": "output-available" }),
            serde_json::json!({ "type": "dynamic-tool", "state": "approval-responded",
                "approval": { "id": "ap-1", "approved": false, "reason": "not there" } }),
        ])
        .unwrap();
        let [answer] = &answers[..] else { panic!("one answer") };
        assert_eq!((answer.id.as_str(), answer.approved, answer.reason.as_deref()), ("ap-1", false, Some("not there")));
        let err = approval_answers(&[serde_json::json!({ "state": "approval-responded", "approval": { "id": "x" } })])
            .unwrap_err();
        assert_eq!(err.field.as_deref(), Some("messages"));
    }

    #[test]
    fn files_are_taken_only_as_data_urls() {
        let parts = vec![
            serde_json::json!({ "type": "text", "text": "Look" }),
            serde_json::json!({ "type": "file", "mediaType": "image/png", "filename": "a.png", "url": "data:image/png;base64,AAAA" }),
        ];
        let (text, files) = user_content(&parts).unwrap();
        assert_eq!((text.as_str(), files.len(), files[0].data.as_str()), ("Look", 1, "AAAA"));
        let err =
            user_content(&[serde_json::json!({ "type": "file", "url": "https://example.com/a.png" })]).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("messages"));
    }
}
