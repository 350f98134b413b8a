//! `agent mcp`: list, add and remove MCP servers; start one (when granted) to show its tools
//! or resources. Listing never starts a server.

use std::path::{Path, PathBuf};

use agent_mcp::{McpError, Source};
use anyhow::{Context, Result, bail};
use clap::Subcommand;
use serde_json::json;

use crate::app::App;
use crate::cli::{Format, UsageError, exit};
use crate::mcp_servers;

/// `agent mcp ...`
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List MCP servers (config.toml's and the project's .mcp.json), what starting each needs
    /// and whether it is granted. Starts nothing.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Add a server to config.toml: `agent mcp add NAME -- PROGRAM ARGS...` (stdio) or
    /// `agent mcp add NAME --url URL` (streamable HTTP).
    Add {
        /// The server's name (letters, digits, `-`, `_`).
        name: String,
        /// A streamable-HTTP server's URL.
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// An HTTP header `NAME=VALUE` (`${VAR}` in VALUE is read from the environment when
        /// the server starts). Repeatable.
        #[arg(long = "header", value_name = "NAME=VALUE", requires = "url")]
        headers: Vec<String>,
        /// A variable passed to a stdio server from the agent's environment. Repeatable.
        #[arg(long = "env", value_name = "VAR")]
        env: Vec<String>,
        /// A stdio server's working directory (relative to the project).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The stdio server's program and arguments (after `--`).
        #[arg(last = true, value_name = "PROGRAM ARGS")]
        command: Vec<String>,
    },
    /// Remove a server from config.toml.
    Remove {
        /// The server's name.
        name: String,
    },
    /// Start a server (needs its grant) and list its tools with their input schemas.
    Tools {
        /// The server's name.
        name: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Start a server (needs its grant) and call one of its tools with a JSON input; prints
    /// the answer (exit 1 when the tool reports an error).
    Call {
        /// The server's name.
        name: String,
        /// The tool's name on the server.
        tool: String,
        /// The tool's input, a JSON object.
        #[arg(long, default_value = "{}")]
        input: String,
    },
    /// Start a server (needs its grant) and list its resources.
    Resources {
        /// The server's name.
        name: String,
    },
    /// Start a server (needs its grant) and print one resource (`agent run --mcp-resource
    /// SERVER:URI` attaches it as context).
    Read {
        /// The server's name.
        name: String,
        /// The resource's URI.
        uri: String,
    },
    /// Start a server (needs its grant) and list its prompts with their arguments.
    Prompts {
        /// The server's name.
        name: String,
    },
    /// Start a server (needs its grant) and print one prompt filled in (`agent run
    /// --mcp-prompt SERVER:PROMPT --mcp-arg NAME=VALUE` attaches it as context).
    Prompt {
        /// The server's name.
        name: String,
        /// The prompt's name.
        prompt: String,
        /// An argument: `NAME=VALUE` (repeatable).
        #[arg(long = "arg", value_name = "NAME=VALUE")]
        args: Vec<String>,
    },
}

pub async fn run(app: &mut App, cmd: McpCommand) -> Result<u8> {
    match cmd {
        McpCommand::List { format } => list(app, format),
        McpCommand::Add {
            name,
            url,
            headers,
            env,
            cwd,
            command,
        } => add(app, &name, url, &headers, &env, cwd, &command),
        McpCommand::Remove { name } => remove(app, &name),
        McpCommand::Tools { name, format } => tools(app, &name, format).await,
        McpCommand::Call { name, tool, input } => call(app, &name, &tool, &input).await,
        McpCommand::Resources { name } => resources(app, &name).await,
        McpCommand::Read { name, uri } => read(app, &name, &uri).await,
        McpCommand::Prompts { name } => prompts(app, &name).await,
        McpCommand::Prompt { name, prompt, args } => {
            let arguments = crate::mcp_context::prompt_arguments("--arg", &args)?;
            let hub = mcp_servers::hub(app)?;
            let result = hub.get_prompt(&name, &prompt, &arguments).await;
            hub.shutdown().await;
            match result {
                Ok(text) => {
                    println!("{text}");
                    Ok(exit::OK)
                }
                Err(e) => report(e),
            }
        }
    }
}

fn list(app: &mut App, format: Format) -> Result<u8> {
    let specs = mcp_servers::specs(app)?;
    let mut rows = Vec::new();
    for s in &specs {
        let (permission, scope) = s.permission();
        rows.push((
            s,
            format!("{permission}:{scope}"),
            mcp_servers::grant_status(app, s)?,
        ));
    }
    if format == Format::Json {
        let v: Vec<_> = rows
            .iter()
            .map(|(s, needs, status)| {
                json!({
                    "name": s.name,
                    "skill": s.skill_name(),
                    "transport": s.kind(),
                    "target": s.target(),
                    "source": source_text(&s.source),
                    "needs": needs,
                    "grant": status,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(exit::OK);
    }
    if rows.is_empty() {
        println!(
            "no MCP servers (add one with `agent mcp add NAME -- PROGRAM ARGS...`, or list them \
             in the project's .mcp.json)"
        );
        return Ok(exit::OK);
    }
    let mut table = vec![[
        "NAME".to_string(),
        "TRANSPORT".into(),
        "SOURCE".into(),
        "NEEDS".into(),
        "GRANT".into(),
        "TARGET".into(),
    ]];
    for (s, needs, status) in rows {
        table.push([
            s.name.clone(),
            s.kind().into(),
            source_text(&s.source),
            needs,
            status,
            s.target(),
        ]);
    }
    crate::table::print_table(&table);
    Ok(exit::OK)
}

fn source_text(source: &Source) -> String {
    match source {
        Source::Config => "config.toml".into(),
        Source::ProjectFile(p) => p.display().to_string(),
    }
}

/// A refusal exits 4 (naming the `--allow` value), other failures 1.
fn report(e: McpError) -> Result<u8> {
    eprintln!("error: {e}");
    Ok(if e.is_denied() {
        exit::DENIED
    } else {
        exit::FAILURE
    })
}

async fn tools(app: &mut App, name: &str, format: Format) -> Result<u8> {
    let hub = mcp_servers::hub(app)?;
    let result = hub.tools(name).await;
    hub.shutdown().await;
    let tools = match result {
        Ok(t) => t,
        Err(e) => return report(e),
    };
    if format == Format::Json {
        let v: Vec<_> = tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(exit::OK);
    }
    for t in &tools {
        println!(
            "{}  {}",
            t.name,
            t.description.lines().next().unwrap_or_default()
        );
        println!("  input: {}", serde_json::to_string(&t.input_schema)?);
    }
    Ok(exit::OK)
}

async fn call(app: &mut App, name: &str, tool: &str, input: &str) -> Result<u8> {
    let input: serde_json::Value =
        agent_bounded::parse_json(input, "--input", agent_bounded::Limits::MESSAGE)
            .map_err(|e| UsageError(format!("--input is not JSON: {e}")))?;
    if !input.is_object() {
        return Err(UsageError("--input must be a JSON object".into()).into());
    }
    let hub = mcp_servers::hub(app)?;
    let result = hub.call(name, tool, input).await;
    hub.shutdown().await;
    match result {
        Ok(out) if out.is_error => {
            eprintln!("error: {name} {tool} reported an error: {}", out.text);
            Ok(exit::FAILURE)
        }
        Ok(out) => {
            println!("{}", out.text);
            Ok(exit::OK)
        }
        Err(e) => report(e),
    }
}

async fn resources(app: &mut App, name: &str) -> Result<u8> {
    let hub = mcp_servers::hub(app)?;
    let result = hub.resources(name).await;
    hub.shutdown().await;
    match result {
        Ok(list) => {
            let mut table = vec![["URI".to_string(), "NAME".into(), "DESCRIPTION".into()]];
            table.extend(list.into_iter().map(|(u, n, d)| [u, n, d]));
            crate::table::print_table(&table);
            Ok(exit::OK)
        }
        Err(e) => report(e),
    }
}

async fn prompts(app: &mut App, name: &str) -> Result<u8> {
    let hub = mcp_servers::hub(app)?;
    let result = hub.prompts(name).await;
    hub.shutdown().await;
    match result {
        Ok(list) => {
            let mut table = vec![[
                "PROMPT".to_string(),
                "ARGUMENTS".into(),
                "DESCRIPTION".into(),
            ]];
            table.extend(list.into_iter().map(|p| {
                let args: Vec<String> = p
                    .arguments
                    .iter()
                    .map(|(n, required)| {
                        if *required {
                            n.clone()
                        } else {
                            format!("[{n}]")
                        }
                    })
                    .collect();
                [p.name, args.join(" "), p.description]
            }));
            crate::table::print_table(&table);
            Ok(exit::OK)
        }
        Err(e) => report(e),
    }
}

async fn read(app: &mut App, name: &str, uri: &str) -> Result<u8> {
    let hub = mcp_servers::hub(app)?;
    let result = hub.read_resource(name, uri).await;
    hub.shutdown().await;
    match result {
        Ok(text) => {
            println!("{text}");
            Ok(exit::OK)
        }
        Err(e) => report(e),
    }
}

fn quote(s: &str) -> String {
    // A JSON string is a TOML basic string.
    serde_json::to_string(s).unwrap_or_default()
}

fn add(
    app: &mut App,
    name: &str,
    url: Option<String>,
    headers: &[String],
    env: &[String],
    cwd: Option<PathBuf>,
    command: &[String],
) -> Result<u8> {
    agent_config::check_server_name(name).map_err(UsageError)?;
    if let Some(bad) = env.iter().find(|v| !agent_config::is_var_name(v)) {
        return Err(UsageError(format!("--env {bad}: not a variable name")).into());
    }
    let config = app.config()?;
    if config.mcp.servers.contains_key(name) {
        return Err(UsageError(format!(
            "an MCP server named `{name}` is already in config.toml; `agent mcp remove {name}` first"
        ))
        .into());
    }
    let mut text = format!("\n[mcp.servers.{name}]\n");
    match (&url, command.split_first()) {
        (Some(url), None) => {
            text.push_str(&format!("url = {}\n", quote(url)));
            if !headers.is_empty() {
                text.push_str("headers = { ");
                let mut items = Vec::new();
                for h in headers {
                    let (k, v) = h
                        .split_once('=')
                        .ok_or_else(|| UsageError(format!("--header {h}: expected NAME=VALUE")))?;
                    items.push(format!("{} = {}", quote(k.trim()), quote(v.trim())));
                }
                text.push_str(&items.join(", "));
                text.push_str(" }\n");
            }
        }
        (None, Some((program, args))) => {
            text.push_str(&format!("command = {}\n", quote(program)));
            let args: Vec<String> = args.iter().map(|a| quote(a)).collect();
            text.push_str(&format!("args = [{}]\n", args.join(", ")));
        }
        _ => {
            return Err(UsageError(
                "give the server's program after `--` (agent mcp add NAME -- PROGRAM ARGS...) \
                 or --url URL"
                    .into(),
            )
            .into());
        }
    }
    if !env.is_empty() {
        let vars: Vec<String> = env.iter().map(|v| quote(v)).collect();
        text.push_str(&format!("env = [{}]\n", vars.join(", ")));
    }
    if let Some(cwd) = cwd {
        text.push_str(&format!("cwd = {}\n", quote(&cwd.display().to_string())));
    }
    let path = app.paths.config_file();
    let before = read_config(&path)?;
    write_checked(&path, &before, &format!("{before}{text}"))?;
    let written = agent_config::Config::load(&path, |k| std::env::var(k).ok())?;
    let spec = agent_mcp::servers(&written.mcp, &app.project_root)?
        .into_iter()
        .find(|s| s.name == name)
        .context("the server just added")?;
    println!(
        "added MCP server `{name}` to {}; it starts only when granted: --allow {}",
        path.display(),
        spec.allow_flag()
    );
    Ok(exit::OK)
}

fn remove(app: &mut App, name: &str) -> Result<u8> {
    let path = app.paths.config_file();
    let before = read_config(&path)?;
    let header = format!("[mcp.servers.{name}]");
    let sub = format!("[mcp.servers.{name}.");
    let mut out = String::new();
    let mut skipping = false;
    let mut found = false;
    for line in before.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            skipping = t == header || t.starts_with(&sub);
            found |= skipping;
        }
        if !skipping {
            out.push_str(line);
        }
    }
    if !found {
        let specs = mcp_servers::specs(app)?;
        if let Some(s) = specs.iter().find(|s| s.name == name)
            && let Source::ProjectFile(f) = &s.source
        {
            bail!(
                "MCP server `{name}` comes from {}, not config.toml: edit that file",
                f.display()
            );
        }
        return Err(UsageError(format!(
            "no `[mcp.servers.{name}]` table in {}; see `agent mcp list`",
            path.display()
        ))
        .into());
    }
    write_checked(
        &path,
        &before,
        out.trim_end_matches('\n').to_string().as_str(),
    )?;
    println!("removed MCP server `{name}` from {}", path.display());
    Ok(exit::OK)
}

fn read_config(path: &Path) -> Result<String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Writes `after`, then reads it back as configuration; if that fails, `before` is put back
/// and the error names what was wrong.
fn write_checked(path: &Path, before: &str, after: &str) -> Result<()> {
    let mut after = after.to_string();
    if !after.is_empty() && !after.ends_with('\n') {
        after.push('\n');
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, &after).with_context(|| format!("writing {}", path.display()))?;
    if let Err(e) = agent_config::Config::load(path, |k| std::env::var(k).ok()) {
        std::fs::write(path, before).with_context(|| format!("restoring {}", path.display()))?;
        bail!(
            "the change would make {} invalid ({e}); nothing was changed",
            path.display()
        );
    }
    Ok(())
}
