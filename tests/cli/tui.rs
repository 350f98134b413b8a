//! The interactive interface end to end: the real binary inside tmux
//! (send-keys, capture-pane) against the scripted model server. A prompt is
//! typed, the edit's diff is approved, the permission dialog answered, and
//! the answer and the edited file are checked; the "always" answer must be
//! in the grant store afterwards.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use agent_tests::model_server::{ModelServer, Reply, Wire, anthropic_sse, tokio_rt};

fn tool(id: &str, name: &str, input: &serde_json::Value) -> Reply {
    Wire::Anthropic.tool(id, name, input)
}

fn answer(text: &str) -> Reply {
    Wire::Anthropic.answer(text)
}
use serde_json::json;

use super::{sandbox, write};

/// A tmux server of its own (`-L`), killed on drop.
pub(super) struct Tmux {
    socket: String,
}

impl Tmux {
    pub(super) fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket]);
        c
    }

    pub(super) fn run(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().expect("tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(super) fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "tui"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    pub(super) fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "tui"])
    }

    /// The screen and its scrollback, wrapped lines joined: what the program
    /// printed after leaving the alternate screen, even once tmux has scrolled
    /// it up to show "Pane is dead".
    pub(super) fn printed(&self) -> String {
        self.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", "tui"])
    }

    /// Waits until the screen shows `text`; the screen on timeout.
    pub(super) fn wait_for(&self, text: &str, timeout: Duration) -> Result<String, String> {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(text) {
                return Ok(s);
            }
            if start.elapsed() > timeout {
                return Err(s);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Tmux {
    /// A detached 80×24 session `tui` on its own server `socket`, running
    /// `command` in `project`; the pane stays after the program exits.
    /// The real `agent` TUI for `sb` against the model server at `url`, in a
    /// tmux server named after `name`, shown its first frame within `wait`.
    pub(super) fn agent(name: &str, sb: &agent_tests::Sandbox, url: &str, wait: Duration) -> Tmux {
        Tmux::agent_with(name, sb, url, &[], wait)
    }

    /// [`Tmux::agent`] with `extra` arguments after the provider's.
    pub(super) fn agent_with(
        name: &str,
        sb: &agent_tests::Sandbox,
        url: &str,
        extra: &[&str],
        wait: Duration,
    ) -> Tmux {
        let project = sb.project.path().display().to_string();
        let mut command = agent_command(sb, url);
        for a in extra {
            command.push(' ');
            command.push_str(&shell_quote(a));
        }
        let tmux = Tmux::start(format!("{name}-{}", std::process::id()), &project, &command);
        tmux.wait_for("/help", wait)
            .unwrap_or_else(|s| panic!("no first frame:\n{s}"));
        tmux
    }

    pub(super) fn start(socket: String, project: &str, command: &str) -> Tmux {
        let tmux = Tmux { socket };
        tmux.run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "tui",
            "-x",
            "80",
            "-y",
            "24",
            "-c",
            project,
        ]);
        tmux.run(&["set-option", "-t", "tui", "remain-on-exit", "on"]);
        tmux.run(&["respawn-pane", "-k", "-t", "tui", "-c", project, command]);
        tmux
    }

    /// Waits until the program in the pane has exited.
    pub(super) fn wait_dead(&self, timeout: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if self
                .run(&["display-message", "-p", "-t", "tui", "#{pane_dead}"])
                .trim()
                == "1"
            {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").output();
    }
}

/// The shell command line that starts the real `agent` TUI for `sb` against
/// the model server at `url`.
fn agent_command(sb: &agent_tests::Sandbox, url: &str) -> String {
    format!(
        "env -u CI AGENT_HOME={} NO_COLOR=1 ANTHROPIC_API_KEY=test-key {} --provider anthropic --model test-model --base-url {}",
        shell_quote(&sb.home.path().display().to_string()),
        shell_quote(env!("CARGO_BIN_EXE_agent")),
        shell_quote(url),
    )
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn tui_prompt_permission_dialog_answer_and_edited_file() {
    if Command::new("tmux").arg("-V").output().is_err() {
        panic!("tmux is required for this test (test.sh installs it)");
    }
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            tool(
                "call_e",
                "edit",
                &json!({"path": "notes.txt", "old": "world", "new": "agent"}),
            ),
            answer("All done: **notes.txt** now greets the agent."),
        ]))
        .expect("server");
    let sb = sandbox();
    write(sb.project.path(), "notes.txt", "hello world\n");
    let long = Duration::from_secs(60);
    let tmux = Tmux::agent("agent-tui-test", &sb, server.url(), long);
    let s = tmux.screen();
    assert!(s.contains("anthropic/test-model"), "{s}");

    tmux.keys(&["-l", "Greet the agent in notes.txt"]);
    tmux.keys(&["Enter"]);

    // The edit asks first, with its diff.
    let s = tmux
        .wait_for("wants to run edit", long)
        .unwrap_or_else(|s| panic!("no approval dialog:\n{s}"));
    assert!(s.contains("-hello world"), "{s}");
    assert!(s.contains("+hello agent"), "{s}");
    tmux.keys(&["o"]);

    // Then the skill's first use of file:write (and of any other permission it
    // needs): allow always.
    let s = tmux
        .wait_for("Permission requested by core-tools", long)
        .unwrap_or_else(|s| panic!("no permission dialog:\n{s}"));
    assert!(s.contains("file:"), "{s}");
    let start = Instant::now();
    let s = loop {
        let s = tmux.screen();
        if s.contains("All done") {
            break s;
        }
        if s.contains("Permission requested by") {
            tmux.keys(&["a"]);
            std::thread::sleep(Duration::from_millis(300));
        }
        assert!(start.elapsed() < long, "no answer:\n{s}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        s.contains("All done: notes.txt now greets the agent."),
        "{s}"
    );
    assert!(s.contains("core-tools · edit"), "{s}");
    assert_eq!(
        std::fs::read_to_string(sb.project.path().join("notes.txt")).expect("read"),
        "hello agent\n"
    );

    tmux.keys(&["-l", "/quit"]);
    tmux.keys(&["Enter"]);
    assert!(
        tmux.wait_dead(long),
        "/quit did not quit:\n{}",
        tmux.screen()
    );
    let s = tmux.printed();
    let line = s
        .lines()
        .find(|l| l.starts_with("continue with `agent --resume "))
        .unwrap_or_else(|| panic!("did not quit cleanly:\n{s}"));
    assert!(line.len() <= 80, "the line wraps on 80 columns: {line}");
    assert!(
        !s.contains("Permission requested"),
        "the alternate screen is left:\n{s}"
    );
    tmux.run(&["clear-history", "-t", "tui"]);

    // `agent --resume` replays the session; Ctrl-C on an empty prompt quits
    // and gives the terminal back.
    tmux.run(&[
        "respawn-pane",
        "-k",
        "-t",
        "tui",
        "-c",
        &sb.project.path().display().to_string(),
        &format!("{} --resume", agent_command(&sb, server.url())),
    ]);
    let s = tmux
        .wait_for("resumed session", long)
        .unwrap_or_else(|s| panic!("not resumed:\n{s}"));
    assert!(s.contains("› Greet the agent in notes.txt"), "{s}");
    assert!(
        s.contains("All done: notes.txt now greets the agent."),
        "{s}"
    );
    tmux.keys(&["C-c"]);
    assert!(
        tmux.wait_dead(long),
        "Ctrl-C did not quit:\n{}",
        tmux.screen()
    );

    // "Allow always" went to the grant store.
    let store = agent_store::Store::open(sb.paths().db_path()).expect("store");
    let grant = store
        .grant("core-tools", agent_manifest::Permission::FileWrite)
        .expect("grant")
        .expect("a stored file:write decision");
    assert_eq!(grant.decision, agent_store::StoredDecision::Always);
    assert!(Path::new(env!("CARGO_BIN_EXE_agent")).exists());
}

#[test]
fn tui_without_a_terminal_is_a_usage_error() {
    let sb = sandbox();
    let out = sb.agent(&[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("needs a terminal"), "{stderr}");
    assert!(stderr.contains("agent run"), "{stderr}");
}

#[test]
fn tui_esc_cancels_a_streaming_turn() {
    let rt = tokio_rt();
    // A long answer trickling in: 80 text deltas, about a third of a second each.
    let mut events = vec![
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 50, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Thinking aloud:"}}),
    ];
    for i in 0..80 {
        events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": format!(" step {i}")}}));
    }
    events.extend([
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 80}}),
        json!({"type": "message_stop"}),
    ]);
    let server = rt
        .block_on(ModelServer::start(vec![
            Reply::sse(anthropic_sse(&events)).split(64, Duration::from_millis(150)),
        ]))
        .expect("server");
    let sb = sandbox();
    let long = Duration::from_secs(60);
    let tmux = Tmux::agent("agent-tui-esc", &sb, server.url(), long);
    tmux.keys(&["-l", "Think aloud"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Thinking aloud", long)
        .unwrap_or_else(|s| panic!("nothing streamed:\n{s}"));
    let started = Instant::now();
    tmux.keys(&["Escape"]);
    let s = tmux
        .wait_for("• cancelled", Duration::from_secs(10))
        .unwrap_or_else(|s| panic!("Esc did not cancel:\n{s}"));
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!s.contains("running"), "the turn is over:\n{s}");
    // The interface stays usable: the prompt takes a command.
    tmux.keys(&["-l", "/quit"]);
    tmux.keys(&["Enter"]);
    assert!(
        tmux.wait_dead(long),
        "/quit did not quit:\n{}",
        tmux.screen()
    );
}

/// Issue 15, item 6: denying a tool in the TUI showed "not approved: not
/// approved: this tool needs approval (grant its permission with --allow, or
/// pass --yes)": a doubled reason and CLI advice inside the TUI. The reason
/// now comes from the interface that decided, once.
#[test]
fn tui_denied_tool_says_not_approved_once_without_cli_advice() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            tool(
                "call_e",
                "edit",
                &json!({"path": "notes.txt", "old": "world", "new": "agent"}),
            ),
            answer("Understood, notes.txt stays as it is."),
        ]))
        .expect("server");
    let sb = sandbox();
    write(sb.project.path(), "notes.txt", "hello world\n");
    let long = Duration::from_secs(60);
    let tmux = Tmux::agent("agent-tui-deny", &sb, server.url(), long);
    tmux.keys(&["-l", "Greet the agent in notes.txt"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("wants to run edit", long)
        .unwrap_or_else(|s| panic!("no approval dialog:\n{s}"));
    tmux.keys(&["d"]);
    let s = tmux
        .wait_for("notes.txt stays as it is", long)
        .unwrap_or_else(|s| panic!("no answer after the denial:\n{s}"));
    assert!(
        s.contains("not approved: you declined it in the approval dialog"),
        "{s}"
    );
    assert!(!s.contains("not approved: not approved"), "{s}");
    assert!(!s.contains("--allow"), "CLI advice in the TUI:\n{s}");
    assert_eq!(
        std::fs::read_to_string(sb.project.path().join("notes.txt")).expect("read"),
        "hello world\n"
    );
    tmux.keys(&["-l", "/quit"]);
    tmux.keys(&["Enter"]);
    assert!(
        tmux.wait_dead(long),
        "/quit did not quit:\n{}",
        tmux.screen()
    );
}
