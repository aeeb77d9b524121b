//! Commands speed runs (the `command` model provider, configured checks,
//! the hook's kept script): fed their input, read with a cap, bounded by a
//! time limit, and never outliving speed.
//!
//! Each command runs in its own process group, so that what it starts (a
//! wrapper script's model process, a test runner's children) is stopped with
//! it. The group is killed when the command ends, on its time limit, when
//! its output passes its cap, on Ctrl-C or SIGTERM (through `interrupt`),
//! and when speed itself dies, even by SIGKILL: the leader gets SIGKILL from
//! the kernel when speed dies (Linux), and a small watchdog process, forked
//! for each command, kills the whole group when the pipe only speed holds
//! closes. What leaves the group (a daemon: fork, `setsid`, fork) is found
//! and ended by `orphans` on Linux, where speed is a child subreaper; every
//! child process speed starts must therefore be started here. This part
//! knows nothing of models or checks, and never prints.

use std::io::{self, Read, Write};
use std::process::{ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::interrupt;

mod orphans;

/// How often the leader's exit and the deadline are checked.
const POLL: Duration = Duration::from_millis(10);

/// How much of a stream is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capture {
    /// All of it; more than this many bytes ends the command with
    /// `Error::TooLarge`.
    Upto(usize),
    /// Only the last this many bytes; the stream may be any length.
    Tail(usize),
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// From the start of the command to the end of its output.
    pub timeout: Duration,
    pub stdout: Capture,
    pub stderr: Capture,
}

/// What a command that ran to its end produced.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot start it: {0}")]
    Spawn(io::Error),
    #[error("it did not finish within {}", humantime::format_duration(*after))]
    Timeout { after: Duration },
    #[error("its {stream} passed the limit of {limit} bytes")]
    TooLarge { stream: &'static str, limit: usize },
    #[error("{what}: {source}")]
    Io {
        what: &'static str,
        source: io::Error,
    },
    #[error("speed was interrupted")]
    Interrupted,
}

/// Runs `command` with `input` on its stdin. The command's stdin, stdout,
/// stderr and process group are set here. Call it from a thread that lives
/// until it returns (it does not return before the command has ended): on
/// Linux the kernel's "parent died" signal is tied to the spawning thread.
pub fn run(
    mut command: std::process::Command,
    input: Vec<u8>,
    limits: &Limits,
) -> Result<Output, Error> {
    let started = Instant::now();
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut group = Group::spawn(command).map_err(Error::Spawn)?;
    let result = pump(&mut group, input, limits, started);
    // Kill what is left of the group before anything else, whatever the
    // outcome: a command that exited may have left children behind.
    let status = group.finish();
    if interrupt::requested() {
        return Err(Error::Interrupted);
    }
    let (stdout, stderr) = result?;
    let status = status.map_err(|source| Error::Io {
        what: "waiting for the command",
        source,
    })?;
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

/// Makes speed the reaper of what its commands leave behind outside their
/// process group (Linux; elsewhere nothing is done). The binary calls it
/// once, early; without it (the library used on its own, unit tests) only
/// process groups are killed.
pub fn adopt_orphans() -> io::Result<()> {
    orphans::adopt()
}

/// A command started as the leader of its own process group, which never
/// outlives speed (see the module's doc): for callers that read its output
/// themselves. Dropping it kills the group and reaps the leader.
pub struct Group(group::Group);

impl Group {
    /// Starts `command`, its stdio as the caller set it.
    pub fn spawn(mut command: std::process::Command) -> io::Result<Group> {
        let run = orphans::Run::start();
        let watchdog = group::prepare(&mut command);
        run.mark(&mut command);
        crate::memory::restore_for_child(&mut command);
        // Registered before any sweep can take it for an orphan.
        let child = orphans::own(|| {
            let child = command.spawn()?;
            let pid = child.id() as i32;
            Ok((child, pid))
        })?;
        Ok(Group(group::Group::adopt(child, run, watchdog)))
    }

    /// The leader, to take its pipes. Reap it only through `finish`.
    pub fn child(&mut self) -> &mut std::process::Child {
        self.0.child()
    }

    /// Whether the leader has exited; it is not reaped before `finish`, so
    /// the group's id stays its own.
    pub fn exited(&mut self) -> io::Result<bool> {
        self.0.leader_exited()
    }

    /// Kills every process of the group, and what left it (see `orphans`).
    pub fn kill(&mut self) {
        self.0.kill();
    }

    /// Kills what is left of the group and reaps the leader.
    pub fn finish(mut self) -> io::Result<ExitStatus> {
        self.0.finish()
    }
}

/// What the helper threads report.
enum Event {
    Written(io::Result<()>),
    Read {
        stream: &'static str,
        result: Result<Vec<u8>, Error>,
    },
}

/// Feeds stdin and drains stdout and stderr on their own threads (a command
/// writing more than a pipe buffer while we write its input would otherwise
/// deadlock), until the leader has exited and both streams are closed, or
/// the deadline passes, or a stream passes its cap.
fn pump(
    group: &mut Group,
    input: Vec<u8>,
    limits: &Limits,
    started: Instant,
) -> Result<(Vec<u8>, Vec<u8>), Error> {
    let child = group.child();
    let missing = |name: &'static str| Error::Io {
        what: name,
        source: io::Error::other("the stream was not captured"),
    };
    let mut stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
    let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
    let stderr = child.stderr.take().ok_or_else(|| missing("stderr"))?;

    let (events, received) = mpsc::channel();
    // The channel may be gone if we already gave up on the command; the
    // result no longer matters then, so a failed send is not an error.
    let sender = events.clone();
    thread::spawn(move || {
        let written = stdin.write_all(&input);
        drop(stdin);
        sender.send(Event::Written(written)).ok();
    });
    for (stream, reader, capture) in [
        (
            "stdout",
            Box::new(stdout) as Box<dyn Read + Send>,
            limits.stdout,
        ),
        ("stderr", Box::new(stderr), limits.stderr),
    ] {
        let sender = events.clone();
        thread::spawn(move || {
            let result = drain(reader, capture, stream);
            sender.send(Event::Read { stream, result }).ok();
        });
    }
    drop(events);

    let deadline = started + limits.timeout;
    let mut written = None;
    let (mut out, mut err) = (None, None);
    let mut exited = false;
    while written.is_none() || out.is_none() || err.is_none() || !exited {
        if !exited {
            exited = group.exited().map_err(|source| Error::Io {
                what: "waiting for the command",
                source,
            })?;
            if exited {
                // Whatever the leader left running would keep the pipes
                // open; nothing of the group outlives its leader.
                group.kill();
            }
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(Error::Timeout {
                after: limits.timeout,
            });
        }
        match received.recv_timeout(POLL.min(deadline - now)) {
            Ok(Event::Written(result)) => written = Some(result),
            Ok(Event::Read { stream, result }) => {
                let bytes = result?;
                if stream == "stdout" {
                    out = Some(bytes);
                } else {
                    err = Some(bytes);
                }
            }
            // Each thread sends exactly once, so a disconnect means all
            // three have; a timeout re-polls.
            Err(_) => {}
        }
    }
    match written.unwrap_or(Ok(())) {
        // A command may answer without reading all of its input (or fail
        // before reading it); its exit status and output say what happened.
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            return Err(Error::Io {
                what: "writing the input",
                source: e,
            });
        }
        _ => {}
    }
    Ok((out.unwrap_or_default(), err.unwrap_or_default()))
}

/// Reads a stream to its end, keeping what `capture` says.
fn drain(mut reader: impl Read, capture: Capture, stream: &'static str) -> Result<Vec<u8>, Error> {
    let mut kept = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(Error::Io {
                    what: if stream == "stdout" {
                        "reading stdout"
                    } else {
                        "reading stderr"
                    },
                    source,
                });
            }
        };
        kept.extend_from_slice(&chunk[..n]);
        match capture {
            Capture::Upto(limit) if kept.len() > limit => {
                return Err(Error::TooLarge { stream, limit });
            }
            Capture::Tail(keep) if kept.len() > keep.saturating_mul(2).max(64 * 1024) => {
                // Trim now and then rather than on every read.
                kept.drain(..kept.len() - keep);
            }
            _ => {}
        }
    }
    if let Capture::Tail(keep) = capture {
        if kept.len() > keep {
            kept.drain(..kept.len() - keep);
        }
    }
    Ok(kept)
}

#[cfg(unix)]
mod group {
    //! The process group of one command, and its watchdog.

    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    use std::process::{Child, ExitStatus};

    use super::orphans::{self, Run, Whose};
    use crate::interrupt;

    /// Sets the command up as the leader of a new process group that the
    /// kernel kills when speed dies, and starts its watchdog.
    ///
    /// The watchdog is forked before the command, and the command tells it
    /// its own pid (the group's id) between fork and exec: were the watchdog
    /// forked after the spawn, speed killed in between (a wide window on a
    /// loaded machine) would leave a running command nobody watches.
    pub(super) fn prepare(command: &mut std::process::Command) -> Option<Watchdog> {
        command.process_group(0);
        // Without a watchdog the group still dies with speed's leader
        // (Linux) and on every other path; a failed fork is no reason not
        // to run the command.
        let watchdog = Watchdog::start().ok();
        let tell = watchdog.as_ref().map(|w| w.stand_down.as_raw_fd());
        #[cfg(any(target_os = "linux", target_os = "android"))]
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: runs in the child between fork and exec, where only
        // async-signal-safe calls are allowed: prctl, getppid, getpid and
        // write are plain system calls that allocate nothing.
        unsafe {
            command.pre_exec(move || {
                #[cfg(any(target_os = "linux", target_os = "android"))]
                {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                    // speed died before the request took effect.
                    if libc::getppid() != parent {
                        return Err(io::Error::other("speed exited"));
                    }
                }
                if let Some(fd) = tell {
                    // One write under PIPE_BUF: the watchdog reads it whole.
                    let pid = libc::getpid().to_ne_bytes();
                    let message = [b'P', pid[0], pid[1], pid[2], pid[3]];
                    libc::write(fd, message.as_ptr().cast(), message.len());
                }
                Ok(())
            });
        }
        watchdog
    }

    pub(super) struct Group {
        child: Child,
        pgid: libc::pid_t,
        /// Live until the group is dropped: a sweep of another command
        /// leaves this one's orphans alone meanwhile.
        run: Run,
        watchdog: Option<Watchdog>,
        /// Kills the group on Ctrl-C or SIGTERM; removed before the leader
        /// is reaped, so the group id is never reused under it.
        on_interrupt: Option<interrupt::Cleanup>,
        finished: bool,
    }

    impl Group {
        pub(super) fn adopt(child: Child, run: Run, watchdog: Option<Watchdog>) -> Group {
            let pgid = child.id() as libc::pid_t;
            // speed is ending: every orphan goes, whoever's.
            let on_interrupt = Some(interrupt::on_interrupt(move || {
                kill_group(pgid);
                orphans::sweep(pgid, Whose::All);
            }));
            Group {
                child,
                pgid,
                run,
                watchdog,
                on_interrupt,
                finished: false,
            }
        }

        pub(super) fn child(&mut self) -> &mut Child {
            &mut self.child
        }

        /// Whether the leader has exited, without reaping it: while it is
        /// a zombie its pid, the group id, cannot be reused.
        pub(super) fn leader_exited(&mut self) -> io::Result<bool> {
            // SAFETY: a zeroed siginfo_t is what waitid expects to fill.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: waitid on our own child, not reaping it (WNOWAIT).
            let rc = unsafe {
                libc::waitid(
                    libc::P_PID,
                    self.pgid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
                )
            };
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: waitid filled info (or left it zeroed: no change).
            Ok(unsafe { info.si_pid() } != 0)
        }

        pub(super) fn kill(&mut self) {
            kill_group(self.pgid);
            orphans::sweep(self.pgid, Whose::Run(&self.run));
        }

        /// Kills the group and its orphans, stands the watchdog down, and
        /// reaps the leader.
        pub(super) fn finish(&mut self) -> io::Result<ExitStatus> {
            self.finished = true;
            self.kill();
            if let Some(watchdog) = self.watchdog.take() {
                watchdog.stand_down();
            }
            self.on_interrupt.take();
            let status = self.child.wait();
            orphans::disown(self.pgid);
            status
        }
    }

    impl Drop for Group {
        fn drop(&mut self) {
            if !self.finished {
                self.finish().ok();
            }
        }
    }

    fn kill_group(pgid: libc::pid_t) {
        // SAFETY: kill(2) with a negative pid signals the group we created
        // for the command; it touches no memory. An empty group is ESRCH.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }

    /// A forked process that kills the group when speed goes away without
    /// saying so: it blocks reading a pipe whose write end only speed holds
    /// (and the command, until its exec). `P` and four bytes are the group's
    /// id, from the command; `S` means "stand down"; end of file means speed
    /// is gone.
    pub(super) struct Watchdog {
        pid: libc::pid_t,
        stand_down: OwnedFd,
    }

    impl Watchdog {
        fn start() -> io::Result<Watchdog> {
            let mut fds = [0 as libc::c_int; 2];
            // SAFETY: fds has room for the two descriptors.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: pipe(2) just gave us these descriptors.
            let (read, write) =
                unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            // The write end must reach no command speed runs: a copy held
            // elsewhere would keep the watchdog from ever seeing the end.
            // SAFETY: F_SETFD on descriptors we own.
            unsafe {
                libc::fcntl(read.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
                libc::fcntl(write.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
            }
            // Registered before any sweep can take it for an orphan.
            let pid = orphans::own(|| {
                // SAFETY: the child only makes async-signal-safe system
                // calls (see `watch`), as a fork of a multi-threaded process
                // must.
                match unsafe { libc::fork() } {
                    -1 => Err(io::Error::last_os_error()),
                    0 => watch(read.as_raw_fd()),
                    pid => Ok((pid, pid)),
                }
            })?;
            drop(read);
            Ok(Watchdog {
                pid,
                stand_down: write,
            })
        }

        fn stand_down(self) {
            let byte = b'S';
            // SAFETY: one byte from a local to our pipe; then wait for the
            // watchdog so it leaves no zombie.
            unsafe {
                libc::write(self.stand_down.as_raw_fd(), (&byte as *const u8).cast(), 1);
            }
            drop(self.stand_down);
            let mut status = 0;
            // SAFETY: waits for our own child.
            unsafe {
                libc::waitpid(self.pid, &mut status, 0);
            }
            orphans::disown(self.pid);
        }
    }

    /// The watchdog's whole life. Only async-signal-safe calls: no
    /// allocation, no locks, no Rust I/O.
    fn watch(read: libc::c_int) -> ! {
        // SAFETY: plain system calls on values we own.
        unsafe {
            // Ctrl-C reaches speed's whole process group, this one too: the
            // watchdog must outlive speed to do its job, so it ignores them.
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
                libc::signal(signal, libc::SIG_IGN);
            }
            // Keep only the pipe, as fd 0: a copy of any other descriptor
            // (another command's stdin, a lock, speed's stdout) would keep
            // it open after speed is gone.
            libc::dup2(read, 0);
            close_from(1);
            // The group's id, once the command has told it: until then
            // there is nothing to kill.
            let mut pgid: libc::pid_t = 0;
            loop {
                let mut byte = 0u8;
                let n = libc::read(0, (&mut byte as *mut u8).cast(), 1);
                if n == 1 && byte == b'P' {
                    let mut id = [0u8; 4];
                    if read_exact(0, &mut id) {
                        pgid = libc::pid_t::from_ne_bytes(id);
                        continue;
                    }
                } else if n == 1 {
                    libc::_exit(0);
                } else if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                if pgid > 0 {
                    libc::kill(-pgid, libc::SIGKILL);
                }
                libc::_exit(0);
            }
        }
    }

    /// Reads `buf.len()` bytes from `fd`; false at end of file or an error.
    ///
    /// # Safety
    /// Only async-signal-safe calls, for the watchdog.
    unsafe fn read_exact(fd: libc::c_int, buf: &mut [u8]) -> bool {
        let mut filled = 0;
        while filled < buf.len() {
            // SAFETY: reads into the unfilled rest of our own buffer.
            let n =
                unsafe { libc::read(fd, buf[filled..].as_mut_ptr().cast(), buf.len() - filled) };
            if n > 0 {
                filled += n as usize;
            } else if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            } else {
                return false;
            }
        }
        true
    }

    /// Closes every descriptor from `first` up.
    ///
    /// # Safety
    /// Only for a freshly forked child that owns nothing else.
    unsafe fn close_from(first: libc::c_int) {
        #[cfg(target_os = "linux")]
        // SAFETY: close_range(2) takes plain integers.
        if unsafe {
            libc::syscall(
                libc::SYS_close_range,
                first as libc::c_uint,
                libc::c_uint::MAX,
                0,
            )
        } == 0
        {
            return;
        }
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit fills the local.
        let max = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            limit.rlim_cur.min(65_536) as libc::c_int
        } else {
            4096
        };
        for fd in first..max {
            // SAFETY: closing a descriptor number; unknown ones are EBADF.
            unsafe { libc::close(fd) };
        }
    }
}

#[cfg(not(unix))]
mod group {
    //! Elsewhere than Unix: the command alone, killed on every path.

    use std::io;
    use std::process::{Child, ExitStatus};

    use super::orphans::{self, Run};

    /// Elsewhere no watchdog: the command is killed on every path speed takes.
    pub(super) struct Watchdog;

    pub(super) fn prepare(_: &mut std::process::Command) -> Option<Watchdog> {
        None
    }

    pub(super) struct Group {
        child: Child,
        _run: Run,
        finished: bool,
    }

    impl Group {
        pub(super) fn adopt(child: Child, run: Run, _: Option<Watchdog>) -> Group {
            Group {
                child,
                _run: run,
                finished: false,
            }
        }

        pub(super) fn child(&mut self) -> &mut Child {
            &mut self.child
        }

        pub(super) fn leader_exited(&mut self) -> io::Result<bool> {
            Ok(self.child.try_wait()?.is_some())
        }

        pub(super) fn kill(&mut self) {
            self.child.kill().ok();
        }

        pub(super) fn finish(&mut self) -> io::Result<ExitStatus> {
            self.finished = true;
            self.kill();
            let status = self.child.wait();
            orphans::disown(self.child.id() as i32);
            status
        }
    }

    impl Drop for Group {
        fn drop(&mut self) {
            if !self.finished {
                self.finish().ok();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> std::process::Command {
        let mut command = std::process::Command::new("sh");
        command.args(["-c", script]);
        command
    }

    fn limits(stdout: Capture) -> Limits {
        Limits {
            timeout: Duration::from_secs(5),
            stdout,
            stderr: Capture::Tail(16),
        }
    }

    #[test]
    fn input_goes_in_and_output_comes_out() {
        let out = run(
            sh("cat; echo oops >&2"),
            b"hello".to_vec(),
            &limits(Capture::Upto(100)),
        )
        .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, b"hello");
        assert_eq!(out.stderr, b"oops\n");
    }

    #[test]
    fn stdout_past_its_cap_stops_the_command_at_once() {
        let started = Instant::now();
        let err = run(sh("yes"), Vec::new(), &limits(Capture::Upto(1 << 20))).unwrap_err();
        assert!(
            matches!(err, Error::TooLarge { stream: "stdout", limit } if limit == 1 << 20),
            "{err:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn stderr_keeps_its_tail_however_long() {
        let out = run(
            sh("head -c 500000 /dev/zero | tr '\\0' a >&2; echo the-end >&2"),
            Vec::new(),
            &limits(Capture::Upto(10)),
        )
        .unwrap();
        assert_eq!(out.stderr, b"aaaaaaaathe-end\n");
    }

    #[test]
    fn a_background_child_holding_the_pipe_does_not_keep_the_command_alive() {
        let started = Instant::now();
        let out = run(
            sh("sleep 30 & echo done"),
            Vec::new(),
            &limits(Capture::Upto(100)),
        )
        .unwrap();
        assert_eq!(out.stdout, b"done\n");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn the_time_limit_ends_the_whole_group() {
        let marker = tempfile::tempdir().unwrap();
        let file = marker.path().join("survived");
        let script = format!("sh -c 'sleep 1; touch {}' ; echo late", file.display());
        let limits = Limits {
            timeout: Duration::from_millis(200),
            ..limits(Capture::Upto(100))
        };
        let err = run(sh(&script), Vec::new(), &limits).unwrap_err();
        assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
        std::thread::sleep(Duration::from_millis(1300));
        assert!(!file.exists(), "a process of the group survived");
    }
}
