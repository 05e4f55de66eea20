//! Hooks and features: their order, failing hooks, aborts, retries and another round.

use super::*;

// ---- hooks and features ---------------------------------------------------------------

/// Records what each hook saw, under a name, into a shared log.
struct Recorder {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
    fail: bool,
    retry: bool,
}

impl Recorder {
    fn new(name: &'static str, log: &Arc<Mutex<Vec<String>>>) -> Arc<Self> {
        Arc::new(Self { name, log: log.clone(), fail: false, retry: false })
    }

    fn note(&self, what: String) {
        self.log.lock().unwrap().push(format!("{}:{what}", self.name));
    }

    fn result(&self) -> Result<(), HookError> {
        if self.fail { Err(HookError(format!("{} is broken", self.name))) } else { Ok(()) }
    }

    fn broken(name: &'static str, log: &Arc<Mutex<Vec<String>>>) -> Arc<Self> {
        Arc::new(Self { fail: true, ..Arc::into_inner(Recorder::new(name, log)).unwrap() })
    }
}

/// Every event logged on this thread while the guard lives, as `LEVEL field=value …`.
fn capture_logs() -> (Arc<Mutex<Vec<String>>>, tracing::subscriber::DefaultGuard) {
    use tracing_subscriber::layer::SubscriberExt;

    struct Capture(Arc<Mutex<Vec<String>>>);
    struct Fields(String);
    impl tracing::field::Visit for Fields {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            self.0.push_str(&format!("{}={value:?} ", field.name()));
        }
        fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
            self.0.push_str(&format!("{}={value} ", field.name()));
        }
    }
    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
        fn on_event(&self, event: &tracing::Event<'_>, _ctx: tracing_subscriber::layer::Context<'_, S>) {
            let mut fields = Fields(format!("{} ", event.metadata().level()));
            event.record(&mut fields);
            self.0.lock().unwrap().push(fields.0.trim_end().to_owned());
        }
    }
    let lines = Arc::new(Mutex::new(Vec::new()));
    let subscriber = tracing_subscriber::registry().with(Capture(lines.clone()));
    (lines, tracing::subscriber::set_default(subscriber))
}

/// The warnings about failed hooks: `contributor/hook`.
fn failed_hooks(lines: &Mutex<Vec<String>>) -> Vec<String> {
    lines
        .lock()
        .unwrap()
        .iter()
        .filter(|line| line.starts_with("WARN") && line.contains("a hook failed; the turn goes on"))
        .map(|line| {
            let field = |name: &str| {
                line.split(' ').find_map(|part| part.strip_prefix(&format!("{name}="))).unwrap_or("?").to_owned()
            };
            format!("{}/{}", field("contributor"), field("hook"))
        })
        .collect()
}

#[async_trait]
impl AgentHooks for Recorder {
    fn name(&self) -> &str {
        self.name
    }

    async fn on_start(&self) -> Result<(), HookError> {
        self.note("start".into());
        self.result()
    }

    async fn prepare_step(&self, plan: &StepPlan) -> Result<Option<StepPlan>, HookError> {
        if self.fail {
            return Err(HookError("broken".into()));
        }
        let mut plan = plan.clone();
        let seen = plan.messages.last().map(|m| m.text()).unwrap_or_default();
        self.note(format!("prepare({seen})"));
        plan.messages.push(ChatMessage::user(self.name));
        Ok(Some(plan))
    }

    async fn on_step_finish(&self, step: &StepReport, _emit: &mut crate::hooks::Emit) -> Result<(), HookError> {
        self.note(format!("step{}", step.step));
        self.result()
    }

    async fn on_tool_execution_start(&self, event: &ToolExecutionStart) -> Result<(), HookError> {
        self.note(format!("tool-start({})", event.tool_name));
        self.result()
    }

    async fn on_tool_execution_end(&self, event: &ToolExecutionEnd) -> Result<(), HookError> {
        self.note(format!("tool-end({},{})", event.tool_name, event.error.is_none()));
        self.result()
    }

    async fn on_finish(&self, outcome: &TurnOutcome) -> Result<(), HookError> {
        self.note(format!("finish({})", matches!(outcome, TurnOutcome::Finished { .. })));
        self.result()
    }

    async fn on_abort(&self, reason: &str) -> Result<(), HookError> {
        self.note(format!("abort({reason})"));
        self.result()
    }

    async fn on_error(&self, _error: &protocol::ApiError) -> ErrorDecision {
        self.note("error".into());
        if self.retry { ErrorDecision::Retry } else { ErrorDecision::Abort }
    }
}

#[tokio::test]
async fn hooks_run_observers_then_features_then_callers_and_a_failing_one_does_not_stop_the_chain() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = scripted(vec![calls(&[("c1", "read", r#"{"path":"a"}"#)]), answer("done")]);
    let read = FakeTool::new("read", Behaviour::Answer("x"));
    let mut request = with_tools(model.clone(), &[read], FakeGate::new(GateDecision::Allow));
    request.hooks.add(HookSource::Caller, Recorder::new("caller", &log));
    request.hooks.add(HookSource::Observer, Recorder::broken("broken", &log));
    request.hooks.add(HookSource::Feature, Recorder::new("feature", &log));
    let (lines, _guard) = capture_logs();
    let (_, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        vec![
            "broken:start",
            "feature:start",
            "caller:start",
            // prepare_step is chained: the caller sees the feature's addition; the broken
            // observer's failure leaves the plan as it was.
            "feature:prepare(hi)",
            "caller:prepare(feature)",
            "broken:step0",
            "feature:step0",
            "caller:step0",
            "broken:tool-start(read)",
            "feature:tool-start(read)",
            "caller:tool-start(read)",
            "broken:tool-end(read,true)",
            "feature:tool-end(read,true)",
            "caller:tool-end(read,true)",
            // A tool message has no text; the chain starts over from the conversation.
            "feature:prepare()",
            "caller:prepare(feature)",
            "broken:step1",
            "feature:step1",
            "caller:step1",
            "broken:finish(true)",
            "feature:finish(true)",
            "caller:finish(true)",
        ]
    );
    let sent = &model.requests()[0];
    let tail: Vec<String> = sent.messages.iter().rev().take(2).map(ChatMessage::text).collect();
    assert_eq!(tail, vec!["caller", "feature"], "the model gets the chained plan");
    // Every failure is logged, naming the contributor and the hook.
    assert_eq!(
        failed_hooks(&lines),
        vec![
            "broken/on_start",
            "broken/prepare_step",
            "broken/on_step_finish",
            "broken/on_tool_execution_start",
            "broken/on_tool_execution_end",
            "broken/prepare_step",
            "broken/on_step_finish",
            "broken/on_finish",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_user_stop_reaches_on_abort_in_order_and_a_failing_one_does_not_stop_the_chain() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model =
        Arc::new(ScriptedModel::new(vec![vec![text("a"), text("b"), text("c")]]).with_gap(Duration::from_secs(1)));
    let mut request = request(model);
    request.hooks.add(HookSource::Caller, Recorder::new("caller", &log));
    request.hooks.add(HookSource::Feature, Recorder::new("feature", &log));
    request.hooks.add(HookSource::Observer, Recorder::broken("broken", &log));
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        stopper.cancel();
    });
    let (lines, _guard) = capture_logs();
    let (_, outcome) = run_request(request, cancel).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::UserStop });
    let log = log.lock().unwrap().clone();
    assert!(
        log.ends_with(&[
            "broken:abort(user_stop)".to_owned(),
            "feature:abort(user_stop)".to_owned(),
            "caller:abort(user_stop)".to_owned(),
            "broken:finish(false)".to_owned(),
            "feature:finish(false)".to_owned(),
            "caller:finish(false)".to_owned(),
        ]),
        "{log:?}"
    );
    assert!(!log.iter().any(|l| l.contains("step")), "the step never finished: {log:?}");
    let failed = failed_hooks(&lines);
    assert!(failed.ends_with(&["broken/on_abort".to_owned(), "broken/on_finish".to_owned()]), "{failed:?}");
}

/// Remembers how long each tool call took, as `on_tool_execution_end` reports it.
struct Stopwatch(Mutex<Vec<(String, Duration)>>);

#[async_trait]
impl AgentHooks for Stopwatch {
    fn name(&self) -> &str {
        "stopwatch"
    }

    async fn on_tool_execution_end(&self, event: &ToolExecutionEnd) -> Result<(), HookError> {
        self.0.lock().unwrap().push((event.call_id.clone(), event.duration));
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn on_tool_execution_end_says_how_long_the_call_took() {
    let model =
        scripted(vec![calls(&[("c1", "slow", r#"{"path":"a"}"#), ("c2", "quick", r#"{"path":"b"}"#)]), answer("ok")]);
    let slow = FakeTool::new("slow", Behaviour::Sleep(Duration::from_secs(3)));
    let quick = FakeTool::new("quick", Behaviour::Answer("x"));
    let mut request = with_tools(model, &[slow, quick], FakeGate::new(GateDecision::Allow));
    let stopwatch = Arc::new(Stopwatch(Mutex::new(Vec::new())));
    request.hooks.add(HookSource::Caller, stopwatch.clone());
    run_request(request, CancellationToken::new()).await;
    let timings = stopwatch.0.lock().unwrap().clone();
    assert_eq!(timings, vec![("c1".to_owned(), Duration::from_secs(3)), ("c2".to_owned(), Duration::ZERO)]);
}

#[tokio::test]
async fn prepare_step_is_chained_past_a_failing_hook() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = scripted(vec![answer("ok")]);
    let mut request = request(model.clone());
    request.hooks.add(HookSource::Caller, Recorder::new("first", &log));
    request.hooks.add(HookSource::Caller, Recorder::broken("middle", &log));
    request.hooks.add(HookSource::Caller, Recorder::new("last", &log));
    run_request(request, CancellationToken::new()).await;
    let log = log.lock().unwrap().clone();
    assert!(log.contains(&"last:prepare(first)".to_owned()), "the last sees the first's plan: {log:?}");
    let sent: Vec<String> = model.requests()[0].messages.iter().map(ChatMessage::text).collect();
    assert_eq!(sent, vec!["hi", "first", "last"]);
}

#[tokio::test]
async fn on_error_asks_every_hook_and_any_retry_wins_wherever_it_comes() {
    let overloaded = || {
        Err(ProviderError {
            kind: ProviderErrorKind::Overloaded,
            message: "busy".into(),
            status: Some(529),
            retryable: true,
        })
    };
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = scripted(vec![vec![overloaded()], answer("fine")]);
    let mut request = request(model.clone());
    request.hooks.add(
        HookSource::Observer,
        Arc::new(Recorder { retry: true, ..Arc::into_inner(Recorder::new("yes", &log)).unwrap() }),
    );
    request.hooks.add(HookSource::Feature, Recorder::new("no", &log));
    request.hooks.add(HookSource::Caller, Recorder::new("also-no", &log));
    let (_, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(model.requests().len(), 2);
    let asked: Vec<String> = log.lock().unwrap().iter().filter(|l| l.ends_with(":error")).cloned().collect();
    assert_eq!(asked, vec!["yes:error", "no:error", "also-no:error"], "a retry does not cut the others short");

    // With no hooks at all the default is abort.
    let model = scripted(vec![vec![overloaded()], answer("never")]);
    let (_, outcome) = run_request(request_for(model.clone()), CancellationToken::new()).await;
    assert!(matches!(outcome, TurnOutcome::Failed { .. }));
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn on_error_retries_when_any_hook_says_so_and_aborts_by_default() {
    let overloaded = || {
        Err(ProviderError {
            kind: ProviderErrorKind::Overloaded,
            message: "busy".into(),
            status: Some(529),
            retryable: true,
        })
    };
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = scripted(vec![vec![overloaded()], answer("second time lucky")]);
    let mut request = request(model.clone());
    request.hooks.add(HookSource::Caller, Recorder::new("no", &log));
    request.hooks.add(
        HookSource::Caller,
        Arc::new(Recorder { retry: true, ..Arc::into_inner(Recorder::new("yes", &log)).unwrap() }),
    );
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(fold(&chunks).text(), "second time lucky");
    assert!(log.lock().unwrap().contains(&"no:error".to_owned()), "every hook is asked");

    let model = scripted(vec![vec![overloaded()], answer("never")]);
    let mut request = request_for(model.clone());
    let log = Arc::new(Mutex::new(Vec::new()));
    request.hooks.add(HookSource::Caller, Recorder::new("no", &log));
    let (_, outcome) = run_request(request, CancellationToken::new()).await;
    assert!(matches!(outcome, TurnOutcome::Failed { .. }));
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn on_abort_hears_a_stall() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = Arc::new(ScriptedModel::new(vec![vec![text("a")]]).ending(End::HoldOpen));
    let mut request = request(model);
    request.hooks.add(HookSource::Caller, Recorder::new("c", &log));
    let (_, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Paused { reason: StatusReason::Stalled });
    assert!(log.lock().unwrap().ends_with(&["c:abort(stalled)".to_owned(), "c:finish(false)".to_owned()]));
}

/// A stateless feature: adds a system note, and asks for one more round when the answer
/// was cut off by the token limit.
struct FinishCutOffAnswers;

impl Feature for FinishCutOffAnswers {
    fn name(&self) -> &str {
        "finish-cut-off"
    }

    fn process_prompts(&self, ctx: &PromptContext<'_>, messages: &mut Vec<ChatMessage>) {
        messages.insert(0, ChatMessage::system(format!("note for step {}", ctx.step)));
    }

    fn response_complete(&self, ctx: &ResponseContext<'_>) -> RoundAction {
        if *ctx.finish == StopReason::Length {
            RoundAction::NextRound { messages: vec![ChatMessage::user("Go on from where you stopped.")] }
        } else {
            RoundAction::Done
        }
    }
}

#[tokio::test]
async fn features_assemble_the_prompt_and_may_ask_for_another_round() {
    let model = scripted(vec![vec![text("Part one"), finish(StopReason::Length)], answer(", part two.")]);
    let mut request = request(model.clone());
    request.features.push(Arc::new(FinishCutOffAnswers));
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(fold(&chunks).text(), "Part one, part two.");
    let requests = model.requests();
    assert_eq!(requests[0].messages[0].text(), "note for step 0");
    assert_eq!(requests[1].messages[0].text(), "note for step 1");
    assert_eq!(requests[1].messages.last().unwrap().text(), "Go on from where you stopped.");
}
