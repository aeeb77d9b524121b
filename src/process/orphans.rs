//! The descendants of a command that leave its process group (a daemon's
//! fork, `setsid`, fork again), which killing the group does not reach.
//!
//! On Linux, `adopt` makes speed a child subreaper
//! (`prctl(PR_SET_CHILD_SUBREAPER)`): a process whose parent dies is then
//! re-parented to speed instead of init, so every descendant of a command
//! whose chain of parents broke is one of speed's own children. After a
//! command's group is killed, `sweep` looks at speed's children (in
//! `/proc/*/stat`), kills those that belong to the command, reaps the dead,
//! and goes on until the group and those orphans are gone: a killed orphan
//! hands its own children to speed in turn.
//!
//! Which command an orphan belongs to is told by a marker in its
//! environment: every command gets `SPEED_RUN_ID=<speed's pid>.<n>`, which
//! everything it starts inherits (the cookie Jenkins' process tree killer
//! uses), `setsid` or not. A sweep kills an orphan whose marker names its own
//! command or one that has finished; never one whose command still runs
//! (concurrent reviews run several commands at once, and a test runner may
//! still need the server it daemonized); and one that carries no marker of
//! ours (it cleared its environment) only when no other command runs. When
//! speed is interrupted, every orphan goes.
//!
//! speed's own children, the commands' leaders and their watchdogs, are
//! registered as they are started, under the lock a sweep holds while it
//! decides, and are never touched here: whoever started one reaps it. So
//! every child process speed starts must be started through
//! `crate::process`; anything else would be taken for an orphan.
//!
//! Elsewhere than Linux there is no subreaper: `adopt` does nothing, nothing
//! is swept, and a descendant that leaves the process group outlives its
//! command. If speed itself is killed with SIGKILL, no sweep runs either:
//! only the group is ended, by the watchdog.

// Elsewhere than Linux, what reads `/proc` is not built.
#![cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The environment variable naming the command a process descends from.
const MARKER: &str = "SPEED_RUN_ID";

/// Set once speed is a subreaper: only then do orphans come to it.
static ADOPTING: AtomicBool = AtomicBool::new(false);

static NEXT_RUN: AtomicU64 = AtomicU64::new(1);

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    own: BTreeMap::new(),
    live: BTreeSet::new(),
});

struct Registry {
    /// speed's own children (leaders and watchdogs), counted: a pid freed by
    /// one owner and taken by a new child before the first owner disowns it
    /// stays registered for the second.
    own: BTreeMap<i32, usize>,
    /// Commands that have not finished.
    live: BTreeSet<u64>,
}

fn lock() -> MutexGuard<'static, Registry> {
    // A panic while the lock was held leaves whole entries behind.
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Makes speed the reaper of the orphans of what it starts (Linux; nothing
/// elsewhere). Call once, early, in the binary only: the library's own
/// tests start children without `crate::process`, which a sweep would take
/// for orphans.
pub fn adopt() -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // SAFETY: prctl with plain integer arguments.
        if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        ADOPTING.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// One command among those speed runs, live until dropped.
#[derive(Debug)]
pub(super) struct Run {
    id: u64,
}

impl Run {
    pub(super) fn start() -> Run {
        let id = NEXT_RUN.fetch_add(1, Ordering::SeqCst);
        lock().live.insert(id);
        Run { id }
    }

    /// Puts the run's marker in the command's environment.
    pub(super) fn mark(&self, command: &mut std::process::Command) {
        command.env(MARKER, format!("{}.{}", std::process::id(), self.id));
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        lock().live.remove(&self.id);
    }
}

/// Starts one of speed's own children and registers it before any sweep
/// can see it: `start` forks and returns what it made with the child's pid.
pub(super) fn own<T>(start: impl FnOnce() -> io::Result<(T, i32)>) -> io::Result<T> {
    let mut registry = lock();
    let (made, pid) = start()?;
    *registry.own.entry(pid).or_default() += 1;
    Ok(made)
}

/// Forgets a child of speed's own, once its owner has reaped it.
pub(super) fn disown(pid: i32) {
    let mut registry = lock();
    if let Some(count) = registry.own.get_mut(&pid) {
        *count -= 1;
        if *count == 0 {
            registry.own.remove(&pid);
        }
    }
}

/// Whose orphans a sweep ends.
#[derive(Clone, Copy)]
pub(super) enum Whose<'a> {
    /// Those of one command (see the module's doc).
    Run(&'a Run),
    /// All of them: speed is ending.
    All,
}

/// After `pgid`, a command's group, was killed: waits until it is gone,
/// killing it again while any of it lives, and ends the orphans `whose`
/// says, and theirs, reaping every dead orphan it meets. Bounded in time: a
/// process the kernel cannot end (uninterruptible I/O) is left.
pub(super) fn sweep(pgid: i32, whose: Whose) {
    if ADOPTING.load(Ordering::SeqCst) {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        linux::sweep(pgid, whose);
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = (pgid, whose);
}

/// Whether a sweep for run `run` ends an orphan carrying `marker` (the run
/// number of one of this speed's commands, if it carries one): its own
/// command's or a finished one's, yes; a running one's, no; none of ours,
/// only when no other command runs.
fn claims(run: u64, marker: Option<u64>, live: &BTreeSet<u64>) -> bool {
    match marker {
        Some(id) => id == run || !live.contains(&id),
        None => live.iter().all(|id| *id == run),
    }
}

/// The run number in an environment block (`KEY=value\0…`) when its
/// `SPEED_RUN_ID` names this speed (`speed`, its pid); the first one counts,
/// as for `getenv`.
fn marker_in(environ: &[u8], speed: u32) -> Option<u64> {
    let prefix = format!("{MARKER}=");
    let value = environ
        .split(|b| *b == 0)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))?;
    let value = std::str::from_utf8(value).ok()?;
    let (pid, run) = value.split_once('.')?;
    (pid.parse::<u32>().ok()? == speed)
        .then(|| run.parse().ok())
        .flatten()
}

/// What a sweep needs of a process, from `/proc/<pid>/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Process {
    pid: i32,
    state: char,
    ppid: i32,
    pgrp: i32,
}

impl Process {
    /// `pid (comm) state ppid pgrp …`; the command name may hold spaces and
    /// parentheses, so the fields are counted from its last `)`.
    fn parse(stat: &str) -> Option<Process> {
        let (pid, _) = stat.split_once(" (")?;
        let rest = &stat[stat.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace();
        let state = fields.next()?.chars().next()?;
        Some(Process {
            pid: pid.trim().parse().ok()?,
            state,
            ppid: fields.next()?.parse().ok()?,
            pgrp: fields.next()?.parse().ok()?,
        })
    }

    /// Exited, waiting to be reaped (or being reaped).
    fn dead(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod linux {
    use std::collections::BTreeSet;
    use std::io::Read;
    use std::time::{Duration, Instant};

    use super::{Process, Registry, Whose, claims, lock, marker_in};

    /// The pause between two looks, while killed processes exit.
    const ROUND: Duration = Duration::from_millis(5);
    /// How long a sweep goes on at most.
    const LIMIT: Duration = Duration::from_secs(2);
    /// How much of an environment is read: more than any real one.
    const ENVIRON_CAP: u64 = 8 << 20;

    pub(super) fn sweep(pgid: i32, whose: Whose) {
        let started = Instant::now();
        let mut looks = 0;
        let mut ended = BTreeSet::new();
        loop {
            // Decided and acted on under the lock: no child can be started
            // (and registered) or reaped by another sweep meanwhile, so a
            // pid seen as an unregistered child stays one until reaped here.
            let pending = round(pgid, whose, &lock(), &mut ended);
            looks += 1;
            if !pending {
                break;
            }
            if started.elapsed() >= LIMIT {
                tracing::warn!(
                    "processes started by the command of group {pgid} were still running {} after being killed",
                    humantime::format_duration(LIMIT)
                );
                break;
            }
            std::thread::sleep(ROUND);
        }
        tracing::debug!(
            "swept group {pgid}: {looks} looks at the processes, {} orphans ended, in {:?}",
            ended.len(),
            started.elapsed()
        );
    }

    /// One look at every process: kills the group again while any of it
    /// lives, kills the orphans that are `whose` (adding them to `killed`),
    /// reaps the dead ones. Whether anything is left to wait for.
    fn round(pgid: i32, whose: Whose, registry: &Registry, killed: &mut BTreeSet<i32>) -> bool {
        let me = std::process::id();
        let mut pending = false;
        let mut group_lives = false;
        for process in processes() {
            if process.pgrp == pgid && !process.dead() {
                group_lives = true;
            }
            if process.ppid != me as i32 || registry.own.contains_key(&process.pid) {
                continue;
            }
            if process.dead() {
                // A dead orphan is nobody's to wait for: reaping it takes
                // nothing from anyone.
                let mut status = 0;
                // SAFETY: waits for a child of ours that no owner reaps.
                unsafe { libc::waitpid(process.pid, &mut status, libc::WNOHANG) };
                continue;
            }
            let ours = match whose {
                Whose::All => true,
                Whose::Run(run) => claims(run.id, marker_of(process.pid, me), &registry.live),
            };
            if ours {
                // SAFETY: kill(2) on a child of ours, unreaped, so its pid
                // is still its own.
                unsafe { libc::kill(process.pid, libc::SIGKILL) };
                pending = true;
                killed.insert(process.pid);
            }
        }
        if group_lives {
            // SAFETY: the group's leader is not reaped yet, so its id is
            // still the group's.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            pending = true;
        }
        pending
    }

    /// Every process's pid, state, parent and group; those that vanish while
    /// being read are skipped.
    fn processes() -> Vec<Process> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter(|e| e.file_name().to_str().is_some_and(is_pid))
            .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
            .filter_map(|stat| Process::parse(&stat))
            .collect()
    }

    fn is_pid(name: &str) -> bool {
        !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit())
    }

    /// The run marker in a process's environment. None when it has none of
    /// ours, or when it cannot be read (a set-uid program's).
    fn marker_of(pid: i32, me: u32) -> Option<u64> {
        let mut environ = Vec::new();
        std::fs::File::open(format!("/proc/{pid}/environ"))
            .ok()?
            .take(ENVIRON_CAP)
            .read_to_end(&mut environ)
            .ok()?;
        marker_in(&environ, me)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_parses_whatever_the_command_name_holds() {
        let stat = "4242 (we ird) (name)) S 17 4240 4240 0 -1 4194560 100 0 0 0";
        assert_eq!(
            Process::parse(stat),
            Some(Process {
                pid: 4242,
                state: 'S',
                ppid: 17,
                pgrp: 4240
            })
        );
        assert!(Process::parse("4242 (z) Z 1 4242 4242").unwrap().dead());
        assert_eq!(Process::parse("garbage"), None);
        assert_eq!(Process::parse("12 (x) S"), None);
    }

    #[test]
    fn the_marker_names_a_run_of_this_speed_only() {
        let env = b"HOME=/h\0SPEED_RUN_ID=700.12\0PATH=/bin\0";
        assert_eq!(marker_in(env, 700), Some(12));
        assert_eq!(marker_in(env, 701), None, "another speed's command");
        assert_eq!(marker_in(b"HOME=/h\0", 700), None);
        assert_eq!(marker_in(b"SPEED_RUN_ID=700.x\0", 700), None);
        assert_eq!(marker_in(b"XSPEED_RUN_ID=700.3\0", 700), None);
        assert_eq!(
            marker_in(b"SPEED_RUN_ID=700.3\0SPEED_RUN_ID=700.4", 700),
            Some(3),
            "the first counts, as for getenv"
        );
        assert_eq!(marker_in(b"", 700), None);
    }

    #[test]
    fn a_sweep_never_claims_an_orphan_whose_command_still_runs() {
        let live: BTreeSet<u64> = [3, 5].into();
        assert!(claims(3, Some(3), &live), "its own");
        assert!(!claims(3, Some(5), &live), "run 5 still runs");
        assert!(claims(3, Some(4), &live), "run 4 has finished");
        assert!(!claims(3, None, &live), "unmarked, and run 5 runs");
        assert!(claims(3, None, &[3].into()), "unmarked, nothing else runs");
    }

    #[test]
    fn runs_are_live_until_dropped_and_owned_pids_are_counted() {
        let run = Run::start();
        assert!(lock().live.contains(&run.id));
        let id = run.id;
        drop(run);
        assert!(!lock().live.contains(&id));

        // A pid far above any real one, so no other test's child is it.
        let pid = i32::MAX - 7;
        own(|| Ok(((), pid))).unwrap();
        own(|| Ok(((), pid))).unwrap();
        disown(pid);
        assert_eq!(
            lock().own.get(&pid),
            Some(&1),
            "taken again before the first owner let go"
        );
        disown(pid);
        assert!(!lock().own.contains_key(&pid));
        assert!(own(|| Err::<((), i32), _>(io::Error::other("no fork"))).is_err());
        assert!(!lock().own.contains_key(&0));
    }
}
