//! A deliberately hostile tool skill for the runtime's sandbox tests. Each
//! tool tries something the host must refuse or contain.

wit_bindgen::generate!({
    path: "../../../wit",
    world: "tool-skill",
    generate_all,
});

use agent::skill::exec::{ExecRequest, run};
use agent::skill::types::{SkillError, ToolSpec};
use exports::agent::skill::tool::Guest;

struct Hostile;

fn arg(input: &serde_json::Value, key: &str) -> String {
    input
        .get(key)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string()
}

fn number(input: &serde_json::Value, key: &str) -> u64 {
    input.get(key).and_then(|v| v.as_u64()).unwrap_or(0)
}

const TOOLS: [&str; 13] = [
    "read",
    "write",
    "env",
    "exec",
    "exec_each",
    "spin",
    "alloc",
    "huge",
    "panic",
    "echo",
    "list",
    "print",
    "mount",
];

impl Guest for Hostile {
    fn list_tools() -> Vec<ToolSpec> {
        TOOLS
            .iter()
            .map(|name| ToolSpec {
                name: name.to_string(),
                description: format!("hostile test tool `{name}`"),
                input_schema: r#"{"type":"object"}"#.to_string(),
                requires_approval: false,
            })
            .collect()
    }

    fn call_tool(name: String, input: String) -> Result<String, SkillError> {
        let input: serde_json::Value =
            serde_json::from_str(&input).map_err(|e| SkillError::InvalidInput(e.to_string()))?;
        match name.as_str() {
            // Read any path the test names.
            "read" => std::fs::read_to_string(arg(&input, "path"))
                .map_err(|e| SkillError::Failed(format!("read failed: {e}"))),
            // Write a file (needs a read-write mount).
            "write" => std::fs::write(arg(&input, "path"), "pwned")
                .map(|_| "written".to_string())
                .map_err(|e| SkillError::Failed(format!("write failed: {e}"))),
            // Read an environment variable.
            "env" => Ok(std::env::var(arg(&input, "name")).unwrap_or_else(|_| "<unset>".into())),
            // Run a program through the exec import.
            "exec" => {
                let args = input
                    .get("args")
                    .and_then(|a| a.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                let env = input
                    .get("env")
                    .and_then(|a| a.as_object())
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                            .collect()
                    })
                    .unwrap_or_default();
                let out = run(&ExecRequest {
                    program: arg(&input, "program"),
                    args,
                    cwd: None,
                    env,
                    stdin: None,
                    timeout_ms: None,
                })
                .map_err(|e| SkillError::Denied(format!("{e:?}")))?;
                Ok(format!("exit={:?} stdout={}", out.exit_code, out.stdout))
            }
            // Run each of `runs` (`{program, args}`) in turn, carrying on
            // after a refusal, as a skill probing what it may do would.
            "exec_each" => {
                let mut report = Vec::new();
                for r in input
                    .get("runs")
                    .and_then(|a| a.as_array())
                    .into_iter()
                    .flatten()
                {
                    let args = r
                        .get("args")
                        .and_then(|a| a.as_array())
                        .map(|a| {
                            a.iter()
                                .filter_map(|v| v.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default();
                    let program = arg(r, "program");
                    let out = run(&ExecRequest {
                        program: program.clone(),
                        args,
                        cwd: None,
                        env: Vec::new(),
                        stdin: None,
                        timeout_ms: None,
                    });
                    report.push(match out {
                        Ok(o) => format!("{program}: exit={:?}", o.exit_code),
                        Err(e) => format!("{program}: {e:?}"),
                    });
                }
                Ok(report.join("\n"))
            }
            // Never return.
            "spin" => {
                let mut x: u64 = 0;
                loop {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            }
            // Allocate `bytes` bytes and touch them.
            "alloc" => {
                let mut v: Vec<u8> = Vec::new();
                v.resize(number(&input, "bytes") as usize, 1);
                Ok(format!("allocated {}", v.len()))
            }
            // Return `bytes` bytes of output.
            "huge" => Ok("x".repeat(number(&input, "bytes") as usize)),
            // Trap mid-call.
            "panic" => panic!("hostile skill panicked on purpose"),
            // Print `bytes` bytes to stdout, in lines.
            "print" => {
                let line = "y".repeat(1023);
                for _ in 0..number(&input, "bytes") / 1024 {
                    println!("{line}");
                }
                Ok("printed".to_string())
            }
            // How the project is mounted for this call (`project.mount`,
            // contract 0.2.0).
            "mount" => Ok(match agent::skill::project::mount() {
                agent::skill::project::MountMode::None => "none",
                agent::skill::project::MountMode::ReadOnly => "read-only",
                agent::skill::project::MountMode::ReadWrite => "read-write",
            }
            .to_string()),
            // A harmless call, to show the host still works.
            "echo" => Ok(arg(&input, "text")),
            // List a directory.
            "list" => {
                let mut names: Vec<String> = std::fs::read_dir(arg(&input, "path"))
                    .map_err(|e| SkillError::Failed(format!("list failed: {e}")))?
                    .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                    .collect();
                names.sort();
                Ok(names.join("\n"))
            }
            other => Err(SkillError::NotFound(other.to_string())),
        }
    }
}

export!(Hostile);
