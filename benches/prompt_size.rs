//! The library example's prompts in tokens, against their size before
//! issue 43 (run on demand: `cargo bench --bench prompt_size`).
//!
//! Issue 43 asked for the library-style task's prompt a fifth smaller with
//! nothing a reviewer needs removed. This builds the example product of
//! `specs-example/` (its main branch and one branch per task, as the demo
//! and the tests do) in a temporary folder and runs the real binary's dry
//! run of each task at the default budget, where everything fits and
//! nothing is cut (`speed review --task-id N --dry-run --json`): the
//! prompt's tokens as speed counts them (o200k_base), by section, and how
//! much smaller than before issue 43 each task's prompt is. Machine and
//! load do not change it: it is a property of the prompts.

use std::path::Path;
use std::process::Command;

#[path = "../specs-example/materialize.rs"]
mod materialize;

/// Each task's prompt before issue 43 changed the prompt (the same dry
/// run; `docs/benchmarks.md#prompt-size`), in tokens.
const BEFORE_43: &[(&str, usize)] = &[("1", 7_180), ("2", 8_222), ("3", 10_124)];

/// What issue 43 asked: a fifth smaller.
const AIM: f64 = 0.20;

fn main() {
    let speed = std::env::var("SPEED_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_speed").into());
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let root = tmp.path().join("repo");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs-example");
    materialize::materialize(&example, &root).expect("the example repository");
    println!(
        "the library example (specs-example), `speed review --task-id N --dry-run --json` at the default budget\n"
    );
    println!("| task | before issue 43 | now | smaller | the largest sections |");
    println!("| --- | ---: | ---: | ---: | --- |");
    let mut missed = 0;
    for &(id, before) in BEFORE_43 {
        let out = Command::new(&speed)
            .args(["review", "--task-id", id, "--dry-run", "--json"])
            .current_dir(&root)
            .output()
            .expect("speed runs");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "task {id}: no JSON ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let review = &json["reviews"][0];
        let now = review["tokens"]["total"]
            .as_u64()
            .unwrap_or_else(|| panic!("task {id}: no token count: {review}"))
            as usize;
        let mut sections: Vec<(String, u64)> = review["sections"]
            .as_array()
            .map(|s| {
                s.iter()
                    .filter_map(|s| Some((s["name"].as_str()?.to_string(), s["tokens"].as_u64()?)))
                    .collect()
            })
            .unwrap_or_default();
        sections.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let largest: Vec<String> = sections
            .iter()
            .take(4)
            .map(|(name, tokens)| format!("{name} {tokens}"))
            .collect();
        let smaller = 1.0 - now as f64 / before as f64;
        if smaller < AIM {
            missed += 1;
        }
        println!(
            "| {id} | {before} | {now} | {:.1}% | {} |",
            smaller * 100.0,
            largest.join(", ")
        );
    }
    println!(
        "\n{}",
        if missed == 0 {
            format!(
                "every task's prompt is at least {:.0}% smaller",
                AIM * 100.0
            )
        } else {
            format!("{missed} task(s) less than {:.0}% smaller", AIM * 100.0)
        }
    );
}
