//! What each round sends back: tool results leaving the context after their rounds, usage,
//! signatures.

use super::*;

#[tokio::test]
async fn results_leave_the_context_after_their_rounds() {
    let model = scripted(vec![
        calls(&[("c1", "fetch", r#"{"path":"a"}"#)]),
        calls(&[("c2", "other", r#"{"path":"b"}"#)]),
        answer("done"),
    ]);
    let fetch = FakeTool::with("fetch", Behaviour::Answer("a big page"), true, Some(1));
    let other = FakeTool::new("other", Behaviour::Answer("small"));
    let (_, _) = run_request(
        with_tools(model.clone(), &[fetch, other], FakeGate::new(GateDecision::Allow)),
        CancellationToken::new(),
    )
    .await;
    let requests = model.requests();
    assert_eq!(tool_results(&requests[1])[0].text_content(), "a big page");
    let later = tool_results(&requests[2]);
    assert!(later[0].text_content().contains("removed from the context"), "{}", later[0].text_content());
    assert_eq!(later[1].text_content(), "small");
}

#[tokio::test]
async fn stored_results_keep_counting_their_rounds_and_prompt_mode_leaves_them_out_too() {
    for calling in [ToolCalling::Native, ToolCalling::Prompt] {
        // A page fetched in an earlier turn with one round left, and this turn's own fetch.
        let model = scripted(vec![calls(&[("c1", "fetch", r#"{"path":"b"}"#)]), answer("done")]);
        let fetch = FakeTool::with("fetch", Behaviour::Answer("new page"), true, Some(5));
        let mut request = with_tools(model.clone(), &[fetch], FakeGate::new(GateDecision::Allow));
        request.tool_calling = calling;
        request.completion.messages = vec![
            ChatMessage::user("fetch a"),
            ChatMessage::new(
                ChatRole::Assistant,
                vec![ContentPart::ToolCall(providers::ToolCall {
                    id: "old".into(),
                    name: "fetch".into(),
                    arguments: json!({"path": "a"}),
                })],
            ),
            ChatMessage::tool_results(vec![providers::ToolResult::text("old", "fetch", "old page", false)]),
            ChatMessage::user("now fetch b"),
        ];
        request.context_rounds_left = std::collections::HashMap::from([("old".to_owned(), 1)]);
        let (_, outcome) = run_request(request, CancellationToken::new()).await;
        assert_eq!(outcome, TurnOutcome::Finished { reason: FinishReason::Stop });
        let requests = model.requests();
        let all_text = |request: &CompletionRequest| -> String {
            request
                .messages
                .iter()
                .flat_map(|m| m.content.iter())
                .map(|p| match p {
                    ContentPart::Text { text } => text.clone(),
                    ContentPart::ToolResult(r) => r.text_content(),
                    _ => String::new(),
                })
                .collect()
        };
        assert!(all_text(&requests[0]).contains("old page"), "{calling:?}: its last round");
        let later = all_text(&requests[1]);
        assert!(!later.contains("old page") && later.contains("removed from the context"), "{calling:?}: {later}");
        assert!(later.contains("new page"), "{calling:?}: this turn's page has rounds left");
    }
}

#[tokio::test]
async fn usage_adds_up_over_the_steps() {
    let usage = |i, o| Ok(CompletionEvent::Usage(TokenUsage::new(i, o)));
    let mut first = calls(&[("c1", "read", r#"{"path":"a"}"#)]);
    first.insert(first.len() - 1, usage(10, 2));
    let model = scripted(vec![first, vec![text("ok"), usage(15, 3), finish(StopReason::Stop)]]);
    let read = FakeTool::new("read", Behaviour::Answer("x"));
    let mut request = with_tools(model, &[read], FakeGate::new(GateDecision::Allow));
    request.usage = TokenUsage::new(100, 1);
    let (chunks, _) = run_request(request, CancellationToken::new()).await;
    let usage = fold(&chunks).typed_metadata().usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (125, 6));
}

#[tokio::test]
async fn signatures_are_kept_and_sent_back_to_the_same_format() {
    let model = Arc::new(
        ScriptedModel::new(vec![
            vec![
                Ok(CompletionEvent::ReasoningDelta("plan".into())),
                Ok(CompletionEvent::ReasoningSignature { signature: "sig-1".into() }),
                Ok(CompletionEvent::RedactedReasoning { data: "secret".into() }),
                Ok(CompletionEvent::ToolCallStart { index: 0, id: "c1".into(), name: "read".into() }),
                Ok(CompletionEvent::ToolCallDelta { index: 0, arguments: r#"{"path":"a"}"#.into() }),
                finish(StopReason::ToolCalls),
            ],
            answer("ok"),
        ])
        .with_format("anthropic"),
    );
    let read = FakeTool::new("read", Behaviour::Answer("x"));
    let (chunks, _) =
        run_request(with_tools(model.clone(), &[read], FakeGate::new(GateDecision::Allow)), CancellationToken::new())
            .await;
    let second = &model.requests()[1];
    let reasoning: Vec<&providers::Reasoning> = second.messages[1]
        .content
        .iter()
        .filter_map(|p| if let ContentPart::Reasoning(r) = p { Some(r) } else { None })
        .collect();
    assert_eq!(reasoning[0].signature.as_deref(), Some("sig-1"));
    assert_eq!(reasoning[0].text, "plan");
    assert_eq!(reasoning[1].redacted.as_deref(), Some("secret"));
    // And the stored message keeps them for later turns.
    let message = fold(&chunks);
    let rebuilt = build_prompt(
        [&UiMessage::user_text("u", "hi"), &message],
        &PromptOptions { format: "anthropic", ..PromptOptions::default() },
    );
    assert!(matches!(&rebuilt[1].content[0], ContentPart::Reasoning(r) if r.signature.as_deref() == Some("sig-1")));
    assert!(matches!(&rebuilt[1].content[1], ContentPart::Reasoning(r) if r.redacted.as_deref() == Some("secret")));
}
