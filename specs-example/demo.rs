//! The demo: builds the example library-catalog repository from
//! `specs-example/` into `target/speed-demo`, then, with no model server:
//!
//! 1. adds a branch `demo/late-fines` on top of task 2 that leaves a
//!    `todo!()`, a `dbg!` and a password behind, and reviews it offline
//!    (`speed review --offline --branch …`): speed's own checks find them,
//!    and the password never appears in what speed prints or writes;
//! 2. runs `speed review --task-id 2 --dry-run`, printing the prompt speed
//!    would send a model for the task that quietly deviates from its spec;
//! 3. writes the draft spec of the next feature, late fines, and its PRD
//!    (`specs-example/drafts/`) into the working tree, and runs `speed spec
//!    review late-fines --offline`: speed's own spec checks find the PRD
//!    requirements the draft does not cover, a TODO, an empty section and a
//!    requirement list nothing could test.
//!
//! Run with `cargo run --release --features demo --bin speed-demo` (a
//! binary behind a feature, not an example: see `Cargo.toml`). It exits 0
//! when every step did what it shows (the offline review and the spec review
//! request changes: exit 50).

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
    let example = manifest.join("specs-example");
    let built = materialize::materialize(&example, &dest)
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

    let drafts = materialize::write_drafts(&example, &built.root)
        .unwrap_or_else(|e| fail(format!("cannot write the drafts: {e}")));
    eprintln!("\ndrafts in the working tree: {}", drafts.join(", "));
    eprintln!("\n$ speed spec review late-fines --offline");
    let spec = speed::app::entry(["speed", "spec", "review", "late-fines", "--offline"]) as i32;
    let done = offline == 50 && dry == 0 && spec == 50;
    std::process::exit(if done { 0 } else { 1 });
}
