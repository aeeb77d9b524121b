//! The `speed` binary: parse flags, resolve settings, run, exit. Nothing else.

/// Indexing allocates and frees millions of small blocks on every core;
/// mimalloc serves them faster than the system allocator (see `benches/impact.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // Before much is allocated: see `memory`.
    speed::memory::prefer_small_pages();
    // Before any command runs: what a command leaves behind outside its
    // process group comes back to speed to be ended (see `process`).
    if let Err(err) = speed::process::adopt_orphans() {
        eprintln!(
            "warning: cannot become the reaper of what model and check commands leave behind, so a daemon one of them starts may outlive it: {err}"
        );
    }
    // After it, nothing is left to do but exit: see `memory::exit`.
    speed::memory::exit(speed::app::entry(std::env::args_os()))
}
