//! Tool calling through the prompt for models without native tools.

use super::*;

// ---- prompt-based tool calling ---------------------------------------------------------

#[tokio::test]
async fn models_without_native_tools_call_them_through_the_prompt() {
    let model = scripted(vec![
        vec![
            text("Checking. <tool_"),
            text("call>{\"name\": \"read\", \"arguments\": {\"path\": \"a\"}}</tool_call>"),
            finish(StopReason::Stop),
        ],
        answer("It holds A."),
    ]);
    let read = FakeTool::new("read", Behaviour::Answer("A"));
    let mut request = with_tools(model.clone(), std::slice::from_ref(&read), FakeGate::new(GateDecision::Allow));
    request.tool_calling = ToolCalling::Prompt;
    let (chunks, outcome) = run_request(request, CancellationToken::new()).await;
    assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
    assert_eq!(read.runs(), vec![json!({"path": "a"})]);
    let requests = model.requests();
    assert!(requests[0].tools.is_empty(), "no native tools");
    assert!(requests[0].messages[0].role == ChatRole::System && requests[0].messages[0].text().contains("<tool_call>"));
    let last = requests[1].messages.last().unwrap();
    assert_eq!(last.role, ChatRole::User);
    assert!(last.text().contains("<tool_result name=\"read\"") && last.text().contains("\nA\n"), "{}", last.text());
    let message = fold(&chunks);
    assert_eq!(message.text(), "Checking. It holds A.");
    let states = tool_states(&message);
    assert_eq!(states.len(), 1);
    assert!(states[0].0.starts_with("ptc_") && states[0].1 == ToolState::OutputAvailable, "{states:?}");
}

#[tokio::test]
async fn prompt_written_calls_of_a_later_run_get_ids_of_their_own() {
    let script = || {
        vec![
            vec![
                text("<tool_call>{\"name\": \"read\", \"arguments\": {\"path\": \"a\"}}</tool_call>"),
                finish(StopReason::Stop),
            ],
            answer("ok"),
        ]
    };
    let read = FakeTool::new("read", Behaviour::Answer("A"));
    let mut seen = Vec::new();
    for _ in 0..2 {
        let mut request =
            with_tools(scripted(script()), std::slice::from_ref(&read), FakeGate::new(GateDecision::Allow));
        request.tool_calling = ToolCalling::Prompt;
        request.used_call_ids = seen.clone();
        let (chunks, _) = run_request(request, CancellationToken::new()).await;
        seen.extend(tool_states(&fold(&chunks)).into_iter().map(|(id, _)| id));
    }
    assert_eq!(seen.len(), 2);
    assert_ne!(seen[0], seen[1], "a resumed or retried reply never reuses an id");
    assert_eq!(read.runs().len(), 2);
}
