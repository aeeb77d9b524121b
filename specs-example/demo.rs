//! The demo: builds the example library-catalog repository from
//! `specs-example/` into `target/speed-demo` and runs
//! `speed review --task-id 2 --dry-run` inside it, printing the prompt speed
//! would send for the task that quietly deviates from its spec.
//!
//! Run with `cargo run --example demo`.

#[path = "materialize.rs"]
mod materialize;

use std::path::Path;

fn main() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dest = manifest.join("target").join("speed-demo");
    if dest.exists() {
        if let Err(e) = std::fs::remove_dir_all(&dest) {
            eprintln!("error: cannot remove {}: {e}", dest.display());
            std::process::exit(1);
        }
    }
    let built = match materialize::materialize(&manifest.join("specs-example"), &dest) {
        Ok(built) => built,
        Err(e) => {
            eprintln!("error: cannot build the example repository: {e}");
            std::process::exit(1);
        }
    };
    eprintln!("example repository: {}", built.root.display());
    if let Err(e) = std::env::set_current_dir(&built.root) {
        eprintln!("error: cannot enter {}: {e}", built.root.display());
        std::process::exit(1);
    }
    std::process::exit(
        speed::app::entry(["speed", "review", "--task-id", "2", "--dry-run"]) as i32,
    );
}
