//! How the process takes memory from the system.
//!
//! mimalloc asks Linux for transparent huge pages on the regions it maps
//! (`madvise(MADV_HUGEPAGE)`). That suits a long-lived server, not a run
//! of under a second that frees each parse tree as it goes: every first
//! touch of a region zeroes 2 MiB instead of 4 KiB, and when memory is
//! fragmented the kernel compacts it on the spot. On a 5.5 MB Rust
//! repository a cold `speed review --dry-run` peaked at 140 MB resident
//! with huge pages and 90 MB without, used 4% less CPU without, and never
//! stalled in the kernel (with huge pages, 0.2 to 0.4 s of system time
//! now and then).

#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether `prefer_small_pages` changed the process's setting, so that
/// child processes get the user's setting back.
#[cfg(target_os = "linux")]
static CHANGED: AtomicBool = AtomicBool::new(false);

/// Turn transparent huge pages off for this process. Call it first thing:
/// the kernel checks the setting on each page fault, so it covers every
/// region mapped before and after. Elsewhere than Linux, nothing to do.
pub fn prefer_small_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: these prctl calls read and set one flag of this process; they
    // touch no memory of ours.
    unsafe {
        if libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) == 0
            && libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0
        {
            CHANGED.store(true, Ordering::Relaxed);
        }
    }
}

/// The setting is inherited across fork and exec: give a child process
/// (a model command) the user's setting, not ours.
pub fn restore_for_child(command: &mut std::process::Command) {
    #[cfg(target_os = "linux")]
    if CHANGED.load(Ordering::Relaxed) {
        use std::os::unix::process::CommandExt;
        // SAFETY: the closure runs in the child between fork and exec, where
        // only async-signal-safe calls are allowed; prctl is a plain system
        // call that allocates nothing and takes no lock.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_THP_DISABLE, 0, 0, 0, 0);
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

/// Drop `value` on a thread of its own, for what takes long to free (many
/// small allocations, parse trees) and that nothing waits for.
pub fn free_in_background<T: Send + 'static>(value: T) {
    // If no thread can be started, the value is dropped here instead.
    let _ = std::thread::Builder::new()
        .name("speed-free".into())
        .spawn(move || drop(value));
}

/// End the process with `code` once `main` is done, without the exit
/// handlers. They only give memory back that the kernel is about to take
/// whole: mimalloc's returns every page it holds one `madvise` at a time
/// (each a TLB flush on every core), libgit2's frees its caches. On
/// flask's review that was a millisecond of a 36 ms run. stdout is flushed
/// first; stderr is not buffered. A coverage run (`LLVM_PROFILE_FILE` set)
/// writes its profile in an exit handler, so it exits the usual way.
pub fn exit(code: u8) -> std::process::ExitCode {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    #[cfg(unix)]
    if std::env::var_os("LLVM_PROFILE_FILE").is_none() {
        // SAFETY: `_exit` ends the process at once; nothing runs after it,
        // so no Rust value is left half-dropped that anything could see.
        unsafe { libc::_exit(i32::from(code)) };
    }
    std::process::ExitCode::from(code)
}
