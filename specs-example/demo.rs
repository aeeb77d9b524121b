//! The demo: builds the example library-catalog repository from
//! `specs-example/` into `target/speed-demo`, then, with no model server:
//!
//! 1. adds a branch `demo/late-fines` on top of task 2 that leaves a
//!    `todo!()`, a `dbg!` and a password behind, and reviews it offline
//!    (`speed review --offline --branch …`): speed's own checks find them,
//!    and the password never appears in what speed prints or writes;
//! 2. runs `speed review --task-id 2 --dry-run`, printing the prompt speed
//!    would send a model for the task that quietly deviates from its spec.
//!
//! Run with `cargo run --example demo`. It exits 0 when both steps did what
//! they show (the offline review requests changes: exit 50).

#[path = "materialize.rs"]
mod materialize;

use std::path::Path;

const FINES: &str = "//! Late fines.

/// The fine in cents for a loan returned `days_late` days after its due date.
pub fn fine_for(days_late: u32) -> u32 {
    dbg!(days_late);
    todo!()
}
";

const PAYMENTS: &str = "[payments]
provider = \"kiosk-pay\"
webhook_secret = \"w8Kq2ZxN4vLp9RtY\"
";

fn fail(message: String) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1);
}

fn main() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dest = manifest.join("target").join("speed-demo");
    if dest.exists() {
        if let Err(e) = std::fs::remove_dir_all(&dest) {
            fail(format!("cannot remove {}: {e}", dest.display()));
        }
    }
    let built = materialize::materialize(&manifest.join("specs-example"), &dest)
        .unwrap_or_else(|e| fail(format!("cannot build the example repository: {e}")));
    let mut repo = materialize::RepoBuilder::open(&built.root).unwrap_or_else(|e| fail(e));
    repo.commit(
        "demo/late-fines",
        Some("speed/task-2"),
        &[
            ("catalog/src/fines.rs", FINES),
            ("deploy/payments.toml", PAYMENTS),
        ],
        &[],
        "Late fines (work in progress)",
    )
    .unwrap_or_else(|e| fail(e));
    eprintln!("example repository: {}", built.root.display());
    if let Err(e) = std::env::set_current_dir(&built.root) {
        fail(format!("cannot enter {}: {e}", built.root.display()));
    }

    eprintln!(
        "\n$ speed review --offline --branch demo/late-fines --spec specs/product/library-catalog.md"
    );
    let offline = speed::app::entry([
        "speed",
        "review",
        "--offline",
        "--branch",
        "demo/late-fines",
        "--spec",
        "specs/product/library-catalog.md",
    ]) as i32;

    eprintln!("\n$ speed review --task-id 2 --dry-run");
    let dry = speed::app::entry(["speed", "review", "--task-id", "2", "--dry-run"]) as i32;
    std::process::exit(if offline == 50 && dry == 0 { 0 } else { 1 });
}
