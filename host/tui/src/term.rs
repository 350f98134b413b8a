//! The terminal: raw mode, the alternate screen and bracketed paste on the
//! way in; all restored on the way out, on Ctrl-C and on a panic.

use std::io::{self, Stdout};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use agent_protocol::{Client, Event, Op};

use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use crate::app::App;
use crate::ui::draw;
use crate::{TuiOptions, UiMsg};

/// How long quitting waits for the agent to finish shutting down (a
/// running turn is cancelled first).
pub const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

/// How long the first frame waits for the session's `SessionConfigured`.
const FIRST_EVENT_WAIT: Duration = Duration::from_secs(5);

/// Puts the terminal back as it was. Safe to call more than once.
pub fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(
        io::stdout(),
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Restores the terminal before a panic message is printed.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// Restores the terminal when dropped (normal exit, `?` errors).
struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

fn setup() -> io::Result<Terminal<CrosstermBackend<Stdout>>> {
    install_panic_hook();
    enable_raw_mode()?;
    execute!(io::stdout(), EnterAlternateScreen, EnableBracketedPaste)?;
    Terminal::new(CrosstermBackend::new(io::stdout()))
}

/// Forwards terminal events (keys, paste, resizes) to the interface.
fn spawn_input(tx: Sender<UiMsg>) {
    let _ = std::thread::Builder::new()
        .name("agent-tui-input".into())
        .spawn(move || {
            loop {
                match crossterm::event::poll(Duration::from_millis(250)) {
                    Ok(true) => match crossterm::event::read() {
                        Ok(e) => {
                            if tx.send(UiMsg::Term(e)).is_err() {
                                return;
                            }
                        }
                        Err(_) => return,
                    },
                    Ok(false) => {}
                    Err(_) => return,
                }
            }
        });
}

/// Forwards the agent's events to the interface; says so when the agent's
/// end is gone.
pub fn spawn_events(events: Receiver<Event>, tx: Sender<UiMsg>) {
    let _ = std::thread::Builder::new()
        .name("agent-tui-events".into())
        .spawn(move || {
            for e in events.iter() {
                let last = matches!(e, Event::ShutdownComplete);
                if tx.send(UiMsg::Protocol(e)).is_err() || last {
                    return;
                }
            }
            let _ = tx.send(UiMsg::Disconnected);
        });
}

/// Runs the interface over `client` until the user quits: draws, then waits
/// for the next message (a key, an event from the agent), handles every
/// message that has arrived, and draws again. Events sent before it starts
/// (a `--resume`'s `Resumed`) are shown in the first frames. Returns the last
/// recorded session seen, to continue with `agent --resume`.
///
/// # Errors
/// When the terminal cannot be set up or written to.
pub fn run(client: Client, options: TuiOptions) -> io::Result<Option<String>> {
    let (ops, events) = client.split();
    let mut app = App::new(ops, &options.project_root, options.theme);
    // The session's first event says what it runs with: wait for it (a
    // moment) so that the first frame shows the model.
    match events.recv_timeout(FIRST_EVENT_WAIT) {
        Ok(e) => app.handle(UiMsg::Protocol(e)),
        Err(RecvTimeoutError::Timeout) => {}
        Err(RecvTimeoutError::Disconnected) => app.handle(UiMsg::Disconnected),
    }
    let (tx, rx) = mpsc::channel();
    spawn_events(events, tx.clone());
    let mut terminal = setup()?;
    let _guard = Guard;
    spawn_input(tx);
    loop {
        terminal.draw(|f| draw(f, &mut app))?;
        if app.quit {
            break;
        }
        let Ok(first) = rx.recv() else { break };
        app.handle(first);
        while let Ok(more) = rx.try_recv() {
            app.handle(more);
        }
    }
    shut_down(&mut app, &rx, SHUTDOWN_WAIT);
    Ok(app.session)
}

/// Leaves the session: questions still waiting are refused, then
/// `Op::Shutdown` (which cancels a running turn) is sent and the agent's
/// events are folded in until its `ShutdownComplete`, for at most `wait`.
/// Returns whether the agent's end has finished (confirmed, or gone).
pub fn shut_down(app: &mut App, rx: &Receiver<UiMsg>, wait: Duration) -> bool {
    app.deny_pending();
    app.send(Op::Shutdown);
    let deadline = Instant::now() + wait;
    while !app.ended {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(UiMsg::Term(_)) => {}
            Ok(msg) => app.handle(msg),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return false,
        }
    }
    true
}
