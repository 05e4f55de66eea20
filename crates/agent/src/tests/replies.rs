//! Plain replies: streaming text, provider errors, cancel, stalls and announced retries.

use super::*;

// ---- plain replies ------------------------------------------------------------------

#[tokio::test]
async fn text_reply_streams_as_one_text_part() {
    let model = scripted(vec![vec![
        text("Hel"),
        text("lo"),
        Ok(CompletionEvent::Usage(TokenUsage::new(3, 2))),
        finish(StopReason::Stop),
    ]]);
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
    let model = scripted(vec![vec![Ok(CompletionEvent::ReasoningDelta("hmm".into())), text("answer")]]);
    let (chunks, _) = run(model, CancellationToken::new()).await;
    let message = fold(&chunks);
    // parts: [step-start, reasoning, text]; ids r1 and t2.
    assert!(matches!(message.parts[1], UiPart::Reasoning { .. }));
    assert!(chunks.contains(&UiChunk::ReasoningStart { id: "r1".into(), provider_metadata: None }));
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
    let model = scripted(vec![vec![text("partial"), Err(error)]]);
    let (chunks, outcome) = run(model, CancellationToken::new()).await;
    let TurnOutcome::Failed { error } = outcome else { panic!("expected failure, got {outcome:?}") };
    assert_eq!(error.kind, ErrorKind::Provider);
    assert_eq!(error.code.as_deref(), Some("network"));
    assert!(error.retryable);
    let message = fold(&chunks);
    assert_eq!(message.text(), "partial");
    assert!(
        matches!(&message.parts[2], UiPart::Data(d) if d.kind == "data-error" && d.data["message"] == "connection lost")
    );
    assert!(chunks.contains(&UiChunk::Error { error_text: "connection lost".into() }));
}

#[tokio::test]
async fn a_reply_the_content_filter_stopped_fails_with_its_text_kept_and_one_cut_by_length_finishes() {
    let model = scripted(vec![vec![text("Here is how "), finish(StopReason::ContentFilter)]]);
    let (chunks, outcome) = run(model, CancellationToken::new()).await;
    let TurnOutcome::Failed { error } = outcome else { panic!("expected failure, got {outcome:?}") };
    assert_eq!((error.code.as_deref(), error.retryable), (Some("content_filtered"), false));
    assert!(error.message.contains("rephrase"), "{}", error.message);
    let message = fold(&chunks);
    assert_eq!(message.text(), "Here is how ");
    assert!(message.parts.iter().any(|p| matches!(p, UiPart::Data(d) if d.kind == "data-error")));

    let model = scripted(vec![vec![text("The first half"), finish(StopReason::Length)]]);
    let (_, outcome) = run(model, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Length });
}

#[tokio::test(start_paused = true)]
async fn cancel_stops_the_turn_and_closes_open_parts() {
    let model =
        Arc::new(ScriptedModel::new(vec![vec![text("a"), text("b"), text("c")]]).with_gap(Duration::from_secs(1)));
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        stopper.cancel();
    });
    let (chunks, outcome) = run(model, cancel).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::UserStop });
    let message = fold(&chunks);
    assert_eq!(message.text(), "a");
    assert!(matches!(message.parts[1], UiPart::Text { state: Some(protocol::PartState::Done), .. }));
}

#[tokio::test(start_paused = true)]
async fn a_silent_provider_is_cut_off_as_stalled() {
    let model = Arc::new(ScriptedModel::new(vec![vec![text("a")]]).ending(End::HoldOpen));
    let (chunks, outcome) = run(model, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::Stalled });
    assert_eq!(fold(&chunks).text(), "a");
}

#[test]
fn prompt_skips_errors_and_empty_replies() {
    let user = UiMessage::user_text("u", "question");
    let failed = UiMessage { id: "a".into(), role: protocol::MessageRole::Assistant, parts: vec![], metadata: None };
    let prompt = build_prompt([&user, &failed], &PromptOptions::default());
    assert_eq!(prompt, vec![ChatMessage::user("question")]);
}

/// Announces a retry at once, then answers after `wait`, on every call.
fn retrying(wait: Duration) -> Arc<ScriptedModel> {
    let retry = CompletionEvent::Retrying { attempt: 2, delay_ms: 50_000, reason: "rate limited (HTTP 429)".into() };
    Arc::new(ScriptedModel::repeating(Reply::steps([
        Step::Event(Ok(retry)),
        Step::Sleep(wait),
        Step::Event(text("late but fine")),
    ])))
}

#[tokio::test(start_paused = true)]
async fn a_retry_wait_is_announced_and_does_not_count_as_silence() {
    // Longer than the idle timeout (30 s), shorter than idle timeout + the announced 50 s.
    let (chunks, outcome) = run(retrying(Duration::from_secs(45)), CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert!(
        chunks.iter().any(|c| matches!(c, UiChunk::Data(d) if d.kind == "data-retrying" && d.transient == Some(true)))
    );
    assert_eq!(fold(&chunks).text(), "late but fine");
}

#[tokio::test(start_paused = true)]
async fn silence_beyond_the_announced_wait_is_still_a_stall() {
    let (_, outcome) = run(retrying(Duration::from_secs(100)), CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::Stalled });
}
