//! The terminal: raw mode, the alternate screen and bracketed paste on the
//! way in; all restored on the way out, on Ctrl-C and on a panic.

use std::io::{self, Stdout};
use std::sync::mpsc::{Receiver, Sender};
use std::time::Duration;

use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use crate::UiMsg;
use crate::app::{App, Backend};
use crate::ui::draw;

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

/// Runs the interface until the user quits: draws, then waits for the next
/// message (a key, an event of the running turn, a question), handles every
/// message that has arrived, and draws again. `before` is applied before the
/// first frame (a resumed session's events).
///
/// # Errors
/// When the terminal cannot be set up or written to.
pub fn run(
    app: &mut App,
    backend: &mut dyn Backend,
    tx: Sender<UiMsg>,
    rx: Receiver<UiMsg>,
) -> io::Result<()> {
    let mut terminal = setup()?;
    let _guard = Guard;
    spawn_input(tx);
    loop {
        terminal.draw(|f| draw(f, app))?;
        if app.quit {
            break;
        }
        let Ok(first) = rx.recv() else { break };
        app.handle(first, backend);
        while let Ok(more) = rx.try_recv() {
            app.handle(more, backend);
        }
    }
    // Pending questions are refused, a running turn cancelled.
    while let Some(a) = app.asks.pop_front() {
        let _ = a.reply.send(agent_policy::Answer::Deny);
    }
    backend.cancel();
    Ok(())
}
