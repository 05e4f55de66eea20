use super::*;
use futures::stream;
use protocol::{MessageAccumulator, UiPart};
use providers::{ChatMessage, ChatRole, CompletionStream, TokenUsage};
use std::sync::Mutex;

/// An in-process model that replays scripted events, optionally pausing between them.
struct FakeModel {
    events: Mutex<Option<Vec<Result<CompletionEvent, ProviderError>>>>,
    gap: Option<Duration>,
    hang_at_end: bool,
}

impl FakeModel {
    fn new(events: Vec<Result<CompletionEvent, ProviderError>>) -> Arc<Self> {
        Arc::new(Self { events: Mutex::new(Some(events)), gap: None, hang_at_end: false })
    }
}

impl LanguageModel for FakeModel {
    fn stream(&self, _request: CompletionRequest) -> CompletionStream {
        let events = self.events.lock().unwrap().take().unwrap_or_default();
        let gap = self.gap;
        let hang = self.hang_at_end;
        let s = stream::iter(events).then(move |event| async move {
            if let Some(gap) = gap {
                tokio::time::sleep(gap).await;
            }
            event
        });
        if hang { Box::pin(s.chain(stream::pending())) } else { Box::pin(s) }
    }
}

fn request(model: Arc<dyn LanguageModel>) -> TurnRequest {
    TurnRequest {
        model,
        completion: CompletionRequest {
            model: "m".into(),
            messages: vec![ChatMessage { role: ChatRole::User, content: "hi".into() }],
            temperature: None,
            max_tokens: None,
        },
        idle_timeout: Duration::from_secs(30),
        part_offset: 0,
    }
}

async fn run(model: Arc<dyn LanguageModel>, cancel: CancellationToken) -> (Vec<UiChunk>, TurnOutcome) {
    let (mut tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let outcome = run_turn(request(model), cancel, &mut tx).await;
    drop(tx);
    let mut chunks = Vec::new();
    while let Some(chunk) = rx.recv().await {
        chunks.push(chunk);
    }
    (chunks, outcome)
}

fn text(s: &str) -> Result<CompletionEvent, ProviderError> {
    Ok(CompletionEvent::TextDelta(s.into()))
}

fn fold(chunks: &[UiChunk]) -> protocol::UiMessage {
    let mut acc = MessageAccumulator::new("m");
    for chunk in chunks {
        acc.apply(chunk).unwrap();
    }
    acc.into_message()
}

#[tokio::test]
async fn text_reply_streams_as_one_text_part() {
    let model = FakeModel::new(vec![
        text("Hel"),
        text("lo"),
        Ok(CompletionEvent::Usage(TokenUsage { input_tokens: 3, output_tokens: 2 })),
        Ok(CompletionEvent::Finish { reason: StopReason::Stop }),
    ]);
    let (chunks, outcome) = run(model, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(chunks[0], UiChunk::StartStep);
    assert_eq!(chunks[1], UiChunk::TextStart { id: "t1".into() });
    assert_eq!(chunks.last(), Some(&UiChunk::FinishStep));
    let message = fold(&chunks);
    assert_eq!(message.text(), "Hello");
    assert_eq!(message.typed_metadata().usage.map(|u| u.output_tokens), Some(2));
}

#[tokio::test]
async fn open_part_ids_name_their_position_in_the_message() {
    let model = FakeModel::new(vec![Ok(CompletionEvent::ReasoningDelta("hmm".into())), text("answer")]);
    let (chunks, _) = run(model, CancellationToken::new()).await;
    let message = fold(&chunks);
    // parts: [step-start, reasoning, text]; ids r1 and t2.
    assert!(matches!(message.parts[1], UiPart::Reasoning { .. }));
    assert!(chunks.contains(&UiChunk::ReasoningStart { id: "r1".into() }));
    assert!(chunks.contains(&UiChunk::TextStart { id: "t2".into() }));
}

#[tokio::test]
async fn a_provider_error_keeps_the_text_and_ends_with_an_error_part() {
    let error = ProviderError {
        kind: ProviderErrorKind::Network,
        message: "connection lost".into(),
        status: None,
        retryable: false,
    };
    let model = FakeModel::new(vec![text("partial"), Err(error)]);
    let (chunks, outcome) = run(model, CancellationToken::new()).await;
    let TurnOutcome::Failed { error } = outcome else { panic!("expected failure, got {outcome:?}") };
    assert_eq!(error.kind, ErrorKind::Provider);
    assert!(error.retryable);
    let message = fold(&chunks);
    assert_eq!(message.text(), "partial");
    assert!(
        matches!(&message.parts[2], UiPart::Data(d) if d.kind == "data-error" && d.data["message"] == "connection lost")
    );
    assert!(chunks.contains(&UiChunk::Error { error_text: "connection lost".into() }));
    assert_eq!(chunks.last(), Some(&UiChunk::FinishStep));
}

#[tokio::test(start_paused = true)]
async fn cancel_stops_the_turn_and_closes_open_parts() {
    let model = Arc::new(FakeModel {
        events: Mutex::new(Some(vec![text("a"), text("b"), text("c")])),
        gap: Some(Duration::from_secs(1)),
        hang_at_end: false,
    });
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        stopper.cancel();
    });
    let (chunks, outcome) = run(model, cancel).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: REASON_USER_STOP.into() });
    let message = fold(&chunks);
    assert_eq!(message.text(), "a");
    assert!(matches!(message.parts[1], UiPart::Text { state: Some(protocol::PartState::Done), .. }));
}

#[tokio::test(start_paused = true)]
async fn a_silent_provider_is_cut_off_as_stalled() {
    let model = Arc::new(FakeModel { events: Mutex::new(Some(vec![text("a")])), gap: None, hang_at_end: true });
    let (chunks, outcome) = run(model, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: REASON_STALLED.into() });
    assert_eq!(fold(&chunks).text(), "a");
}

#[test]
fn prompt_skips_errors_and_empty_replies() {
    use protocol::UiMessage;
    let user = UiMessage::user_text("u", "question");
    let failed = UiMessage { id: "a".into(), role: protocol::MessageRole::Assistant, parts: vec![], metadata: None };
    let prompt = build_prompt([&user, &failed]);
    assert_eq!(prompt.len(), 1);
    assert_eq!(prompt[0].content, "question");
}

/// Announces a retry at once, then answers after `wait`.
struct RetryingModel {
    wait: Duration,
}

impl LanguageModel for RetryingModel {
    fn stream(&self, _request: CompletionRequest) -> CompletionStream {
        let wait = self.wait;
        let retry = stream::once(async {
            Ok(CompletionEvent::Retrying { attempt: 2, delay_ms: 50_000, reason: "rate limited (HTTP 429)".into() })
        });
        let answer = stream::once(async move {
            tokio::time::sleep(wait).await;
            text("late but fine")
        });
        Box::pin(retry.chain(answer))
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_wait_is_announced_and_does_not_count_as_silence() {
    // Longer than the idle timeout (30 s), shorter than idle timeout + the announced 50 s.
    let (chunks, outcome) =
        run(Arc::new(RetryingModel { wait: Duration::from_secs(45) }), CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert!(
        chunks.iter().any(|c| matches!(c, UiChunk::Data(d) if d.kind == "data-retrying" && d.transient == Some(true)))
    );
    assert_eq!(fold(&chunks).text(), "late but fine");
}

#[tokio::test(start_paused = true)]
async fn silence_beyond_the_announced_wait_is_still_a_stall() {
    let (_, outcome) = run(Arc::new(RetryingModel { wait: Duration::from_secs(100) }), CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: REASON_STALLED.into() });
}
