//! Terminal setup and restore. The terminal is restored on every exit path: normal quit,
//! error, panic (hook), and around suspension (Ctrl-Z) and the editor.

use std::io::{self, Write};

use crossterm::event::{DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture};
use crossterm::execute;
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode};

/// Raw mode, alternate screen, bracketed paste, and mouse capture when asked for.
pub fn enter(mouse: bool) -> io::Result<()> {
    enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(out, EnterAlternateScreen, EnableBracketedPaste, crossterm::cursor::Hide)?;
    if mouse {
        execute!(out, EnableMouseCapture)?;
    }
    Ok(())
}

/// Undoes [`enter`]; safe to call more than once and when it was never entered.
pub fn restore() {
    let mut out = io::stdout();
    let _ = execute!(out, DisableMouseCapture, DisableBracketedPaste, LeaveAlternateScreen, crossterm::cursor::Show);
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// Restores the terminal before the default panic message is printed.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// Stops the process as a shell's Ctrl-Z would; returns after `fg`.
pub fn suspend_process() {
    // SAFETY: raise() only sends a signal to this process; SIGTSTP's default action stops it
    // and execution continues here after SIGCONT.
    unsafe {
        libc::raise(libc::SIGTSTP);
    }
}

/// Restores the terminal when dropped (error and early-return paths).
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}
