//! The `speed` binary: parse flags, resolve settings, run, exit. Nothing else.

/// Indexing allocates and frees millions of small blocks on every core;
/// mimalloc serves them faster than the system allocator (see `benches/impact.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // Before much is allocated: see `memory`.
    speed::memory::prefer_small_pages();
    std::process::ExitCode::from(speed::app::entry(std::env::args_os()))
}
