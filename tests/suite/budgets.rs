//! Per-skill and per-turn budgets of the costly imports (`llm`, `exec`,
//! `http`). The hostile skill (`tests/guests/budget`) spends one kind of use
//! in a loop, in six calls running at the same time in one turn; the budget
//! is shared by all of them, so exactly the budget reaches the model server,
//! the disk or the HTTP server, and every use beyond it is refused with a
//! message naming the budget, its size and the config key, and audited.

use std::sync::Arc;

use agent_core::ProviderLlm;
use agent_providers::{AnthropicProvider, ProviderConfig};
use agent_runtime::{Budget, BudgetLimits, CallContext, Skill, UseLimit};
use agent_tests::model_server::{ModelServer, Reply, anthropic_sse};
use serde_json::{Value, json};

use crate::common::{Harness, guest};

/// A context sharing `h`'s grants, with `limits` and, when given, a model.
fn context(h: &Harness, limits: BudgetLimits, model: Option<&ModelServer>) -> Arc<CallContext> {
    let mut ctx =
        CallContext::new(h.project(), "cli", h.ctx.authorizer.clone()).expect("call context");
    ctx.budget = Arc::new(Budget::new(limits));
    if let Some(server) = model {
        let provider = AnthropicProvider::new(
            ProviderConfig::anthropic("claude-test")
                .base_url(server.url())
                .api_key("sk-ant-test"),
        )
        .expect("provider");
        ctx.llm = Some(Arc::new(ProviderLlm::new(
            Arc::new(provider),
            "claude-test",
            256,
        )));
    }
    Arc::new(ctx)
}

/// The spending skill `name`: its component imports `llm`, `exec` and
/// `http`, so it declares all three (each test grants only the one it uses);
/// `touch` may run, `host` may be fetched.
fn spender(h: &Harness, name: &str, host: &str) -> Skill {
    let extra = format!(
        "permissions: [llm:call, shell:exec, net:fetch]\nexec: [touch]\nhosts: [\"{host}\"]\n"
    );
    h.load_guest(&guest("guest-budget"), name, &extra)
        .expect("the budget guest loads")
}

/// A host no test serves.
const NO_HOST: &str = "http://127.0.0.1:9";

/// Calls `tool` of `skill` in `ctx`; the guest's `ok=N refused=M last=…`.
async fn spend(
    h: &Harness,
    ctx: &Arc<CallContext>,
    skill: &Skill,
    tool: &str,
    input: Value,
) -> String {
    match h
        .runtime
        .call_tool(skill, ctx, tool, &input.to_string())
        .await
    {
        Ok((Ok(out), _)) => out.text,
        other => panic!("`{tool}` should answer, got {other:?}"),
    }
}

/// Sums `ok=` and `refused=` over the answers; returns the refusals' texts.
fn tally(answers: &[String]) -> (u32, u32, Vec<String>) {
    let (mut ok, mut refused, mut last) = (0, 0, Vec::new());
    for a in answers {
        let mut parts = a.splitn(3, ' ');
        let num = |p: Option<&str>, key: &str| -> u32 {
            p.and_then(|p| p.strip_prefix(key))
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("unexpected answer {a}"))
        };
        ok += num(parts.next(), "ok=");
        refused += num(parts.next(), "refused=");
        let l = parts.next().and_then(|l| l.strip_prefix("last=")).unwrap();
        if !l.is_empty() {
            last.push(l.to_string());
        }
    }
    (ok, refused, last)
}

/// Six calls of `tool` at once, each with `input(i)`.
async fn six_at_once(
    h: &Harness,
    ctx: &Arc<CallContext>,
    skill: &Skill,
    tool: &str,
    input: impl Fn(usize) -> Value,
) -> Vec<String> {
    let (a, b, c, d, e, f) = tokio::join!(
        spend(h, ctx, skill, tool, input(0)),
        spend(h, ctx, skill, tool, input(1)),
        spend(h, ctx, skill, tool, input(2)),
        spend(h, ctx, skill, tool, input(3)),
        spend(h, ctx, skill, tool, input(4)),
        spend(h, ctx, skill, tool, input(5)),
    );
    vec![a, b, c, d, e, f]
}

fn answer(text: &str) -> Reply {
    Reply::sse(anthropic_sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}}),
        json!({"type": "message_stop"}),
    ]))
}

fn plain(body: &str) -> Reply {
    Reply {
        status: 200,
        headers: vec![("content-type".into(), "text/plain".into())],
        body: body.as_bytes().to_vec(),
        split: None,
        cut_at: None,
    }
}

fn refusals(h: &Harness, skill: &str, capability: &str) -> usize {
    h.audit_of(skill)
        .iter()
        .filter(|(c, _, d)| c == capability && d == "refused: budget spent")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_parallel_calls_share_one_model_budget_per_skill() {
    // Before: each call had its own limit of 8 model requests, so one turn
    // of six calls asking 3 times each sent all 18 requests to the model.
    let server = ModelServer::start((0..30).map(|_| answer("ok")).collect())
        .await
        .expect("model server");
    let h = Harness::new(&["llm:call"]);
    let skill = spender(&h, "spender", NO_HOST);
    let ctx = context(&h, BudgetLimits::default(), Some(&server));

    let answers = six_at_once(&h, &ctx, &skill, "llm-loop", |_| json!({"times": 3})).await;
    let (ok, refused, last) = tally(&answers);
    assert_eq!((ok, refused), (5, 13), "{answers:?}");
    assert_eq!(
        server.requests().len(),
        5,
        "exactly the budget reached the model"
    );
    for l in &last {
        assert_eq!(
            l,
            "limit exceeded: skill `spender` has used its budget of 5 model requests this turn \
             (raise `skills.max_llm_calls_per_skill` in config.toml)"
        );
    }
    assert_eq!(refusals(&h, "spender", "llm:call"), 13);
    let used = ctx.budget.totals();
    assert_eq!((used[0].llm, used[0].refused), (5, 13), "{used:?}");

    // The next turn has a budget again.
    ctx.budget.start_turn();
    let out = spend(&h, &ctx, &skill, "llm-loop", json!({"times": 2})).await;
    assert_eq!(out, "ok=2 refused=0 last=");
    assert_eq!(server.requests().len(), 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turn_budget_is_shared_by_every_skill() {
    let server = ModelServer::start((0..30).map(|_| answer("ok")).collect())
        .await
        .expect("model server");
    let h = Harness::new(&["llm:call"]);
    let first = spender(&h, "first", NO_HOST);
    let second = spender(&h, "second", NO_HOST);
    let limits = BudgetLimits {
        llm: UseLimit {
            per_skill: 4,
            per_turn: 6,
        },
        ..BudgetLimits::default()
    };
    let ctx = context(&h, limits, Some(&server));

    let answers = six_at_once(&h, &ctx, &first, "llm-loop", |_| json!({"times": 1})).await;
    assert_eq!(tally(&answers).0, 4, "{answers:?}");
    let out = spend(&h, &ctx, &second, "llm-loop", json!({"times": 3})).await;
    assert_eq!(
        out,
        "ok=2 refused=1 last=limit exceeded: the turn's budget of 6 model requests for all skills \
         is used up (raise `skills.max_llm_calls_per_turn` in config.toml)"
    );
    assert_eq!(server.requests().len(), 6);
    assert_eq!(refusals(&h, "second", "llm:call"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_parallel_calls_share_one_program_budget() {
    // Before: 32 programs per call, so six calls of 4 ran all 24.
    let h = Harness::new(&["shell:exec"]);
    let skill = spender(&h, "runner", NO_HOST);
    let ctx = context(&h, BudgetLimits::default(), None);

    let answers = six_at_once(
        &h,
        &ctx,
        &skill,
        "exec-loop",
        |i| json!({"program": "touch", "args": [format!("ran-{i}-{{n}}")], "times": 4}),
    )
    .await;
    let (ok, refused, last) = tally(&answers);
    assert_eq!((ok, refused), (10, 14), "{answers:?}");
    let ran = std::fs::read_dir(h.project())
        .expect("project")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("ran-"))
        })
        .count();
    assert_eq!(ran, 10, "exactly the budget of programs ran");
    assert!(
        last.iter().all(|l| l
            == "limit exceeded: skill `runner` has used its budget of 10 programs this turn \
                (raise `skills.max_shell_exec_per_skill` in config.toml)"),
        "{last:?}"
    );
    assert_eq!(refusals(&h, "runner", "shell:exec"), 14);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_parallel_calls_share_one_http_budget() {
    // Before: 32 requests per call, so six calls of 5 sent all 30.
    let server = ModelServer::start((0..40).map(|_| plain("hi")).collect())
        .await
        .expect("server");
    let h = Harness::new(&["net:fetch"]);
    let skill = spender(&h, "fetcher", server.url());
    let limits = BudgetLimits {
        http: UseLimit {
            per_skill: 7,
            per_turn: 60,
        },
        ..BudgetLimits::default()
    };
    let ctx = context(&h, limits, None);

    let answers = six_at_once(
        &h,
        &ctx,
        &skill,
        "http-loop",
        |_| json!({"url": server.url(), "times": 5}),
    )
    .await;
    let (ok, refused, last) = tally(&answers);
    assert_eq!((ok, refused), (7, 23), "{answers:?}");
    assert_eq!(
        server.requests().len(),
        7,
        "exactly the budget reached the server"
    );
    assert!(
        last.iter().all(|l| l
            == "limit exceeded: skill `fetcher` has used its budget of 7 HTTP requests this turn \
                (raise `skills.max_http_requests_per_skill` in config.toml)"),
        "{last:?}"
    );
    assert_eq!(refusals(&h, "fetcher", "net:fetch"), 23);
}
