//! The shared WIT types (`agent:skill/types`), re-exported for skills that
//! implement other exports (scanners and hooks build [`Finding`]s and
//! [`HookResult`]s) or call [`llm`](crate::llm) with whole conversations.

pub use crate::host::types::{
    CapabilityError, Confidence, Finding, HookEvent, HookPhase, HookResult, HookSubscription,
    Location, LogLevel, Message, Role, Severity, SkillError, ToolCall, ToolResult, ToolSpec,
};
