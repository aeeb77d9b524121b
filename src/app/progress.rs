//! The progress display on stderr while models work: on a terminal, one
//! spinner line naming each task, what it waits for (the review, the
//! guardian) and for how long, redrawn in place and erased before results
//! are printed over it. Not on a terminal (a pipe, a CI log) it draws
//! nothing: only rate-limit pauses and corrective retries are said, one line
//! each, since they explain a slow run.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::review::{Event, Events};

/// How often the spinner line is redrawn.
const TICK: Duration = Duration::from_millis(100);

type Sink = Arc<Mutex<Box<dyn Write + Send>>>;

pub(crate) struct Progress {
    terminal: bool,
    state: Arc<Mutex<State>>,
    out: Sink,
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

#[derive(Default)]
struct State {
    /// (task label, what it waits for, since when)
    active: Vec<(String, &'static str, Instant)>,
    waiting: Option<String>,
    drawn: bool,
}

impl Progress {
    /// Progress on stderr; `terminal` says whether stderr is one.
    pub(crate) fn start(terminal: bool) -> Progress {
        Progress::to(terminal, Box::new(std::io::stderr()))
    }

    fn to(terminal: bool, out: Box<dyn Write + Send>) -> Progress {
        let state = Arc::new(Mutex::new(State::default()));
        let out: Sink = Arc::new(Mutex::new(out));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = terminal.then(|| {
            let (state, out, stop) = (state.clone(), out.clone(), stop.clone());
            std::thread::spawn(move || {
                let frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(mut s) = state.lock() {
                        if !s.active.is_empty() || s.waiting.is_some() {
                            let line = line(&s, frames[i % frames.len()]);
                            write(&out, &format!("\r\x1b[2K{line}"));
                            s.drawn = true;
                        }
                    }
                    i += 1;
                    std::thread::sleep(TICK);
                }
            })
        });
        Progress {
            terminal,
            state,
            out,
            stop,
            thread: Mutex::new(thread),
        }
    }

    /// Erase the spinner line before printing results over it.
    pub(crate) fn clear(&self) {
        if let Ok(mut s) = self.state.lock() {
            self.erase(&mut s);
        }
    }

    fn erase(&self, s: &mut State) {
        if s.drawn {
            write(&self.out, "\r\x1b[2K");
            s.drawn = false;
        }
    }

    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Ok(mut thread) = self.thread.lock() {
            if let Some(handle) = thread.take() {
                let _ = handle.join();
            }
        }
        self.clear();
    }
}

/// A write to stderr that fails (a closed pipe) loses only the progress.
fn write(out: &Sink, text: &str) {
    if let Ok(mut out) = out.lock() {
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

/// `⠋ waiting for the model: task 1 review 12s, task 2 guardian 3s`
fn line(state: &State, frame: char) -> String {
    let mut parts: Vec<String> = state
        .active
        .iter()
        .map(|(label, what, since)| format!("{label} {what} {}s", since.elapsed().as_secs()))
        .collect();
    if let Some(wait) = &state.waiting {
        parts.push(wait.clone());
    }
    format!("{frame} waiting for the model: {}", parts.join(", "))
}

impl Events for Progress {
    fn event(&self, event: Event) {
        let Ok(mut s) = self.state.lock() else { return };
        match event {
            Event::ModelStarted { label, what } => {
                s.waiting = None;
                s.active.push((label, what, Instant::now()));
            }
            Event::ModelFinished { label, what } => {
                s.active.retain(|(l, w, _)| !(l == &label && *w == what));
            }
            Event::Waiting {
                label,
                seconds,
                why,
            } => {
                let text = format!("{label} paused {seconds:.1}s ({why})");
                if !self.terminal {
                    write(&self.out, &format!("{text}\n"));
                }
                s.waiting = Some(text);
            }
            Event::Queued { label, holder } => {
                let text = format!(
                    "{label} is being reviewed by another speed process ({holder}): waiting for it to end, then reviewing what it left (--no-wait: don't wait)"
                );
                if !self.terminal {
                    write(&self.out, &format!("{text}\n"));
                }
                s.waiting = Some(text);
            }
            Event::Retrying {
                label,
                what,
                reason,
            } => {
                self.erase(&mut s);
                write(
                    &self.out,
                    &format!(
                        "{label}: the {what} answer was invalid ({reason}); asking once more\n"
                    ),
                );
            }
            Event::Notice { label, text } => {
                self.erase(&mut s);
                write(&self.out, &format!("note: {label}: {text}\n"));
            }
            Event::Reconciling {
                label,
                what,
                reason,
            } => {
                self.erase(&mut s);
                write(
                    &self.out,
                    &format!(
                        "{label}: the {what} answer contradicts itself ({reason}); asking once more\n"
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Buffer {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn started(label: &str, what: &'static str) -> Event {
        Event::ModelStarted {
            label: label.into(),
            what,
        }
    }

    #[test]
    fn on_a_terminal_it_names_the_task_what_it_waits_for_and_the_time() {
        let buffer = Buffer::default();
        let progress = Progress::to(true, Box::new(buffer.clone()));
        progress.event(started("task 1", "review"));
        progress.event(started("task 2", "guardian"));
        std::thread::sleep(TICK * 3);
        progress.stop();
        let text = buffer.text();
        assert!(
            text.contains("waiting for the model: task 1 review 0s, task 2 guardian 0s"),
            "{text:?}"
        );
        assert!(text.starts_with("\r\x1b[2K"), "redrawn in place: {text:?}");
        assert!(text.ends_with("\r\x1b[2K"), "erased at the end: {text:?}");
        assert!(!text.contains('\n'), "one line, never scrolled: {text:?}");
    }

    #[test]
    fn a_finished_call_leaves_the_line() {
        let buffer = Buffer::default();
        let progress = Progress::to(true, Box::new(buffer.clone()));
        progress.event(started("task 1", "review"));
        progress.event(Event::ModelFinished {
            label: "task 1".into(),
            what: "review",
        });
        std::thread::sleep(TICK * 2);
        progress.stop();
        assert_eq!(buffer.text(), "", "nothing waits, nothing is drawn");
    }

    #[test]
    fn elsewhere_only_pauses_and_retries_are_said() {
        let buffer = Buffer::default();
        let progress = Progress::to(false, Box::new(buffer.clone()));
        progress.event(started("task 1", "review"));
        std::thread::sleep(TICK * 2);
        assert_eq!(buffer.text(), "", "no spinner off a terminal");
        progress.event(Event::Waiting {
            label: "task 1".into(),
            seconds: 1.5,
            why: "rate limit".into(),
        });
        progress.event(Event::Retrying {
            label: "task 1".into(),
            what: "review",
            reason: "no JSON".into(),
        });
        progress.event(Event::Reconciling {
            label: "task 1".into(),
            what: "review",
            reason: "it approves with test_quality 68, under its minimum of 70".into(),
        });
        progress.stop();
        assert_eq!(
            buffer.text(),
            "task 1 paused 1.5s (rate limit)\ntask 1: the review answer was invalid (no JSON); asking once more\ntask 1: the review answer contradicts itself (it approves with test_quality 68, under its minimum of 70); asking once more\n"
        );
    }
}
