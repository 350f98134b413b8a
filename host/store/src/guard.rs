//! Turns a panic inside redb into an error.
//!
//! redb trusts the pages of a file it closed cleanly: a page overwritten from outside (zeroed
//! by a failing disk, a bad copy, a stray `dd`) can make it panic (`entered unreachable code`)
//! instead of returning an error. Every store operation runs under [`catch`], which catches such
//! a panic, keeps the default panic hook from printing it with a backtrace, and hands back its
//! message so the caller can report the damaged file and the way out.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Set while this thread runs a guarded store operation.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
    /// The message of the last panic caught on this thread.
    static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs (once per process) a panic hook that stays silent for panics inside [`catch`] and
/// hands every other panic to the hook that was there before.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) {
                let message = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".to_string());
                CAUGHT.with(|c| *c.borrow_mut() = Some(message));
            } else {
                previous(info);
            }
        }));
    });
}

/// Runs `f`; a panic inside it becomes `Err(message)`.
pub(crate) fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    let outer = GUARDED.with(|g| g.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(outer));
    result.map_err(|_| {
        CAUGHT
            .with(|c| c.borrow_mut().take())
            .unwrap_or_else(|| "a panic without a message".to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message_and_a_value_passes_through() {
        assert_eq!(catch(|| 7), Ok(7));
        let err = catch(|| -> u8 { unreachable!("page 3 is zero") }).unwrap_err();
        assert!(err.contains("page 3 is zero"), "{err}");
        // Nested guards restore the outer state.
        let out = catch(|| catch(|| panic!("inner")).unwrap_err());
        assert_eq!(out.as_deref(), Ok("inner"));
    }
}
