//! Running one doc command: `bash -o pipefail -c` with the world's environment, or the same
//! under a pseudo-terminal (util-linux `script`) for the human-only commands and the control
//! room. Bounded in time; a command that hangs is killed with its whole process group.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The terminal size a tty command gets, so the control room can draw.
pub const TTY_COLUMNS: u16 = 120;
pub const TTY_ROWS: u16 = 36;

pub struct Outcome {
    /// `None` when it was killed (timeout or signal).
    pub code: Option<i32>,
    /// stdout, or for a tty command everything the terminal showed (stdout and stderr).
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub elapsed: Duration,
}

/// When a pipe last carried output (`None` before any): how the typist tells that a program
/// has drawn its screen or asked its question and now waits for a key.
type Activity = Arc<Mutex<Option<Instant>>>;

fn reader(mut pipe: impl Read + Send + 'static, activity: Option<Activity>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(activity) = &activity {
                        *activity.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
                    }
                }
            }
        }
        let _ = tx.send(buf);
    });
    rx
}

fn kill_group(child: &Child) {
    // The child leads its own process group (process_group(0)), so this reaches everything
    // it started and nothing else.
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGKILL);
    }
}

/// Waits for `child` up to `limit`, then collects its output; a child that outlives the limit
/// is killed. Output held open by a leftover background process is given 5 s, then its group
/// is killed too, so a doc command can never hang the test.
fn finish(mut child: Child, limit: Duration, activity: Option<Activity>) -> Outcome {
    let stdout = reader(child.stdout.take().expect("piped stdout"), activity);
    let stderr = reader(child.stderr.take().expect("piped stderr"), None);
    let started = Instant::now();
    let deadline = started + limit;
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for a doc command") {
            break status;
        }
        if Instant::now() > deadline {
            timed_out = true;
            kill_group(&child);
            break child.wait().expect("waiting for a killed doc command");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let collect = |rx: mpsc::Receiver<Vec<u8>>| {
        let bytes = rx.recv_timeout(Duration::from_secs(5)).unwrap_or_else(|_| {
            kill_group(&child);
            rx.recv_timeout(Duration::from_secs(5)).unwrap_or_default()
        });
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let stdout = collect(stdout);
    let stderr = collect(stderr);
    Outcome { code: status.code(), stdout, stderr, timed_out, elapsed: started.elapsed() }
}

fn base(program: &str, cwd: &Path, env: &[(String, String)]) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    cmd
}

/// `bash -o pipefail -c TEXT` with no stdin.
pub fn run_plain(text: &str, cwd: &Path, env: &[(String, String)], limit: Duration) -> Outcome {
    let mut cmd = base("bash", cwd, env);
    cmd.args(["-o", "pipefail", "-c", text]).stdin(Stdio::null());
    finish(cmd.spawn().expect("starting bash"), limit, None)
}

/// The same under a pseudo-terminal of `TTY_COLUMNS`×`TTY_ROWS`: `script` gives the command a
/// real terminal on stdin and stdout and copies what we write into it. `input` is typed once
/// the program had time to start (its output has been quiet for `QUIET` after it began, or
/// `FIRST_INPUT_BY` passed) and again every second until it exits: for `confirm` the second
/// `y` is never read, for the control room a `q` that came too early is pressed again.
/// `script_file` holds the command (a path without quotes or spaces).
pub fn run_tty(
    text: &str,
    input: &str,
    cwd: &Path,
    env: &[(String, String)],
    script_file: &Path,
    limit: Duration,
) -> Outcome {
    const QUIET: Duration = Duration::from_millis(400);
    const FIRST_INPUT_BY: Duration = Duration::from_secs(5);
    std::fs::write(script_file, text).expect("writing the tty command's script");
    let inner = format!(
        "stty cols {TTY_COLUMNS} rows {TTY_ROWS} 2>/dev/null; exec bash -o pipefail '{}'",
        script_file.display()
    );
    let mut cmd = base("script", cwd, env);
    cmd.args(["-qec", &inner, "/dev/null"]).stdin(Stdio::piped());
    let mut child = cmd.spawn().expect("starting script(1) (util-linux)");
    let started = Instant::now();
    let mut stdin = child.stdin.take().expect("piped stdin");
    let activity: Activity = Arc::new(Mutex::new(None));
    let done = Arc::new(AtomicBool::new(false));
    let typist = {
        let done = done.clone();
        let activity = activity.clone();
        let input = input.to_owned();
        std::thread::spawn(move || {
            let mut next: Option<Instant> = None;
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
                let now = Instant::now();
                let due = match next {
                    Some(at) => now >= at,
                    None => {
                        let last = *activity.lock().unwrap_or_else(|e| e.into_inner());
                        last.is_some_and(|t| now - t >= QUIET) || now - started >= FIRST_INPUT_BY
                    }
                };
                if !due || input.is_empty() {
                    continue;
                }
                if stdin.write_all(input.as_bytes()).and_then(|()| stdin.flush()).is_err() {
                    return;
                }
                next = Some(now + Duration::from_secs(1));
            }
        })
    };
    let mut outcome = finish(child, limit, Some(activity));
    done.store(true, Ordering::Relaxed);
    let _ = typist.join();
    outcome.stdout = super::files::plain_text(&outcome.stdout);
    outcome
}
