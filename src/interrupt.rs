//! Ctrl-C, SIGTERM and SIGHUP end speed only after it has cleaned up.
//!
//! Whatever speed starts that must not outlive it (a model command's process
//! group, a temporary file, later a temporary worktree) registers a cleanup
//! with `on_interrupt`; a short stretch of work that must not be cut in half
//! (recording a verdict: report, log line, task file) takes a `hold`. On the
//! first signal a watcher thread lets no new hold start, waits a bounded
//! time for the holds under way to end, runs every cleanup, and then ends
//! the process by the same signal with its default action, so a shell
//! sees `$?` = 130 (SIGINT), 143 (SIGTERM) or 129 (SIGHUP) and a script loop
//! around speed stops as it would for any other program. A second signal
//! cuts the wait short.
//!
//! The signal handler itself only writes the signal's number to a pipe (the
//! one thing it may safely do); everything else runs on the watcher thread.
//! Nothing here prints except one line on stderr saying what was stopped.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a hold may delay the end after a signal: recording a verdict
/// takes milliseconds, so this is only reached when the disk stalls.
const HOLD_WAIT: Duration = Duration::from_secs(10);

/// Set once the first signal has arrived.
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Holds in progress.
static HOLDS: AtomicUsize = AtomicUsize::new(0);

/// Registered cleanups, each with the id its `Cleanup` guard removes it by.
static CLEANUPS: Mutex<Registry> = Mutex::new(Registry {
    next: 0,
    entries: Vec::new(),
});

type Action = Box<dyn FnOnce() + Send>;

struct Registry {
    next: u64,
    entries: Vec<(u64, Action)>,
}

/// Whether speed has been asked to stop: work not yet started should not be.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// A registered cleanup. Dropping the guard removes the cleanup without
/// running it: the work it guarded ended normally. If the watcher is running
/// cleanups at that moment, dropping waits for it to finish, so a cleanup
/// never acts on something its owner has already released (a process group
/// whose leader was reaped, a file that was renamed into place).
#[must_use = "dropping the guard removes the cleanup at once"]
pub struct Cleanup {
    id: u64,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        lock(&CLEANUPS).remove(self.id);
    }
}

/// Run `action` if speed is interrupted while the returned guard lives
/// (cleanups run newest first).
/// The action runs on the watcher thread with the registry locked: it must
/// be quick (a `kill`, a file removal) and must not register or drop
/// cleanups itself.
pub fn on_interrupt(action: impl FnOnce() + Send + 'static) -> Cleanup {
    Cleanup {
        id: lock(&CLEANUPS).add(Box::new(action)),
    }
}

/// A stretch of work the end of the process waits for (bounded by
/// `HOLD_WAIT`).
#[must_use = "the hold ends when the guard is dropped"]
pub struct Hold(());

impl Drop for Hold {
    fn drop(&mut self) {
        HOLDS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Start a stretch of work that must not be cut in half, or `None` when
/// speed is already stopping: then that work should not start at all.
pub fn hold() -> Option<Hold> {
    HOLDS.fetch_add(1, Ordering::SeqCst);
    if requested() {
        HOLDS.fetch_sub(1, Ordering::SeqCst);
        return None;
    }
    Some(Hold(()))
}

impl Registry {
    fn add(&mut self, action: Action) -> u64 {
        let id = self.next;
        self.next += 1;
        self.entries.push((id, action));
        id
    }

    fn remove(&mut self, id: u64) {
        self.entries.retain(|(entry, _)| *entry != id);
    }

    /// Runs every cleanup once, newest first (what was started inside
    /// something is stopped before that something is removed: a command
    /// before the checkout it runs in); returns how many ran.
    fn run_all(&mut self) -> usize {
        let entries = std::mem::take(&mut self.entries);
        let count = entries.len();
        for (_, action) in entries.into_iter().rev() {
            action();
        }
        count
    }
}

fn lock(registry: &'static Mutex<Registry>) -> std::sync::MutexGuard<'static, Registry> {
    // A cleanup that panicked leaves the registry usable: every entry is
    // still a complete (id, action) pair.
    registry
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs every registered cleanup, with the registry locked throughout (see
/// `Cleanup`).
fn run_cleanups() -> usize {
    lock(&CLEANUPS).run_all()
}

/// Installs the handlers and starts the watcher thread. Call once, early;
/// later calls do nothing. Without it (the library used on its own, unit
/// tests) signals keep their default action and cleanups never run.
pub fn install() -> std::io::Result<()> {
    imp::install()
}

#[cfg(unix)]
mod imp {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicI32, Ordering};

    use super::*;

    const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

    /// The write end of the self-pipe, for the handler.
    static PIPE: AtomicI32 = AtomicI32::new(-1);
    static INSTALLED: OnceLock<io::Result<()>> = OnceLock::new();

    pub(super) fn install() -> io::Result<()> {
        match INSTALLED.get_or_init(try_install) {
            Ok(()) => Ok(()),
            Err(err) => Err(io::Error::new(err.kind(), err.to_string())),
        }
    }

    fn try_install() -> io::Result<()> {
        let (read, write) = pipe()?;
        PIPE.store(write.as_raw_fd(), Ordering::SeqCst);
        // The write end lives as long as the process.
        std::mem::forget(write);
        std::thread::Builder::new()
            .name("speed-interrupt".into())
            .spawn(move || watch(read))?;
        for signal in SIGNALS {
            // SAFETY: a zeroed sigaction is a valid "no flags, empty mask"
            // value; the handler only calls async-signal-safe functions.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                // Restart interrupted system calls: the threads doing the
                // work should not see EINTR because of this handler.
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }

    /// A close-on-exec pipe: no child process inherits either end.
    fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: fds has room for the two descriptors pipe(2) writes.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe(2) just returned these descriptors to us alone.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        for fd in [&read, &write] {
            // SAFETY: F_SETFD on a descriptor we own.
            unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
        }
        Ok((read, write))
    }

    extern "C" fn on_signal(signal: libc::c_int) {
        // Only async-signal-safe calls here: write(2) of one byte. errno is
        // kept for the interrupted code.
        let saved = errno::get();
        let fd = PIPE.load(Ordering::SeqCst);
        if fd >= 0 {
            let byte = signal as u8;
            // SAFETY: one byte from a valid local to a descriptor we never
            // close; a full pipe just drops the byte (one is enough).
            unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
        }
        errno::set(saved);
    }

    /// The watcher: waits for the first signal, cleans up, then ends the
    /// process by that signal.
    fn watch(read: OwnedFd) {
        let Some(signal) = next_signal(&read, None) else {
            return;
        };
        REQUESTED.store(true, Ordering::SeqCst);
        // Holds first: a cleanup removing temporary files must not take
        // one from under a verdict being recorded. They last milliseconds.
        let deadline = Instant::now() + HOLD_WAIT;
        while HOLDS.load(Ordering::SeqCst) > 0 {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            // A second signal ends the wait at once.
            let wait = (deadline - now).min(Duration::from_millis(20));
            if next_signal(&read, Some(wait)).is_some() {
                break;
            }
        }
        if run_cleanups() > 0 {
            // Best effort: stderr may be closed.
            let _ = io::Write::write_all(
                &mut io::stderr(),
                b"speed: interrupted; stopped what it started\n",
            );
        }
        die_by(signal);
    }

    /// The next signal number from the pipe; None on a timeout or when the
    /// pipe cannot be read.
    fn next_signal(read: &OwnedFd, timeout: Option<Duration>) -> Option<libc::c_int> {
        loop {
            let mut poll = libc::pollfd {
                fd: read.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let millis = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as i32);
            // SAFETY: one valid pollfd.
            let ready = unsafe { libc::poll(&mut poll, 1, millis) };
            if ready < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return None;
            }
            if ready == 0 {
                return None;
            }
            let mut byte = 0u8;
            // SAFETY: reads one byte into a local.
            let n = unsafe { libc::read(read.as_raw_fd(), (&mut byte as *mut u8).cast(), 1) };
            match n {
                1 => return Some(libc::c_int::from(byte)),
                _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
                _ => return None,
            }
        }
    }

    /// Ends the process the way the signal's default action would.
    fn die_by(signal: libc::c_int) -> ! {
        // SAFETY: restoring the default action and raising the signal
        // touches no memory of ours; with SIG_DFL the process ends here.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(signal);
            // Unreachable unless the signal could not end the process.
            libc::_exit(128 + signal)
        }
    }

    /// errno, read and restored around the handler's write.
    mod errno {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        fn location() -> *mut libc::c_int {
            // SAFETY: returns this thread's errno slot.
            unsafe { libc::__errno_location() }
        }

        #[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
        fn location() -> *mut libc::c_int {
            // SAFETY: returns this thread's errno slot.
            unsafe { libc::__error() }
        }

        #[cfg(any(
            target_os = "linux",
            target_os = "android",
            target_os = "macos",
            target_os = "ios",
            target_os = "freebsd"
        ))]
        pub(super) fn get() -> libc::c_int {
            // SAFETY: the slot is valid for the life of the thread.
            unsafe { *location() }
        }

        #[cfg(any(
            target_os = "linux",
            target_os = "android",
            target_os = "macos",
            target_os = "ios",
            target_os = "freebsd"
        ))]
        pub(super) fn set(value: libc::c_int) {
            // SAFETY: as above.
            unsafe { *location() = value }
        }

        #[cfg(not(any(
            target_os = "linux",
            target_os = "android",
            target_os = "macos",
            target_os = "ios",
            target_os = "freebsd"
        )))]
        pub(super) fn get() -> libc::c_int {
            0
        }

        #[cfg(not(any(
            target_os = "linux",
            target_os = "android",
            target_os = "macos",
            target_os = "ios",
            target_os = "freebsd"
        )))]
        pub(super) fn set(_: libc::c_int) {}
    }
}

#[cfg(not(unix))]
mod imp {
    /// Elsewhere than Unix, signals keep their default action.
    pub(super) fn install() -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_removed_cleanup_does_not_run_and_the_others_run_once_newest_first() {
        // A registry of its own: the global one is shared with every other
        // test of this binary.
        let mut registry = Registry {
            next: 0,
            entries: Vec::new(),
        };
        let ran = Arc::new(Mutex::new(Vec::new()));
        let mark = |n: u32| -> Action {
            let ran = Arc::clone(&ran);
            Box::new(move || ran.lock().unwrap().push(n))
        };
        registry.add(mark(1));
        let removed = registry.add(mark(2));
        registry.add(mark(3));
        registry.remove(removed);
        assert_eq!(registry.run_all(), 2);
        assert_eq!(registry.run_all(), 0);
        assert_eq!(*ran.lock().unwrap(), [3, 1], "newest first, once each");
    }

    #[test]
    fn a_guard_removes_its_cleanup_from_the_global_registry() {
        let guard = on_interrupt(|| {});
        let id = guard.id;
        assert!(lock(&CLEANUPS).entries.iter().any(|(e, _)| *e == id));
        drop(guard);
        assert!(!lock(&CLEANUPS).entries.iter().any(|(e, _)| *e == id));
    }

    #[test]
    fn holds_are_counted_until_dropped() {
        let hold = hold().expect("not interrupted in tests");
        assert!(HOLDS.load(Ordering::SeqCst) >= 1);
        drop(hold);
    }
}
