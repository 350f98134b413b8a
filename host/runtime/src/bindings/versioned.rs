//! One handle per export interface over every contract version: the export
//! indices found at load, and the loaded export, whose calls take and return
//! the latest types whatever version the component was built against.

use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

use super::types::{Finding, HookEvent, HookResult, HookSubscription, SkillError, ToolSpec};
use super::v0_1_0::exports::agent::skill as old;
use super::{hooks, prompt, scanner, tool, transform, workflow};
use crate::contract::Version;
use crate::state::HostState;

/// Defines `$indices` (found at load) and `$guest` (loaded in an instance)
/// for export interface `$m`, one case per contract version.
macro_rules! versioned {
    ($indices:ident, $guest:ident, $m:ident) => {
        #[derive(Clone)]
        pub(crate) enum $indices {
            Latest($m::GuestIndices),
            V0_1_0(old::$m::GuestIndices),
        }

        pub(crate) enum $guest {
            Latest($m::Guest),
            V0_1_0(old::$m::Guest),
        }

        impl $indices {
            /// Finds the export's functions in a component of `version`.
            pub(crate) fn new(
                pre: &InstancePre<HostState>,
                version: Version,
            ) -> wasmtime::Result<$indices> {
                Ok(match version {
                    Version::V0_1_0 => $indices::V0_1_0(old::$m::GuestIndices::new(pre)?),
                    Version::V0_2_0 => $indices::Latest($m::GuestIndices::new(pre)?),
                })
            }

            /// The export in `instance`.
            pub(crate) fn load(
                &self,
                store: &mut Store<HostState>,
                instance: &Instance,
            ) -> wasmtime::Result<$guest> {
                Ok(match self {
                    $indices::Latest(i) => $guest::Latest(i.load(store, instance)?),
                    $indices::V0_1_0(i) => $guest::V0_1_0(i.load(store, instance)?),
                })
            }
        }
    };
}

versioned!(ToolIndices, ToolGuest, tool);
versioned!(PromptIndices, PromptGuest, prompt);
versioned!(WorkflowIndices, WorkflowGuest, workflow);
versioned!(ScannerIndices, ScannerGuest, scanner);
versioned!(TransformIndices, TransformGuest, transform);
versioned!(HooksIndices, HooksGuest, hooks);

type Store_ = Store<HostState>;

fn all<A: Into<B>, B>(v: Vec<A>) -> Vec<B> {
    v.into_iter().map(Into::into).collect()
}

impl ToolGuest {
    pub(crate) async fn call_list_tools(&self, s: &mut Store_) -> wasmtime::Result<Vec<ToolSpec>> {
        match self {
            ToolGuest::Latest(g) => g.call_list_tools(s).await,
            ToolGuest::V0_1_0(g) => g.call_list_tools(s).await,
        }
    }

    pub(crate) async fn call_call_tool(
        &self,
        s: &mut Store_,
        name: &str,
        input: &str,
    ) -> wasmtime::Result<Result<String, SkillError>> {
        // The generated functions take the `json` alias by `&String`.
        let input = input.to_string();
        match self {
            ToolGuest::Latest(g) => g.call_call_tool(s, name, &input).await,
            ToolGuest::V0_1_0(g) => g.call_call_tool(s, name, &input).await,
        }
    }
}

impl PromptGuest {
    pub(crate) async fn call_fragments(
        &self,
        s: &mut Store_,
        context: &prompt::PromptContext,
    ) -> wasmtime::Result<Vec<prompt::PromptFragment>> {
        match self {
            PromptGuest::Latest(g) => g.call_fragments(s, context).await,
            PromptGuest::V0_1_0(g) => Ok(all(g.call_fragments(s, &context.clone().into()).await?)),
        }
    }
}

impl WorkflowGuest {
    pub(crate) async fn call_list_workflows(
        &self,
        s: &mut Store_,
    ) -> wasmtime::Result<Vec<workflow::WorkflowSpec>> {
        match self {
            WorkflowGuest::Latest(g) => g.call_list_workflows(s).await,
            WorkflowGuest::V0_1_0(g) => Ok(all(g.call_list_workflows(s).await?)),
        }
    }

    pub(crate) async fn call_run_workflow(
        &self,
        s: &mut Store_,
        name: &str,
        input: &str,
    ) -> wasmtime::Result<Result<String, SkillError>> {
        // The generated functions take the `json` alias by `&String`.
        let input = input.to_string();
        match self {
            WorkflowGuest::Latest(g) => g.call_run_workflow(s, name, &input).await,
            WorkflowGuest::V0_1_0(g) => g.call_run_workflow(s, name, &input).await,
        }
    }
}

impl ScannerGuest {
    pub(crate) async fn call_list_scanners(
        &self,
        s: &mut Store_,
    ) -> wasmtime::Result<Vec<scanner::ScannerSpec>> {
        match self {
            ScannerGuest::Latest(g) => g.call_list_scanners(s).await,
            ScannerGuest::V0_1_0(g) => Ok(all(g.call_list_scanners(s).await?)),
        }
    }

    pub(crate) async fn call_scan(
        &self,
        s: &mut Store_,
        name: &str,
        target: &scanner::ScanTarget,
    ) -> wasmtime::Result<Result<Vec<Finding>, SkillError>> {
        match self {
            ScannerGuest::Latest(g) => g.call_scan(s, name, target).await,
            ScannerGuest::V0_1_0(g) => g.call_scan(s, name, &target.clone().into()).await,
        }
    }
}

impl TransformGuest {
    pub(crate) async fn call_apply(
        &self,
        s: &mut Store_,
        output: &str,
        context: &transform::TransformContext,
    ) -> wasmtime::Result<Result<String, SkillError>> {
        match self {
            TransformGuest::Latest(g) => g.call_apply(s, output, context).await,
            TransformGuest::V0_1_0(g) => g.call_apply(s, output, &context.clone().into()).await,
        }
    }
}

impl HooksGuest {
    pub(crate) async fn call_subscriptions(
        &self,
        s: &mut Store_,
    ) -> wasmtime::Result<Vec<HookSubscription>> {
        match self {
            HooksGuest::Latest(g) => g.call_subscriptions(s).await,
            HooksGuest::V0_1_0(g) => g.call_subscriptions(s).await,
        }
    }

    pub(crate) async fn call_on_event(
        &self,
        s: &mut Store_,
        event: &HookEvent,
    ) -> wasmtime::Result<Result<HookResult, SkillError>> {
        match self {
            HooksGuest::Latest(g) => g.call_on_event(s, event).await,
            HooksGuest::V0_1_0(g) => g.call_on_event(s, event).await,
        }
    }
}
