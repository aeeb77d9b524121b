//! How a review in parts is assembled (issue 43 §5): a part holds code
//! together with its tests, risk ranks files by the code they change (not
//! their doc comments), and each part sends the spec sections its own code
//! touches. Real git, the real binary, dry runs.

use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::speed;
use serde_json::Value;

/// The modules of the shop, each with a spec section whose sentence only
/// that module's code touches.
const MODULES: &[(&str, &str)] = &[
    (
        "cart",
        "The basket holds at most `basket_limit` entries; `basket_add` refuses the next one with `BasketFull`.",
    ),
    (
        "ledger",
        "Every `ledger_post` is balanced: `journal_debit` and `journal_credit` of one posting sum to zero.",
    ),
    (
        "shipping",
        "A `parcel_weight` over `courier_cap` grams is split into several parcels by `parcel_split`.",
    ),
];

fn spec() -> String {
    let mut out = String::from("# Shop\n\nThe shop's product specification.\n");
    for (module, sentence) in MODULES {
        out.push_str(&format!("\n## {}\n\n{sentence}\n", title(module)));
        // Enough text that the related share of a small budget holds one
        // module's section, not all three.
        for n in 0..14 {
            out.push_str(&format!(
                "Rule {n} of the {module} module: the {module} records are kept consistent with the {module} invariants after every operation, and each {module} error names the record it concerns.\n"
            ));
        }
    }
    for area in ["Accounts", "Search", "Reviews", "Returns"] {
        out.push_str(&format!(
            "\n## {area}\n\nThe {area} area is described elsewhere; nothing in it concerns the modules above.\n"
        ));
    }
    out
}

fn title(module: &str) -> String {
    let mut c = module.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

/// The identifiers of a module's code: its spec sentence's.
fn words(module: &str) -> [&'static str; 3] {
    match module {
        "cart" => ["basket_limit", "basket_add", "BasketFull"],
        "ledger" => ["ledger_post", "journal_debit", "journal_credit"],
        _ => ["parcel_weight", "courier_cap", "parcel_split"],
    }
}

fn source(module: &str, rev: usize) -> String {
    let [a, b, c] = words(module);
    let mut out = format!("//! The {module} module.\n\n");
    for f in 0..18 {
        out.push_str(&format!(
            "pub fn {b}_{f}(x: u64) -> Result<u64, {c}> {{\n    let {a} = x + {};\n    {b}({a})\n}}\n\n",
            f * (rev + 1)
        ));
    }
    out
}

fn test_file(module: &str, rev: usize) -> String {
    let [_, b, _] = words(module);
    let mut out = format!("//! Tests of the {module} module.\n\n");
    for f in 0..6 {
        out.push_str(&format!(
            "#[test]\nfn {module}_case_{f}() {{\n    assert_eq!(shop::{b}_{f}({rev}).unwrap(), {});\n}}\n\n",
            rev + f * (rev + 1)
        ));
    }
    out
}

/// A file whose change is nearly all doc comments: more changed lines than
/// any other, two of them code (70 lines of docs).
fn docs_heavy(rev: usize) -> String {
    let mut out = String::from("//! Notes.\n\n");
    if rev > 0 {
        for n in 0..70 {
            out.push_str(&format!(
                "/// Note {n}: how the shop's notes are written.\n"
            ));
        }
    }
    out.push_str(&format!("pub fn notes() -> u32 {{\n    {rev}\n}}\n"));
    out
}

fn shop() -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    let files = |rev: usize| -> Vec<(String, String)> {
        let mut files = vec![("src/notes.rs".to_string(), docs_heavy(rev))];
        for (module, _) in MODULES {
            files.push((format!("src/{module}.rs"), source(module, rev)));
            files.push((format!("tests/{module}.rs"), test_file(module, rev)));
        }
        files
    };
    let spec = spec();
    let mut main: Vec<(&str, &str)> = vec![("specs/shop.md", spec.as_str())];
    let before = files(0);
    main.extend(before.iter().map(|(p, c)| (p.as_str(), c.as_str())));
    b.commit("main", None, &main, &[], "main").unwrap();
    let after = files(1);
    let task: Vec<(&str, &str)> = after
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    b.commit("task", Some("main"), &task, &[], "task").unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    // The task references the shop's overview; the modules' sections are
    // ranked for the code.
    repo.write(
        ".speed/tasks/1.json",
        &serde_json::to_string_pretty(&serde_json::json!({
            "id": "1",
            "title": "Rework the shop's modules",
            "status": "done",
            "branch": "task",
            "description": "Every module's functions take the new offsets.",
            "acceptance_criteria": [
                {"criterion": "The offsets are applied in every module", "verify_by": "test"}
            ],
            "spec_references": [{"spec": "specs/shop.md", "section": "Accounts"}]
        }))
        .unwrap(),
    );
    repo
}

fn dry_run(repo: &TempRepo, budget: &str) -> Value {
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "1",
            "--dry-run",
            "--json",
            "--budget",
            budget,
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.transcript()));
    out["reviews"][0].clone()
}

/// Each part's prompt.
fn parts_of(prompt: &str) -> Vec<String> {
    if !prompt.starts_with("===== part 1 of ") {
        return vec![prompt.to_string()];
    }
    prompt
        .split("===== part ")
        .skip(1)
        .map(str::to_string)
        .collect()
}

/// The files whose changes a part shows, in the order shown.
fn shown(part: &str) -> Vec<String> {
    part.lines()
        .filter_map(|l| l.strip_prefix("diff --git a/"))
        .map(|rest| rest.split(' ').next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_review_in_parts_pairs_code_with_its_tests_ranks_by_code_and_sends_each_part_its_spec() {
    let repo = shop();
    let r = dry_run(&repo, "5600");
    let prompts = parts_of(r["prompt"].as_str().unwrap());
    assert!(prompts.len() > 1, "one part: {}", r["prompt"]);
    assert_eq!(r["coverage"]["files_unseen"], 0, "{}", r["coverage"]);
    let order: Vec<Vec<String>> = prompts.iter().map(|p| shown(p)).collect();
    let all: Vec<&String> = order.iter().flatten().collect();

    // Risk by code: the notes' 70 lines of doc comments and 2 of code come
    // after every module's 36 lines of code.
    let notes = all.iter().position(|p| *p == "src/notes.rs").unwrap();
    for (module, _) in MODULES {
        let at = all
            .iter()
            .position(|p| **p == format!("src/{module}.rs"))
            .unwrap_or_else(|| panic!("src/{module}.rs shown: {order:?}"));
        assert!(at < notes, "{order:?}");
    }

    for (module, sentence) in MODULES {
        let src = format!("src/{module}.rs");
        let test = format!("tests/{module}.rs");
        let part = order
            .iter()
            .position(|files| files.contains(&src))
            .unwrap_or_else(|| panic!("{src} shown: {order:?}"));
        // The part that shows the code shows its tests, right after it.
        let files = &order[part];
        let at = files.iter().position(|f| *f == src).unwrap();
        assert_eq!(
            files.get(at + 1),
            Some(&test),
            "part {} of {order:?}",
            part + 1
        );
        // And the spec sentence that code may violate.
        assert!(
            prompts[part].contains(sentence),
            "part {} shows {src} without § {}: {}",
            part + 1,
            title(module),
            prompts[part]
        );
    }
}
