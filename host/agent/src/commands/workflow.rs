//! `agent workflow list|run`: workflow skills' procedures from the command
//! line.

use agent_bounded::Limits;
use std::sync::Arc;

use agent_runtime::{ExportKind, Skill, SkillError, WorkflowSpec};
use anyhow::{Result, bail};

use crate::app::App;
use crate::assembly::workflow_context;
use crate::cli::{UsageError, WorkflowCommand, WorkflowRunArgs, exit};

pub async fn run(app: &mut App, cmd: WorkflowCommand) -> Result<u8> {
    match cmd {
        WorkflowCommand::List => list(app).await,
        WorkflowCommand::Run(args) => run_one(app, args).await,
    }
}

/// Every workflow of every loaded workflow skill, with its skill's index.
async fn workflows(app: &mut App, skills: &[Skill]) -> Result<Vec<(usize, WorkflowSpec)>> {
    let ctx = app.call_context("cli")?;
    let runtime = app.runtime()?.clone();
    let mut out = Vec::new();
    for (i, skill) in skills.iter().enumerate() {
        if !skill.exports(ExportKind::Workflow) {
            continue;
        }
        match runtime.list_workflows(skill, &ctx).await {
            Ok(specs) => out.extend(specs.into_iter().map(|s| (i, s))),
            Err(e) => eprintln!("warning: listing the workflows of `{}`: {e}", skill.name()),
        }
    }
    Ok(out)
}

async fn list(app: &mut App) -> Result<u8> {
    let skills = app.load_all()?;
    let found = workflows(app, &skills).await?;
    if found.is_empty() {
        println!("no workflow skills are loaded (see `agent skill list`)");
        return Ok(exit::OK);
    }
    for (i, spec) in &found {
        println!("{}/{}\t{}", skills[*i].name(), spec.name, spec.description);
    }
    Ok(exit::OK)
}

fn read_input(args: &WorkflowRunArgs) -> Result<String> {
    let text = match (&args.input, &args.input_file) {
        (Some(t), _) => t.clone(),
        (None, Some(f)) => std::fs::read_to_string(f)
            .map_err(|e| UsageError(format!("--input-file {}: {e}", f.display())))?,
        (None, None) => "{}".to_string(),
    };
    let flag = if args.input.is_some() {
        "--input".to_string()
    } else if let Some(f) = &args.input_file {
        format!("--input-file {}", f.display())
    } else {
        "--input".to_string()
    };
    match agent_bounded::parse_json::<serde_json::Value>(&text, &flag, Limits::MESSAGE) {
        Ok(v) if v.is_object() => Ok(text),
        Ok(_) => Err(UsageError(format!("{flag}: expected a JSON object")).into()),
        Err(agent_bounded::Error::Limit(e)) => Err(UsageError(e.to_string()).into()),
        Err(agent_bounded::Error::Parse(e)) => {
            Err(UsageError(format!("{flag}: not JSON: {e}")).into())
        }
    }
}

async fn run_one(app: &mut App, args: WorkflowRunArgs) -> Result<u8> {
    let input = read_input(&args)?;
    let skills = Arc::new(app.load_all()?);
    let found = workflows(app, &skills).await?;
    let (skill_filter, name) = match args.name.split_once('/') {
        Some((s, n)) => (Some(s), n),
        None => (None, args.name.as_str()),
    };
    let matches: Vec<&(usize, WorkflowSpec)> = found
        .iter()
        .filter(|(i, s)| s.name == name && skill_filter.is_none_or(|f| skills[*i].name() == f))
        .collect();
    let (index, spec) = match matches.as_slice() {
        [one] => (one.0, &one.1),
        [] => {
            let known: Vec<String> = found
                .iter()
                .map(|(i, s)| format!("{}/{}", skills[*i].name(), s.name))
                .collect();
            return Err(UsageError(format!(
                "no workflow `{}` (workflows: {})",
                args.name,
                if known.is_empty() {
                    "none loaded".to_string()
                } else {
                    known.join(", ")
                }
            ))
            .into());
        }
        many => {
            let names: Vec<String> = many
                .iter()
                .map(|(i, s)| format!("{}/{}", skills[*i].name(), s.name))
                .collect();
            return Err(UsageError(format!(
                "several skills offer workflow `{name}`: name one of {}",
                names.join(", ")
            ))
            .into());
        }
    };
    if let Err(problem) = agent_runtime::schema::check_input(&spec.input_schema, &input) {
        return Err(UsageError(format!("--input for `{}`: {problem}", args.name)).into());
    }

    let runtime = app.runtime()?.clone();
    let ctx = workflow_context(app, &skills, args.yes, &args.provider_args)?;
    let skill = &skills[index];
    let result = runtime.run_workflow(skill, &ctx, &spec.name, &input).await;
    app.report_denials();
    match result {
        Ok((Ok(output), logs)) => {
            if app.global.verbose {
                for l in logs {
                    eprintln!("[{}] {}: {}", l.level, skill.name(), l.message);
                }
            }
            match agent_bounded::parse_json::<serde_json::Value>(
                &output.text,
                "output",
                Limits::MESSAGE,
            ) {
                Ok(v) => println!("{}", serde_json::to_string_pretty(&v)?),
                Err(_) => println!("{}", output.text),
            }
            Ok(exit::OK)
        }
        Ok((Err(e), _)) => {
            let (kind, m) = match &e {
                SkillError::InvalidInput(m) => ("invalid input", m),
                SkillError::NotFound(m) => ("not found", m),
                SkillError::Denied(m) => ("denied", m),
                SkillError::Failed(m) => ("failed", m),
            };
            eprintln!(
                "error: workflow `{}/{}`: {kind}: {m}",
                skill.name(),
                spec.name
            );
            Ok(if matches!(e, SkillError::Denied(_)) {
                exit::DENIED
            } else {
                exit::FAILURE
            })
        }
        Err(e) => bail!("workflow `{}/{}`: {e}", skill.name(), spec.name),
    }
}
