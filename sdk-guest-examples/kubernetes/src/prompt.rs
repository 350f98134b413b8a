//! Prompt fragments: the cluster's conventions and safe operation.

use agent_skill_sdk::config;
use agent_skill_sdk::wit::prompt_skill::exports::agent::skill::prompt::{
    Guest, PromptContext, PromptFragment,
};

pub struct Prompt;

impl Guest for Prompt {
    fn fragments(_context: PromptContext) -> Vec<PromptFragment> {
        let namespace = config::get::<String>("default_namespace")
            .ok()
            .flatten()
            .unwrap_or_else(|| "default".to_string());
        let context = config::get::<String>("context").ok().flatten();
        let mut cluster = format!(
            "The default namespace is `{namespace}`: the kubectl tools use it when no namespace is given."
        );
        match context {
            Some(c) => cluster.push_str(&format!(" Every kubectl call uses the context `{c}`.")),
            None => cluster.push_str(" kubectl uses the kubeconfig's current context."),
        }
        vec![
            PromptFragment {
                title: "Kubernetes cluster".to_string(),
                content: cluster,
                priority: 10,
            },
            PromptFragment {
                title: "Safe Kubernetes operations".to_string(),
                content: "Look before you change: use kubectl_get, kubectl_describe and \
                          kubectl_logs to find the cause first. Before kubectl_apply, run it with \
                          `dry_run: true` and show the user what would change; the real apply \
                          needs the user's approval. Never delete resources or scale to zero \
                          unless the user asked for it. Pin image tags (no `latest`), set resource \
                          requests and limits, and run containers as non-root."
                    .to_string(),
                priority: 20,
            },
        ]
    }
}
