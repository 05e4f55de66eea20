//! [`ScriptedModel`]: the one in-process fake [`LanguageModel`] for tests and benchmarks
//! (feature `test-support`). Each call answers with the next scripted [`Reply`]; a reply
//! is a list of [`Step`]s — events to stream, and waits, gates and signals between them —
//! and ends by closing the stream or holding it open. Every request is recorded.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::{StreamExt, stream};
use providers::{CompletionEvent, CompletionRequest, CompletionStream, LanguageModel, ProviderError};
use tokio::sync::Notify;

/// One item a model streams: an event or a provider error (after which the stream ends).
pub type Event = Result<CompletionEvent, ProviderError>;

/// One step of a scripted reply.
#[derive(Clone, Debug)]
pub enum Step {
    /// Stream this event (after the model's gap, if it has one).
    Event(Event),
    /// Wait this long on tokio's clock (the paused clock in tests).
    Sleep(Duration),
    /// Let other tasks run, as a socket read would.
    YieldNow,
    /// Tell the test this point was reached (`notify_one`).
    Signal(Arc<Notify>),
    /// Wait until the test opens the gate (`notify_one`, before or after this step).
    Gate(Arc<Notify>),
}

/// How the stream ends after the last step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The stream ends.
    Close,
    /// The stream stays open and silent until it is dropped (a hanging provider).
    HoldOpen,
}

/// What one call streams: its steps, then its [`End`].
#[derive(Clone, Debug)]
pub struct Reply {
    steps: Arc<[Step]>,
    end: End,
}

impl Reply {
    /// A reply of these steps that closes after the last one.
    pub fn steps(steps: impl IntoIterator<Item = Step>) -> Self {
        Self { steps: steps.into_iter().collect(), end: End::Close }
    }

    /// A reply that streams these events and closes.
    pub fn events(events: impl IntoIterator<Item = Event>) -> Self {
        Self::steps(events.into_iter().map(Step::Event))
    }

    /// The same reply, ending with `end`.
    pub fn ending(self, end: End) -> Self {
        Self { end, ..self }
    }
}

impl From<Vec<Event>> for Reply {
    fn from(events: Vec<Event>) -> Self {
        Self::events(events)
    }
}

/// What a call gets once the scripted replies are used up.
#[derive(Clone, Debug)]
enum WhenDone {
    /// One text delta saying so, then the stream ends: a test that calls more often
    /// than it scripted sees it in the reply.
    SayNoMoreScript,
    /// The same reply every time.
    Repeat(Reply),
}

/// A language model that answers each call with the next scripted [`Reply`] and records
/// the requests it was sent.
#[derive(Debug)]
pub struct ScriptedModel {
    replies: Mutex<VecDeque<Reply>>,
    when_done: WhenDone,
    requests: Mutex<Vec<CompletionRequest>>,
    gap: Option<Duration>,
    end: Option<End>,
    format: &'static str,
}

impl ScriptedModel {
    /// Answers the calls with `replies` in order; after them, with a text delta
    /// `(no more script)`.
    pub fn new<R: Into<Reply>>(replies: impl IntoIterator<Item = R>) -> Self {
        Self {
            replies: Mutex::new(replies.into_iter().map(Into::into).collect()),
            when_done: WhenDone::SayNoMoreScript,
            requests: Mutex::new(Vec::new()),
            gap: None,
            end: None,
            format: "",
        }
    }

    /// Answers every call with `reply`.
    pub fn repeating(reply: Reply) -> Self {
        Self { when_done: WhenDone::Repeat(reply), ..Self::new(Vec::<Reply>::new()) }
    }

    /// Waits `gap` (on tokio's clock) before each event.
    pub fn with_gap(self, gap: Duration) -> Self {
        Self { gap: Some(gap), ..self }
    }

    /// Ends every reply with `end`, whatever the reply says.
    pub fn ending(self, end: End) -> Self {
        Self { end: Some(end), ..self }
    }

    /// Reports `format` as its wire format's name.
    pub fn with_format(self, format: &'static str) -> Self {
        Self { format, ..self }
    }

    /// The requests sent so far, in order.
    pub fn requests(&self) -> Vec<CompletionRequest> {
        lock(&self.requests).clone()
    }

    fn next_reply(&self) -> Reply {
        if let Some(reply) = lock(&self.replies).pop_front() {
            return reply;
        }
        match &self.when_done {
            WhenDone::Repeat(reply) => reply.clone(),
            WhenDone::SayNoMoreScript => Reply::events([Ok(CompletionEvent::TextDelta("(no more script)".into()))]),
        }
    }
}

impl LanguageModel for ScriptedModel {
    fn stream(&self, request: CompletionRequest) -> CompletionStream {
        lock(&self.requests).push(request);
        let reply = self.next_reply();
        let end = self.end.unwrap_or(reply.end);
        let gap = self.gap;
        let events = stream::unfold((reply.steps, 0), move |(steps, mut next)| async move {
            loop {
                let step = steps.get(next)?;
                next += 1;
                match step {
                    Step::Event(event) => {
                        if let Some(gap) = gap {
                            tokio::time::sleep(gap).await;
                        }
                        let event = event.clone();
                        return Some((event, (steps, next)));
                    }
                    Step::Sleep(wait) => tokio::time::sleep(*wait).await,
                    Step::YieldNow => tokio::task::yield_now().await,
                    Step::Signal(signal) => signal.notify_one(),
                    Step::Gate(gate) => gate.notified().await,
                }
            }
        });
        match end {
            End::Close => events.boxed(),
            End::HoldOpen => events.chain(stream::pending()).boxed(),
        }
    }

    fn format_name(&self) -> &'static str {
        self.format
    }
}

/// A poisoned lock only means another test thread panicked; the data is still usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;
    use providers::{ChatMessage, StopReason};

    use super::*;

    fn text(s: &str) -> Event {
        Ok(CompletionEvent::TextDelta(s.into()))
    }

    fn request(text: &str) -> CompletionRequest {
        CompletionRequest { messages: vec![ChatMessage::user(text)], ..CompletionRequest::default() }
    }

    async fn collect(model: &ScriptedModel, text: &str) -> Vec<Event> {
        model.stream(request(text)).collect().await
    }

    #[tokio::test]
    async fn replies_come_in_order_then_say_the_script_ran_out_and_requests_are_recorded() {
        let model = ScriptedModel::new(vec![vec![text("one")], vec![text("two")]]);
        assert_eq!(collect(&model, "a").await, vec![text("one")]);
        assert_eq!(collect(&model, "b").await, vec![text("two")]);
        assert_eq!(collect(&model, "c").await, vec![text("(no more script)")]);
        let asked: Vec<CompletionRequest> = ["a", "b", "c"].into_iter().map(request).collect();
        assert_eq!(model.requests(), asked);
    }

    #[tokio::test]
    async fn a_gate_holds_the_stream_until_the_test_opens_it_and_a_signal_says_where_it_is() {
        let (reached, gate) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let finish = Ok(CompletionEvent::Finish { reason: StopReason::Stop });
        let model = ScriptedModel::new([Reply::steps([
            Step::Event(text("before")),
            Step::Signal(reached.clone()),
            Step::Gate(gate.clone()),
            Step::Event(finish.clone()),
        ])]);
        let mut stream = model.stream(request("a"));
        assert_eq!(stream.next().await, Some(text("before")));
        let mut after = Box::pin(stream.next());
        assert!((&mut after).now_or_never().is_none(), "the gate is shut");
        reached.notified().await;
        gate.notify_one();
        assert_eq!(after.await, Some(finish));
        assert_eq!(stream.next().await, None);
    }

    #[tokio::test]
    async fn a_repeated_reply_answers_every_call_and_one_held_open_never_ends() {
        let model = ScriptedModel::repeating(Reply::events([text("again")]).ending(End::HoldOpen));
        for _ in 0..2 {
            let mut stream = model.stream(request("a"));
            assert_eq!(stream.next().await, Some(text("again")));
            assert!(stream.next().now_or_never().is_none(), "held open");
        }
    }
}
