//! The model providers against a scripted HTTP server speaking each
//! provider's wire format: streamed text, tool calls with streamed
//! arguments, bodies split into tiny pieces, retries, refusals, and the
//! shape of the request each provider sends.

use std::time::Duration;

use agent_providers::{
    AnthropicProvider, CancellationToken, Completion, ContentBlock, Message, OllamaProvider,
    OpenAiProvider, Provider, ProviderConfig, ProviderError, Request, RetryPolicy, Role,
    StopReason, StreamEvent, ToolDef, Usage,
};
use agent_tests::model_server::{ModelServer, Reply, anthropic_sse, ndjson, openai_sse};
use serde_json::{Value, json};

fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
    }
}

fn anthropic(server: &ModelServer) -> AnthropicProvider {
    AnthropicProvider::new(
        ProviderConfig::anthropic("claude-test")
            .base_url(server.url())
            .api_key("sk-ant-test")
            .retry(fast_retry()),
    )
    .expect("provider")
}

fn openai(server: &ModelServer) -> OpenAiProvider {
    OpenAiProvider::new(
        ProviderConfig::openai("gpt-test")
            .base_url(server.url())
            .api_key("sk-openai-test")
            .retry(fast_retry()),
    )
    .expect("provider")
}

fn ollama(server: &ModelServer) -> OllamaProvider {
    OllamaProvider::new(
        ProviderConfig::ollama("llama-test")
            .base_url(server.url())
            .retry(fast_retry()),
    )
    .expect("provider")
}

fn schema() -> Value {
    json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
}

/// A conversation that already holds a tool call and its result.
fn request() -> Request {
    Request {
        model: String::new(),
        system: Some("be brief".into()),
        messages: vec![
            Message::user("read a.txt"),
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "toolu_0".into(),
                    name: "read_file".into(),
                    input: json!({"path": "a.txt"}),
                }],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "toolu_0".into(),
                    content: "hello".into(),
                    is_error: false,
                }],
            },
        ],
        tools: vec![ToolDef {
            name: "read_file".into(),
            description: "Reads a file".into(),
            input_schema: schema(),
        }],
        max_tokens: 256,
        temperature: Some(0.5),
    }
}

async fn run(p: &dyn Provider) -> (Result<Completion, ProviderError>, Vec<StreamEvent>) {
    let req = request();
    let cancel = CancellationToken::new();
    let mut events = Vec::new();
    let mut sink = |e: StreamEvent| events.push(e);
    let result = p.stream(&req, &cancel, &mut sink).await;
    (result, events)
}

fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn input_deltas(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolInputDelta { partial_json, .. } => Some(partial_json.clone()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------- Anthropic

fn anthropic_text() -> String {
    anthropic_sse(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": [], "usage": {"input_tokens": 25, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Héllo"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ", wörld 🌍!"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 15}}),
        json!({"type": "message_stop"}),
    ])
}

fn anthropic_tool() -> String {
    anthropic_sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 40, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Reading."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"pa"}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "th\": \"src/"}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "lib.rs\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ])
}

fn assert_text(c: &Completion, text: &str, usage: Usage) {
    assert_eq!(c.message.role, Role::Assistant);
    assert_eq!(c.message.content, vec![ContentBlock::Text(text.into())]);
    assert_eq!(c.usage, usage);
    assert_eq!(c.stop_reason, StopReason::EndTurn);
}

fn assert_tool(c: &Completion, text: Option<&str>, id: &str, usage: Usage) {
    let mut expected = Vec::new();
    if let Some(t) = text {
        expected.push(ContentBlock::Text(t.into()));
    }
    expected.push(ContentBlock::ToolUse {
        id: id.into(),
        name: "read_file".into(),
        input: json!({"path": "src/lib.rs"}),
    });
    assert_eq!(c.message.content, expected);
    assert_eq!(c.usage, usage);
    assert_eq!(c.stop_reason, StopReason::ToolUse);
}

#[tokio::test]
async fn anthropic_streams_text() {
    let server = ModelServer::start(vec![Reply::sse(anthropic_text())])
        .await
        .expect("server");
    let (result, events) = run(&anthropic(&server)).await;
    let c = result.expect("completion");
    assert_text(
        &c,
        "Héllo, wörld 🌍!",
        Usage {
            input_tokens: 25,
            output_tokens: 15,
        },
    );
    assert_eq!(text_of(&events), "Héllo, wörld 🌍!");
    assert!(matches!(
        events.last(),
        Some(StreamEvent::Stop {
            reason: StopReason::EndTurn
        })
    ));
}

#[tokio::test]
async fn anthropic_streams_a_tool_call_and_sends_the_right_request() {
    let server = ModelServer::start(vec![Reply::sse(anthropic_tool())])
        .await
        .expect("server");
    let (result, events) = run(&anthropic(&server)).await;
    assert_tool(
        &result.expect("completion"),
        Some("Reading."),
        "toolu_1",
        Usage {
            input_tokens: 40,
            output_tokens: 30,
        },
    );
    assert_eq!(
        input_deltas(&events),
        ["", "{\"pa", "th\": \"src/", "lib.rs\"}"]
    );
    assert!(events.contains(&StreamEvent::ToolUseStart {
        index: 1,
        id: "toolu_1".into(),
        name: "read_file".into()
    }));

    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(r.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        r.body,
        json!({
            "model": "claude-test",
            "max_tokens": 256,
            "stream": true,
            "system": "be brief",
            "temperature": 0.5,
            "tools": [{"name": "read_file", "description": "Reads a file", "input_schema": schema()}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "read a.txt"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_0", "name": "read_file", "input": {"path": "a.txt"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0", "content": "hello", "is_error": false}]},
            ],
        })
    );
}

#[tokio::test]
async fn anthropic_survives_split_frames() {
    let body = anthropic_tool().replace('\n', "\r\n");
    let server = ModelServer::start(vec![
        Reply::sse(body).split(7, Duration::from_millis(1)),
        Reply::sse(anthropic_text()).split(3, Duration::ZERO),
    ])
    .await
    .expect("server");
    let p = anthropic(&server);
    let (result, _) = run(&p).await;
    assert_tool(
        &result.expect("completion"),
        Some("Reading."),
        "toolu_1",
        Usage {
            input_tokens: 40,
            output_tokens: 30,
        },
    );
    let (result, _) = run(&p).await;
    assert_text(
        &result.expect("completion"),
        "Héllo, wörld 🌍!",
        Usage {
            input_tokens: 25,
            output_tokens: 15,
        },
    );
}

#[tokio::test]
async fn anthropic_retries_429_then_succeeds() {
    let server = ModelServer::start(vec![
        Reply::error(
            429,
            &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
        )
        .header("retry-after", "0"),
        Reply::error(
            529,
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
        Reply::sse(anthropic_text()),
    ])
    .await
    .expect("server");
    let (result, _) = run(&anthropic(&server)).await;
    assert_eq!(
        result.expect("completion").message.text(),
        "Héllo, wörld 🌍!"
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn anthropic_401_is_surfaced_and_not_retried() {
    let server = ModelServer::start(vec![Reply::error(
        401,
        &json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
    )])
    .await
    .expect("server");
    let (result, events) = run(&anthropic(&server)).await;
    match result {
        Err(ProviderError::Http {
            status, message, ..
        }) => {
            assert_eq!(status, 401);
            assert_eq!(message, "invalid x-api-key");
        }
        other => panic!("expected HTTP 401, got {other:?}"),
    }
    assert!(events.is_empty());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn anthropic_error_event_midstream() {
    let body = anthropic_sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 1}}}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let server = ModelServer::start(vec![Reply::sse(body)])
        .await
        .expect("server");
    let (result, _) = run(&anthropic(&server)).await;
    match result {
        Err(ProviderError::Stream { kind, message, .. }) => {
            assert_eq!(kind, "overloaded_error");
            assert_eq!(message, "Overloaded");
        }
        other => panic!("expected a stream error, got {other:?}"),
    }
}

#[tokio::test]
async fn missing_keys_name_the_variable() {
    // Only meaningful when the variables are unset, as in CI.
    if std::env::var_os("ANTHROPIC_API_KEY").is_none() {
        let err = AnthropicProvider::new(ProviderConfig::anthropic("m")).expect_err("no key");
        assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
    }
    if std::env::var_os("OPENAI_API_KEY").is_none() {
        let err = OpenAiProvider::new(ProviderConfig::openai("m")).expect_err("no key");
        assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
    }
}

#[tokio::test]
async fn cancellation_stops_a_retry_wait() {
    let server = ModelServer::start(vec![
        Reply::error(503, &json!({"error": {"message": "busy"}})).header("retry-after", "30"),
    ])
    .await
    .expect("server");
    let p = AnthropicProvider::new(
        ProviderConfig::anthropic("m")
            .base_url(server.url())
            .api_key("k")
            .retry(RetryPolicy {
                max_attempts: 3,
                base_delay: Duration::from_millis(5),
                max_delay: Duration::from_secs(60),
            }),
    )
    .expect("provider");
    let req = request();
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        c2.cancel();
    });
    let mut sink = |_e: StreamEvent| {};
    let started = std::time::Instant::now();
    let result = p.stream(&req, &cancel, &mut sink).await;
    assert!(
        matches!(result, Err(ProviderError::Cancelled)),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

// ------------------------------------------------------------------- OpenAI

fn openai_text() -> String {
    openai_sse(&[
        json!({"id": "c1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}),
        json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": "Héllo"}, "finish_reason": null}]}),
        json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": ", wörld 🌍!"}, "finish_reason": null}]}),
        json!({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 25, "completion_tokens": 15, "total_tokens": 40}}),
    ])
}

fn openai_tool() -> String {
    openai_sse(&[
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": "call_abc", "type": "function", "function": {"name": "read_file", "arguments": ""}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"pa"}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "th\": \"src/"}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "lib.rs\"}"}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 30}}),
    ])
}

#[tokio::test]
async fn openai_streams_text() {
    let server = ModelServer::start(vec![Reply::sse(openai_text())])
        .await
        .expect("server");
    let (result, events) = run(&openai(&server)).await;
    assert_text(
        &result.expect("completion"),
        "Héllo, wörld 🌍!",
        Usage {
            input_tokens: 25,
            output_tokens: 15,
        },
    );
    assert_eq!(text_of(&events), "Héllo, wörld 🌍!");
}

#[tokio::test]
async fn openai_streams_a_tool_call_and_sends_the_right_request() {
    let server = ModelServer::start(vec![Reply::sse(openai_tool())])
        .await
        .expect("server");
    let (result, events) = run(&openai(&server)).await;
    assert_tool(
        &result.expect("completion"),
        None,
        "call_abc",
        Usage {
            input_tokens: 40,
            output_tokens: 30,
        },
    );
    assert_eq!(
        input_deltas(&events),
        ["{\"pa", "th\": \"src/", "lib.rs\"}"]
    );

    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/chat/completions")
    );
    assert_eq!(r.header("authorization"), Some("Bearer sk-openai-test"));
    assert_eq!(
        r.body,
        json!({
            "model": "gpt-test",
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 256,
            "temperature": 0.5,
            "tools": [{"type": "function", "function": {"name": "read_file", "description": "Reads a file", "parameters": schema()}}],
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "read a.txt"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "toolu_0", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}}]},
                {"role": "tool", "tool_call_id": "toolu_0", "content": "hello"},
            ],
        })
    );
}

#[tokio::test]
async fn openai_survives_split_frames() {
    let server = ModelServer::start(vec![
        Reply::sse(openai_tool().replace('\n', "\r\n")).split(7, Duration::from_millis(1)),
        Reply::sse(openai_text()).split(2, Duration::ZERO),
    ])
    .await
    .expect("server");
    let p = openai(&server);
    let (result, _) = run(&p).await;
    assert_tool(
        &result.expect("completion"),
        None,
        "call_abc",
        Usage {
            input_tokens: 40,
            output_tokens: 30,
        },
    );
    let (result, _) = run(&p).await;
    assert_eq!(
        result.expect("completion").message.text(),
        "Héllo, wörld 🌍!"
    );
}

#[tokio::test]
async fn openai_retries_429_then_succeeds() {
    let server = ModelServer::start(vec![
        Reply::error(
            429,
            &json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}),
        )
        .header("retry-after", "0"),
        Reply::sse(openai_text()),
    ])
    .await
    .expect("server");
    let (result, _) = run(&openai(&server)).await;
    assert_eq!(
        result.expect("completion").message.text(),
        "Héllo, wörld 🌍!"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn openai_401_is_surfaced_and_not_retried() {
    let msg = "Incorrect API key provided: sk-opena***test. You can find your API key at https://platform.openai.com/account/api-keys.";
    let server = ModelServer::start(vec![Reply::error(
        401,
        &json!({"error": {"message": msg, "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}),
    )])
    .await
    .expect("server");
    let (result, _) = run(&openai(&server)).await;
    match result {
        Err(ProviderError::Http {
            status, message, ..
        }) => {
            assert_eq!(status, 401);
            assert_eq!(message, msg);
        }
        other => panic!("expected HTTP 401, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn retries_give_up_after_max_attempts() {
    let busy =
        || Reply::error(503, &json!({"error": {"message": "busy"}})).header("retry-after", "0");
    let server = ModelServer::start(vec![busy(), busy(), busy(), busy()])
        .await
        .expect("server");
    let (result, _) = run(&openai(&server)).await;
    match result {
        Err(ProviderError::Unavailable {
            status,
            attempts,
            message,
            ..
        }) => {
            assert_eq!((status, attempts, message.as_str()), (503, 3, "busy"));
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 3);
}

// ------------------------------------------------------------------- Ollama

fn ollama_text() -> String {
    ndjson(&[
        json!({"model": "llama-test", "message": {"role": "assistant", "content": "Héllo"}, "done": false}),
        json!({"model": "llama-test", "message": {"role": "assistant", "content": ", wörld 🌍!"}, "done": false}),
        json!({"model": "llama-test", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 25, "eval_count": 15}),
    ])
}

fn ollama_tool() -> String {
    ndjson(&[
        json!({"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "src/lib.rs"}}}]}, "done": false}),
        json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 40, "eval_count": 30}),
    ])
}

#[tokio::test]
async fn ollama_streams_text() {
    let server = ModelServer::start(vec![Reply::ndjson(ollama_text())])
        .await
        .expect("server");
    let (result, events) = run(&ollama(&server)).await;
    assert_text(
        &result.expect("completion"),
        "Héllo, wörld 🌍!",
        Usage {
            input_tokens: 25,
            output_tokens: 15,
        },
    );
    assert_eq!(text_of(&events), "Héllo, wörld 🌍!");
}

#[tokio::test]
async fn ollama_streams_a_tool_call_and_sends_the_right_request() {
    let server = ModelServer::start(vec![Reply::ndjson(ollama_tool())])
        .await
        .expect("server");
    let (result, events) = run(&ollama(&server)).await;
    assert_tool(
        &result.expect("completion"),
        None,
        "call_0",
        Usage {
            input_tokens: 40,
            output_tokens: 30,
        },
    );
    assert_eq!(input_deltas(&events), ["{\"path\":\"src/lib.rs\"}"]);

    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/api/chat"));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(
        r.body,
        json!({
            "model": "llama-test",
            "stream": true,
            "options": {"num_predict": 256, "temperature": 0.5},
            "tools": [{"type": "function", "function": {"name": "read_file", "description": "Reads a file", "parameters": schema()}}],
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "read a.txt"},
                {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "a.txt"}}}]},
                {"role": "tool", "content": "hello", "tool_name": "read_file"},
            ],
        })
    );
}

#[tokio::test]
async fn ollama_survives_split_frames() {
    let server = ModelServer::start(vec![
        Reply::ndjson(ollama_text()).split(5, Duration::from_millis(1)),
        Reply::ndjson(ollama_tool()).split(1, Duration::ZERO),
    ])
    .await
    .expect("server");
    let p = ollama(&server);
    let (result, _) = run(&p).await;
    assert_eq!(
        result.expect("completion").message.text(),
        "Héllo, wörld 🌍!"
    );
    let (result, _) = run(&p).await;
    assert_tool(
        &result.expect("completion"),
        None,
        "call_0",
        Usage {
            input_tokens: 40,
            output_tokens: 30,
        },
    );
}

#[tokio::test]
async fn ollama_retries_429_then_succeeds() {
    let server = ModelServer::start(vec![
        Reply::error(429, &json!({"error": "too many requests"})).header("retry-after", "0"),
        Reply::ndjson(ollama_text()),
    ])
    .await
    .expect("server");
    let (result, _) = run(&ollama(&server)).await;
    assert_eq!(
        result.expect("completion").message.text(),
        "Héllo, wörld 🌍!"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn ollama_404_is_surfaced_and_not_retried() {
    let server = ModelServer::start(vec![Reply::error(
        404,
        &json!({"error": "model \"llama-test\" not found, try pulling it first"}),
    )])
    .await
    .expect("server");
    let (result, _) = run(&ollama(&server)).await;
    match result {
        Err(ProviderError::Http {
            status, message, ..
        }) => {
            assert_eq!(status, 404);
            assert_eq!(
                message,
                "model \"llama-test\" not found, try pulling it first"
            );
        }
        other => panic!("expected HTTP 404, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn ollama_401_is_surfaced_and_not_retried() {
    let server = ModelServer::start(vec![Reply::error(401, &json!({"error": "unauthorized"}))])
        .await
        .expect("server");
    let (result, _) = run(&ollama(&server)).await;
    assert!(
        matches!(&result, Err(ProviderError::Http { status: 401, message, .. }) if message == "unauthorized"),
        "{result:?}"
    );
    assert_eq!(server.requests().len(), 1);
}
