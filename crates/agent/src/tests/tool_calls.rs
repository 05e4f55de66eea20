//! The tool loop: calls run, approvals, ledger replays, repaired arguments, failing tools,
//! limits, steering and stop.

use super::*;

// ---- the tool loop ------------------------------------------------------------------

#[tokio::test]
async fn a_tool_call_runs_and_the_model_answers_from_its_result() {
    let model = scripted(vec![calls(&[("c1", "read", r#"{"path":"a.txt"}"#)]), answer("It says hello.")]);
    let tool = FakeTool::new("read", Behaviour::Answer("hello"));
    let gate = FakeGate::new(GateDecision::Allow);
    let (chunks, outcome) =
        run_request(with_tools(model.clone(), std::slice::from_ref(&tool), gate.clone()), CancellationToken::new())
            .await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(tool.runs(), vec![json!({"path": "a.txt"})]);
    assert_eq!(*gate.begun.lock().unwrap(), vec!["c1".to_owned()]);
    assert_eq!(*gate.finished.lock().unwrap(), vec![("c1".to_owned(), true)]);

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].tools.len(), 1, "native tools are offered");
    let second = &requests[1];
    assert!(
        matches!(&second.messages[1].content[0], ContentPart::ToolCall(c) if c.arguments == json!({"path": "a.txt"}))
    );
    assert_eq!(tool_results(second)[0].text_content(), "hello");

    let message = fold(&chunks);
    assert_eq!(tool_states(&message), vec![("c1".into(), ToolState::OutputAvailable)]);
    assert_eq!(message.text(), "It says hello.");
    let steps = message.parts.iter().filter(|p| matches!(p, UiPart::StepStart)).count();
    assert_eq!(steps, 2);
}

#[tokio::test]
async fn a_call_that_needs_approval_waits_and_runs_nothing_of_its_step() {
    let model = scripted(vec![calls(&[("c1", "read", r#"{"path":"a"}"#), ("c2", "write", r#"{"path":"b"}"#)])]);
    let read = FakeTool::with("read", Behaviour::Answer("A"), true, None);
    let write = FakeTool::new("write", Behaviour::Answer("ok"));
    let gate = FakeGate::new(GateDecision::Ask { approval_id: "ap-1".into() });
    let (chunks, outcome) =
        run_request(with_tools(model, &[read.clone(), write.clone()], gate.clone()), CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::AwaitingApproval);
    assert!(read.runs().is_empty() && write.runs().is_empty());
    let checked = gate.checked.lock().unwrap().clone();
    assert_eq!(checked.len(), 2);
    assert_eq!(checked[0].preview, None, "read-only tools need no preview");
    assert_eq!(checked[1].preview.as_deref(), Some("would touch \"b\""));
    let message = fold(&chunks);
    assert_eq!(
        tool_states(&message),
        vec![("c1".into(), ToolState::ApprovalRequested), ("c2".into(), ToolState::ApprovalRequested)]
    );
    assert!(chunks.contains(&UiChunk::ToolApprovalRequest { approval_id: "ap-1".into(), tool_call_id: "c2".into() }));
}

fn pending(call_id: &str, tool: &str, input: Value, state: PendingState) -> PendingCall {
    PendingCall { call_id: call_id.into(), tool_name: tool.into(), input, state }
}

#[tokio::test]
async fn a_continued_reply_runs_approved_calls_reports_denials_and_goes_on() {
    let model = scripted(vec![answer("Wrote it; skipped the other.")]);
    let write = FakeTool::new("write", Behaviour::Answer("written"));
    let gate = FakeGate::new(GateDecision::Allow);
    let mut request = with_tools(model.clone(), std::slice::from_ref(&write), gate.clone());
    request.pending = vec![
        pending("c1", "write", json!({"path": "edited.txt"}), PendingState::Approved),
        pending("c2", "write", json!({"path": "x"}), PendingState::Denied { reason: Some("not x".into()) }),
    ];
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(write.runs(), vec![json!({"path": "edited.txt"})], "the edited input runs, the denied call does not");
    assert!(chunks.contains(&UiChunk::ToolOutputDenied { tool_call_id: "c2".into() }));
    let results = tool_results(&model.requests()[0]);
    assert_eq!(results[0].text_content(), "written");
    assert!(results[1].is_error && results[1].text_content().contains("Their reason: not x"));
}

/// Spans the OpenTelemetry layer ended, kept in memory.
#[derive(Clone, Debug, Default)]
struct Exported(Arc<Mutex<Vec<opentelemetry_sdk::trace::SpanData>>>);

impl opentelemetry_sdk::trace::SpanExporter for Exported {
    fn export(
        &self,
        batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> impl std::future::Future<Output = opentelemetry_sdk::error::OTelSdkResult> + Send {
        self.0.lock().unwrap().extend(batch);
        std::future::ready(Ok(()))
    }
}

#[tokio::test]
async fn a_continued_reply_traces_each_answered_wait_from_question_to_answer() {
    use opentelemetry::trace::TracerProvider as _;
    use tracing::instrument::WithSubscriber as _;
    use tracing_subscriber::layer::SubscriberExt as _;

    let exported = Exported::default();
    let provider =
        opentelemetry_sdk::trace::SdkTracerProvider::builder().with_simple_exporter(exported.clone()).build();
    opentelemetry::global::set_tracer_provider(provider.clone());
    let subscriber =
        tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));

    let model = scripted(vec![answer("Wrote it.")]);
    let write = FakeTool::new("write", Behaviour::Answer("written"));
    let mut request = with_tools(model, std::slice::from_ref(&write), FakeGate::new(GateDecision::Allow));
    request.pending = vec![pending("c1", "write", json!({"path": "a"}), PendingState::Approved)];
    let asked = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let answered = asked + Duration::from_millis(4_250);
    request.answered_waits = vec![AnsweredWait {
        approval_id: "ap-1".into(),
        call_id: "c1".into(),
        tool_name: "write".into(),
        decision: "approved".into(),
        requested_at: asked,
        decided_at: answered,
    }];
    let (_, outcome) = run_request(request, CancellationToken::new()).with_subscriber(subscriber).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    provider.force_flush().unwrap();

    let spans = exported.0.lock().unwrap().clone();
    let named = |name: &str| spans.iter().filter(|s| s.name == name).collect::<Vec<_>>();
    let [wait] = named("approval_wait")[..] else { panic!("one approval_wait span: {:?}", named("approval_wait")) };
    assert_eq!((wait.start_time, wait.end_time), (asked, answered), "the span covers the wait itself");
    let attribute = |key: &str| wait.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.to_string());
    assert_eq!(attribute("tool").as_deref(), Some("write"));
    assert_eq!(attribute("decision").as_deref(), Some("approved"));
    assert_eq!(attribute("waited_ms").as_deref(), Some("4250"));
    // Under the continued reply's `resumed` step, in the turn's trace.
    let resumed = named("step")
        .into_iter()
        .find(|s| s.attributes.iter().any(|kv| kv.key.as_str() == "step" && kv.value.to_string() == "resumed"))
        .expect("the resumed step's span");
    assert_eq!(wait.parent_span_id, resumed.span_context.span_id());
    assert_eq!(wait.span_context.trace_id(), resumed.span_context.trace_id());
    let [agent] = named("agent")[..] else { panic!("one agent span") };
    assert_eq!(resumed.parent_span_id, agent.span_context.span_id());
}

#[tokio::test]
async fn a_call_the_ledger_says_ran_already_is_not_run_twice() {
    let model = scripted(vec![answer("ok")]);
    let write = FakeTool::new("write", Behaviour::Answer("written"));
    let gate = Arc::new(FakeGate {
        already_ran: vec!["c1".into()],
        ..Arc::into_inner(FakeGate::new(GateDecision::Allow)).unwrap()
    });
    let mut request = with_tools(model.clone(), std::slice::from_ref(&write), gate);
    request.pending = vec![
        pending("c1", "write", json!({"path": "a"}), PendingState::Approved),
        pending("c2", "write", json!({"path": "b"}), PendingState::Interrupted),
        pending("c3", "write", json!({"path": "c"}), PendingState::Done(ToolOutput::text("stored"))),
    ];
    let (chunks, _) = run_request(request, CancellationToken::new()).await;
    assert!(write.runs().is_empty());
    let results = tool_results(&model.requests()[0]);
    assert!(results[0].text_content().contains("already run once"));
    assert!(results[1].text_content().contains("not run again"));
    assert_eq!(results[2].text_content(), "stored");
    assert!(
        chunks.iter().any(|c| matches!(c, UiChunk::ToolOutputAvailable { tool_call_id, .. } if tool_call_id == "c3"))
    );
}

#[tokio::test]
async fn ids_that_come_back_are_renamed_so_every_call_runs() {
    // A server that numbers its calls from 0 in every answer, in a reply that already
    // used `call_0` before it was continued.
    let model = scripted(vec![
        calls(&[("call_0", "read", r#"{"path":"a"}"#), ("call_0", "read", r#"{"path":"b"}"#)]),
        calls(&[("call_0", "read", r#"{"path":"c"}"#)]),
        answer("done"),
    ]);
    let read = FakeTool::new("read", Behaviour::Answer("x"));
    let gate = FakeGate::new(GateDecision::Allow);
    let mut request = with_tools(model.clone(), std::slice::from_ref(&read), gate.clone());
    request.used_call_ids = vec!["call_0".into()];
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(read.runs().len(), 3, "no call passes for another");
    let ids: Vec<String> = tool_states(&fold(&chunks)).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, vec!["call_0_2", "call_0_3", "call_0_4"]);
    assert_eq!(*gate.begun.lock().unwrap(), ids);
    // The model gets its calls back under the ids their results carry.
    let last = &model.requests()[2];
    let sent: Vec<String> = last
        .messages
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|p| if let ContentPart::ToolCall(c) = p { Some(c.id.clone()) } else { None })
        .collect();
    let answered: Vec<String> = tool_results(last).into_iter().map(|r| r.call_id).collect();
    assert_eq!((sent.clone(), answered), (ids.clone(), ids));
}

#[tokio::test]
async fn invalid_arguments_get_one_repair_round() {
    let model = scripted(vec![
        calls(&[("c1", "read", r#"{"path": 5}"#)]),
        calls(&[("c2", "read", r#"{"path": "a"}"#)]),
        answer("fixed"),
    ]);
    let read = FakeTool::new("read", Behaviour::Answer("A"));
    let (chunks, outcome) = run_request(
        with_tools(model.clone(), std::slice::from_ref(&read), FakeGate::new(GateDecision::Allow)),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(read.runs(), vec![json!({"path": "a"})]);
    let repair = tool_results(&model.requests()[1]);
    assert!(repair[0].is_error && repair[0].text_content().contains("/path"), "{}", repair[0].text_content());
    let states = tool_states(&fold(&chunks));
    assert_eq!(states, vec![("c1".into(), ToolState::OutputError), ("c2".into(), ToolState::OutputAvailable)]);

    let stubborn = scripted(vec![calls(&[("c1", "read", "{nope")]), calls(&[("c2", "nothing", "{}")])]);
    let (_, outcome) =
        run_request(with_tools(stubborn, &[read], FakeGate::new(GateDecision::Allow)), CancellationToken::new()).await;
    assert!(matches!(outcome, TurnOutcome::Failed { error } if error.message.contains("kept sending")));
}

#[tokio::test]
async fn audit_23_a_tool_input_error_keeps_what_the_model_sent() {
    let model = scripted(vec![
        calls(&[
            ("c1", "read", "{\"path\": \"a.txt\""),
            ("c2", "read", r#"{"path": 5}"#),
            ("c3", "nope", r#"{"x": 1}"#),
        ]),
        answer("sorry"),
    ]);
    let read = FakeTool::new("read", Behaviour::Answer("A"));
    let (chunks, _) =
        run_request(with_tools(model, &[read], FakeGate::new(GateDecision::Allow)), CancellationToken::new()).await;
    let errors: Vec<(String, Value)> = chunks
        .iter()
        .filter_map(|c| match c {
            UiChunk::ToolInputError { tool_call_id, input, .. } => Some((tool_call_id.clone(), input.clone())),
            _ => None,
        })
        .collect();
    let sent = vec![
        ("c1".to_owned(), json!("{\"path\": \"a.txt\"")),
        ("c2".to_owned(), json!({"path": 5})),
        ("c3".to_owned(), json!({"x": 1})),
    ];
    assert_eq!(errors, sent, "the raw text when it is not JSON, else the arguments as sent");
    let stored: Vec<(String, Value)> = fold(&chunks)
        .parts
        .iter()
        .filter_map(|p| match p {
            UiPart::DynamicTool { tool_call_id, input, .. } => Some((tool_call_id.clone(), input.clone()?)),
            _ => None,
        })
        .collect();
    assert_eq!(stored, sent, "and the stored tool part keeps it");
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_panics_or_times_out_becomes_an_error_and_the_loop_goes_on() {
    let model =
        scripted(vec![calls(&[("c1", "boom", r#"{"path":"a"}"#), ("c2", "slow", r#"{"path":"b"}"#)]), answer("sorry")]);
    let boom = FakeTool::new("boom", Behaviour::Panic);
    let slow = FakeTool::new("slow", Behaviour::Hang);
    let gate = FakeGate::new(GateDecision::Allow);
    let (chunks, outcome) =
        run_request(with_tools(model.clone(), &[boom, slow], gate.clone()), CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    let errors: Vec<String> = chunks
        .iter()
        .filter_map(
            |c| if let UiChunk::ToolOutputError { error_text, .. } = c { Some(error_text.clone()) } else { None },
        )
        .collect();
    assert_eq!(errors, vec!["the tool crashed: the fake tool exploded".to_owned(), "timed out after 5 s".to_owned()]);
    assert_eq!(*gate.finished.lock().unwrap(), vec![("c1".to_owned(), false), ("c2".to_owned(), false)]);
    assert!(tool_results(&model.requests()[1]).iter().all(|r| r.is_error));
}

#[tokio::test]
async fn failures_and_progress_reach_the_tool_card() {
    let model =
        scripted(vec![calls(&[("c1", "fails", r#"{"path":"a"}"#), ("c2", "busy", r#"{"path":"b"}"#)]), answer("ok")]);
    let fails = FakeTool::new("fails", Behaviour::Fail("disk full"));
    let busy = FakeTool::new("busy", Behaviour::Progress);
    let (chunks, _) =
        run_request(with_tools(model, &[fails, busy], FakeGate::new(GateDecision::Allow)), CancellationToken::new())
            .await;
    assert!(chunks.contains(&UiChunk::ToolOutputError {
        tool_call_id: "c1".into(),
        error_text: "disk full".into(),
        dynamic: Some(true)
    }));
    assert!(chunks.iter().any(|c| matches!(c, UiChunk::Data(d) if d.kind == "data-tool-progress" && d.data["message"] == "half way" && d.transient == Some(true))));
}

#[tokio::test]
async fn a_policy_denial_is_reported_to_the_model() {
    let model = scripted(vec![calls(&[("c1", "write", r#"{"path":"a"}"#)]), answer("ok")]);
    let write = FakeTool::new("write", Behaviour::Answer("written"));
    let gate = FakeGate::new(GateDecision::Deny { reason: "rule r1 forbids it".into() });
    let (chunks, _) =
        run_request(with_tools(model.clone(), std::slice::from_ref(&write), gate), CancellationToken::new()).await;
    assert!(write.runs().is_empty());
    assert!(chunks.contains(&UiChunk::ToolOutputDenied { tool_call_id: "c1".into() }));
    assert_eq!(tool_results(&model.requests()[1])[0].text_content(), "This tool call was not run: rule r1 forbids it.");
}

#[tokio::test]
async fn the_tool_call_limit_pauses_the_turn_as_its_own_state() {
    let model = scripted(vec![
        calls(&[("c1", "read", r#"{"path":"a"}"#)]),
        calls(&[("c2", "read", r#"{"path":"b"}"#), ("c3", "read", r#"{"path":"c"}"#)]),
    ]);
    let read = FakeTool::new("read", Behaviour::Answer("x"));
    let mut request = with_tools(model, std::slice::from_ref(&read), FakeGate::new(GateDecision::Allow));
    request.max_tool_calls = 2;
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::ToolLimit });
    assert_eq!(read.runs().len(), 1, "the step that would pass the limit runs nothing");
    let states = tool_states(&fold(&chunks));
    assert_eq!(states[1..], [("c2".into(), ToolState::InputAvailable), ("c3".into(), ToolState::InputAvailable)]);
}

#[tokio::test]
async fn a_steer_yields_at_the_next_step_boundary() {
    let model = scripted(vec![calls(&[("c1", "read", r#"{"path":"a"}"#)]), answer("never asked")]);
    let read = FakeTool::new("read", Behaviour::Answer("x"));
    let request = with_tools(model.clone(), std::slice::from_ref(&read), FakeGate::new(GateDecision::Allow));
    request.steer.cancel();
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Steered);
    assert_eq!(read.runs().len(), 1, "the step's tools finish before the turn yields");
    assert_eq!(model.requests().len(), 1);
    assert_eq!(tool_states(&fold(&chunks)), vec![("c1".into(), ToolState::OutputAvailable)]);

    // Without a step boundary the turn simply finishes.
    let plain = scripted(vec![answer("done")]);
    let request = request_for(plain);
    request.steer.cancel();
    assert_eq!(
        run_request(request, CancellationToken::new()).await.1,
        TurnOutcome::Finished { reason: FinishReason::Stop }
    );
}

#[tokio::test(start_paused = true)]
async fn stop_during_a_tool_call_pauses_the_turn() {
    let model = scripted(vec![calls(&[("c1", "slow", r#"{"path":"a"}"#)])]);
    let slow = FakeTool::new("slow", Behaviour::Hang);
    let gate = FakeGate::new(GateDecision::Allow);
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        stopper.cancel();
    });
    let (chunks, outcome) = run_request(with_tools(model, &[slow], gate.clone()), cancel).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::UserStop });
    assert_eq!(*gate.finished.lock().unwrap(), vec![("c1".to_owned(), false)]);
    assert!(chunks.iter().any(
        |c| matches!(c, UiChunk::ToolOutputError { error_text, .. } if error_text == "stopped before it finished")
    ));
}
