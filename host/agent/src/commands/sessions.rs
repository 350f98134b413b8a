//! `agent sessions`: recorded sessions.

use agent_core::history_from_events;
use agent_providers::{ContentBlock, Role};
use anyhow::Result;

use crate::app::App;
use crate::cli::{Format, SessionsCommand, exit};

pub fn run(app: &mut App, cmd: SessionsCommand) -> Result<u8> {
    let store = app.store()?;
    match cmd {
        SessionsCommand::List { format } => {
            let all = store.sessions()?;
            match format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&all)?),
                Format::Text => {
                    if all.is_empty() {
                        println!("no sessions");
                    }
                    for m in &all {
                        println!(
                            "{}  {:<11} {:>3} turns  {}/{}  {}",
                            m.id,
                            format!("{:?}", m.status).to_lowercase(),
                            m.turns,
                            m.provider,
                            m.model,
                            m.title
                        );
                    }
                }
            }
            Ok(exit::OK)
        }
        SessionsCommand::Show { id, format } => {
            let meta = store.find_session(&id)?;
            let events: Vec<serde_json::Value> = store
                .events(&meta.id)?
                .into_iter()
                .map(|(_, v)| v)
                .collect();
            match format {
                Format::Json => {
                    let v = serde_json::json!({"session": meta, "events": events});
                    println!("{}", serde_json::to_string_pretty(&v)?);
                }
                Format::Text => {
                    println!("session   {}", meta.id);
                    println!("title     {}", meta.title);
                    println!("project   {}", meta.project_root.display());
                    println!("model     {}/{}", meta.provider, meta.model);
                    println!("status    {:?}", meta.status);
                    println!("turns     {}", meta.turns);
                    println!(
                        "usage     {} input / {} output tokens",
                        meta.usage.input_tokens, meta.usage.output_tokens
                    );
                    println!("created   {}", meta.created_at);
                    println!("updated   {}", meta.updated_at);
                    for m in history_from_events(&events) {
                        let who = match m.role {
                            Role::User => "user",
                            Role::Assistant => "assistant",
                        };
                        for b in &m.content {
                            match b {
                                ContentBlock::Text(t) => println!("\n[{who}] {t}"),
                                ContentBlock::ToolUse { name, input, .. } => {
                                    println!("\n[{who}] tool call {name} {input}")
                                }
                                ContentBlock::ToolResult {
                                    content, is_error, ..
                                } => {
                                    let tag = if *is_error {
                                        "tool error"
                                    } else {
                                        "tool result"
                                    };
                                    let short: String = content.chars().take(400).collect();
                                    println!("\n[{tag}] {short}");
                                }
                            }
                        }
                    }
                }
            }
            Ok(exit::OK)
        }
        SessionsCommand::Delete { id } => {
            let meta = store.find_session(&id)?;
            store.delete_session(&meta.id)?;
            println!("deleted session {}", meta.id);
            Ok(exit::OK)
        }
    }
}
