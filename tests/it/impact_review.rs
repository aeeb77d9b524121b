//! The blast radius through the real binary: a repository with a two-crate
//! Rust workspace and a Python package, a branch that changes a signature,
//! removes a function still called elsewhere and edits bodies, reviewed with
//! `--branch --spec`. Checks the report's `impact` entries site by site, the
//! prompt's "Impact assessment" table, and the symbol cache: written by a
//! review (never by a dry run), invisible to git, and harmless when damaged.

use std::collections::BTreeSet;

use crate::support::model_server::{ModelServer, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::text;
use serde_json::{Value, json};

const SPEC: &str = "# Shelf\n\n## Storage\n\nA store counts the copies of every item it holds.\n";

const STORE_BASE: &str = "\
pub struct Store {
    items: Vec<String>,
}

impl Store {
    pub fn new() -> Store {
        Store { items: Vec::new() }
    }

    pub fn add(&mut self, item: &str) {
        self.items.push(item.to_string());
    }

    pub fn count(&self) -> usize {
        self.items.len()
    }
}

pub fn describe(store: &Store) -> String {
    format!(\"{} items\", store.count())
}
";

const STORE_HEAD: &str = "\
pub struct Store {
    items: Vec<String>,
}

impl Store {
    pub fn new() -> Store {
        Store { items: Vec::new() }
    }

    pub fn add(&mut self, item: &str, copies: usize) {
        for _ in 0..copies {
            self.items.push(item.to_string());
        }
    }

    pub fn count(&self) -> usize {
        self.items.iter().filter(|i| !i.is_empty()).count()
    }
}
";

const APP_MAIN: &str = "\
use shelf_core::Store;
use shelf_core::store::describe as summary;

fn main() {
    let mut store = Store::new();
    store.add(\"a\");
    println!(\"{}\", summary(&store));
}
";

const APP_TEST: &str = "\
use shelf_core::Store;

#[test]
fn counts_what_was_added() {
    let mut s = Store::new();
    s.add(\"x\");
    assert_eq!(s.count(), 1);
}
";

/// main: the workspace and the package; `feature/rework`: the change.
fn shelf() -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[
            ("specs/product/shelf.md", SPEC),
            (
                "Cargo.toml",
                "[workspace]\nmembers = [\"crates/core\", \"crates/app\"]\n",
            ),
            (
                "crates/core/Cargo.toml",
                "[package]\nname = \"shelf-core\"\nversion = \"0.1.0\"\n",
            ),
            ("crates/core/src/lib.rs", "pub mod store;\n\npub use store::Store;\n"),
            ("crates/core/src/store.rs", STORE_BASE),
            (
                "crates/app/Cargo.toml",
                "[package]\nname = \"shelf-app\"\nversion = \"0.1.0\"\n\n[dependencies]\nshelf-core = { path = \"../core\" }\n",
            ),
            ("crates/app/src/main.rs", APP_MAIN),
            ("crates/app/tests/cli.rs", APP_TEST),
            ("pkg/__init__.py", "from .util import slug as make_slug\n"),
            ("pkg/util.py", "def slug(text):\n    return text.lower()\n"),
            (
                "pkg/cli.py",
                "from pkg import make_slug\n\n\ndef run(name):\n    return make_slug(name)\n",
            ),
            (
                "tests/test_util.py",
                "from pkg.util import slug\n\n\ndef test_slug():\n    assert slug(\"A\") == \"a\"\n",
            ),
        ],
        &[],
        "main",
    )
    .unwrap();
    b.commit(
        "feature/rework",
        Some("main"),
        &[
            ("crates/core/src/store.rs", STORE_HEAD),
            (
                "pkg/util.py",
                "def slug(text):\n    return text.strip().lower()\n",
            ),
        ],
        &[],
        "rework the store",
    )
    .unwrap();
    b.checkout("main").unwrap();
    repo::adopt(tmp, root)
}

fn review(repo: &TempRepo, extra: &[&str]) -> Run {
    let mut args = vec![
        "review",
        "--branch",
        "feature/rework",
        "--spec",
        "specs/product/shelf.md",
        "--json",
    ];
    args.extend_from_slice(extra);
    speed(repo.path(), &args, &[])
}

/// The `impact` array of the one review in a `--json` run.
fn impact_of(run: &Run) -> Vec<Value> {
    assert!(matches!(run.code, 0 | 50), "{}", run.transcript());
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    json["reviews"][0]["impact"].as_array().unwrap().clone()
}

fn entry<'a>(impact: &'a [Value], file: &str, symbol: &str) -> &'a Value {
    impact
        .iter()
        .find(|s| s["file"] == file && s["symbol"] == symbol)
        .unwrap_or_else(|| panic!("{symbol} in {file} not reported: {impact:#?}"))
}

/// `file:line` of the exact and unique sites outside the symbol itself.
fn sites(entry: &Value) -> BTreeSet<String> {
    entry["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["inside"] == false)
        .map(|s| format!("{}:{}", s["file"].as_str().unwrap(), s["line"]))
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn each_changed_symbol_is_reported_with_every_site_that_depends_on_it() {
    let repo = shelf();
    let impact = impact_of(&review(&repo, &["--dry-run"]));

    let add = entry(&impact, "crates/core/src/store.rs", "Store::add");
    assert_eq!(add["change"], "signature_changed");
    assert_eq!(add["breaking"], true);
    assert_eq!(
        sites(add),
        set(&["crates/app/src/main.rs:6", "crates/app/tests/cli.rs:6"])
    );
    // A production caller in another crate.
    assert_eq!(add["stability"], "public");
    assert_eq!(add["dependents"]["production"], 1);
    assert_eq!(add["dependents"]["test"], 1);

    // Removed, still imported under an alias and called by it.
    let describe = entry(&impact, "crates/core/src/store.rs", "describe");
    assert_eq!(describe["change"], "removed");
    assert_eq!(describe["breaking"], true);
    assert_eq!(
        sites(describe),
        set(&["crates/app/src/main.rs:2", "crates/app/src/main.rs:7"])
    );

    let count = entry(&impact, "crates/core/src/store.rs", "Store::count");
    assert_eq!(count["change"], "body_changed");
    assert_eq!(count["breaking"], false);
    assert_eq!(sites(count), set(&["crates/app/tests/cli.rs:7"]));
    assert_eq!(count["dependents"]["production"], 0);
    // The test function, at its name (its attribute is on line 3).
    assert_eq!(
        count["dependents"]["list"],
        json!([{"symbol": "counts_what_was_added", "file": "crates/app/tests/cli.rs",
                "line": 4, "test": true}])
    );

    // Python: through a relative import, an `as` alias and a package re-export.
    let slug = entry(&impact, "pkg/util.py", "slug");
    assert_eq!(slug["change"], "body_changed");
    assert_eq!(
        sites(slug),
        set(&[
            "pkg/__init__.py:1",
            "pkg/cli.py:1",
            "pkg/cli.py:5",
            "tests/test_util.py:1",
            "tests/test_util.py:5",
        ])
    );
    let cli_site = slug["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["file"] == "pkg/cli.py" && s["line"] == 5)
        .unwrap();
    assert_eq!(cli_site["dependent"], "run");
    assert_eq!(cli_site["form"], "call");
    assert_eq!(cli_site["test"], false);

    // Riskiest first: the breaking changes lead.
    assert_eq!(impact[0]["breaking"], true);
    assert_eq!(impact[1]["breaking"], true);
}

#[test]
fn the_prompt_has_the_impact_table_after_the_diff_riskiest_first() {
    let repo = shelf();
    let run = review(&repo, &["--dry-run"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let prompt = json["reviews"][0]["prompt"].as_str().unwrap();
    let diff = prompt
        .find("diff --git")
        .expect("the diff is in the prompt");
    let table = prompt.find("Impact assessment").expect("an impact section");
    assert!(table > diff, "the impact table follows the diff");
    let rows: Vec<&str> = prompt[table..]
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| symbol"))
        .collect();
    assert!(rows[0].contains("(breaking)"), "{rows:#?}");
    let add = rows
        .iter()
        .find(|r| r.starts_with("| Store::add "))
        .expect("a row for Store::add");
    assert!(add.contains("crates/app/src/main.rs:6"), "{add}");
    assert!(add.contains("| public |"), "{add}");
}

#[test]
fn the_cache_is_written_by_reviews_only_ignored_by_git_and_harmless_when_damaged() {
    let repo = shelf();
    let cache = repo.path().join(".speed/cache");

    let cold = impact_of(&review(&repo, &["--dry-run"]));
    assert!(
        !cache.exists(),
        "a dry run changes nothing, not even the cache"
    );

    let verdict = json!({
        "dimensions": crate::support::verdicts::dimensions(),
        "verdict": "approve",
        "expectations": "The store counts copies.",
        "criteria": [],
        "spec_verification": [{
            "spec_quote": "A store counts the copies of every item it holds.",
            "spec_section": "Storage", "satisfied": true,
            "evidence": "crates/core/src/store.rs:10", "notes": ""}],
        "missing_from_spec": [], "out_of_scope": [], "issues": [], "strengths": []
    });
    let server = ModelServer::scripted(vec![Reply::openai(&text(&verdict))]);
    repo.config(&format!(
        "[llm]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"test-model\"\ntimeout_secs = 5\n\n[guardian]\nenabled = false\n",
        server.url()
    ));
    let reviewed = impact_of(&review(&repo, &[]));
    assert_eq!(reviewed, cold, "the cache changes no answer");
    assert!(cache.join(".gitignore").is_file());
    let git = git2::Repository::open(repo.path()).unwrap();
    let statuses = git.statuses(None).unwrap();
    let listed: Vec<String> = statuses
        .iter()
        .filter(|s| !s.status().is_ignored())
        .filter_map(|s| s.path().ok().map(str::to_string))
        .collect();
    assert!(
        !listed.iter().any(|p| p.starts_with(".speed/cache")),
        "{listed:?}"
    );

    // Every pack overwritten with garbage: the same answer, from a reparse.
    let mut damaged = 0;
    let mut stack = vec![cache.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "pack") {
                std::fs::write(&path, b"SPP1\xffnot a pack").unwrap();
                damaged += 1;
            }
        }
    }
    assert!(damaged > 0, "the review wrote the cache");
    let again = impact_of(&review(&repo, &["--dry-run"]));
    assert_eq!(again, cold);
}

#[test]
fn files_the_index_could_not_read_are_named_not_dropped() {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    let big = format!("pub const TABLE: &[u8] = &[{}];\n", "0, ".repeat(400_000));
    b.commit(
        "main",
        None,
        &[
            ("specs/product/shelf.md", SPEC),
            ("Cargo.toml", "[package]\nname = \"shelf\"\n"),
            (
                "src/lib.rs",
                "pub mod table;\npub mod broken;\n\npub fn count() -> usize {\n    0\n}\n",
            ),
            ("src/table.rs", &big),
            (
                "src/broken.rs",
                "pub fn half( -> usize {\n    crate::count()\n}\n",
            ),
        ],
        &[],
        "main",
    )
    .unwrap();
    b.commit(
        "feature/rework",
        Some("main"),
        &[(
            "src/lib.rs",
            "pub mod table;\npub mod broken;\n\npub fn count() -> usize {\n    1\n}\n",
        )],
        &[],
        "count one",
    )
    .unwrap();
    let repo = repo::adopt(tmp, root);
    let run = review(&repo, &["--dry-run"]);
    assert_eq!(run.code, 0, "{}", run.transcript());
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let notices: Vec<&str> = json["reviews"][0]["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        notices.iter().any(|n| n.contains("1 file not indexed")
            && n.contains("src/table.rs (")
            && n.contains("byte limit")),
        "{notices:#?}"
    );
    assert!(
        notices
            .iter()
            .any(|n| n.contains("syntax errors") && n.contains("src/broken.rs")),
        "{notices:#?}"
    );
    let prompt = json["reviews"][0]["prompt"].as_str().unwrap();
    assert!(prompt.contains("src/table.rs ("), "the model is told too");
}

const LOWARGS: &str =
    "#[derive(Default)]\npub struct LowArgs {\n    pub max_filesize: Option<u64>,\n}\n";
const HUMAN: &str = "pub fn parse_human_readable_size(size: &str) -> Result<u64, String> {\n    match size.strip_suffix('K') {\n        Some(n) => n.parse::<u64>().map(|n| n << 10).map_err(|e| e.to_string()),\n        None => size.parse::<u64>().map_err(|e| e.to_string()),\n    }\n}\n";

/// ripgrep's shape: `LowArgs` read everywhere gains a field while
/// `parse_human_readable_size`, called from one place, changes behaviour.
fn flags() -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    let user = |n: u8| {
        format!(
            "use crate::lowargs::LowArgs;\n\npub fn limit{n}(low: &LowArgs) -> Option<u64> {{\n    low.max_filesize\n}}\n"
        )
    };
    let (a, b2, c) = (user(1), user(2), user(3));
    let parse = "use crate::human::parse_human_readable_size;\nuse crate::lowargs::LowArgs;\n\npub fn parse(v: &str) -> LowArgs {\n    let mut low = LowArgs::default();\n    low.max_filesize = parse_human_readable_size(v).ok();\n    low\n}\n";
    b.commit(
        "main",
        None,
        &[
            ("specs/product/shelf.md", SPEC),
            ("Cargo.toml", "[package]\nname = \"flags\"\nversion = \"0.1.0\"\n"),
            (
                "src/lib.rs",
                "pub mod human;\npub mod lowargs;\npub mod parse;\npub mod a;\npub mod b;\npub mod c;\n",
            ),
            ("src/lowargs.rs", LOWARGS),
            ("src/human.rs", HUMAN),
            ("src/parse.rs", parse),
            ("src/a.rs", &a),
            ("src/b.rs", &b2),
            ("src/c.rs", &c),
        ],
        &[],
        "main",
    )
    .unwrap();
    b.commit(
        "feature/rework",
        Some("main"),
        &[
            (
                "src/lowargs.rs",
                &LOWARGS.replace(
                    "    pub max_filesize: Option<u64>,\n",
                    "    pub max_filesize: Option<u64>,\n    pub min_filesize: Option<u64>,\n",
                ),
            ),
            (
                "src/human.rs",
                &HUMAN.replace("strip_suffix('K')", "strip_suffix(['K', 'k'])"),
            ),
        ],
        &[],
        "min filesize",
    )
    .unwrap();
    b.checkout("main").unwrap();
    repo::adopt(tmp, root)
}

#[test]
fn a_type_that_only_gained_a_field_ranks_below_a_function_whose_behaviour_changed() {
    let repo = flags();
    let run = review(&repo, &["--dry-run"]);
    let impact = impact_of(&run);
    let order: Vec<(&str, &str, bool)> = impact
        .iter()
        .map(|s| {
            (
                s["symbol"].as_str().unwrap(),
                s["change"].as_str().unwrap(),
                s["breaking"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("parse_human_readable_size", "body_changed", false),
            ("LowArgs", "members_added", false),
        ]
    );
    let low = entry(&impact, "src/lowargs.rs", "LowArgs");
    assert_eq!(low["dependents"]["files"].as_array().unwrap().len(), 4);

    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let prompt = json["reviews"][0]["prompt"].as_str().unwrap();
    let table = prompt.find("Impact assessment").expect("an impact section");
    let rows: Vec<&str> = prompt[table..]
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| symbol"))
        .collect();
    assert!(
        rows[0].starts_with("| parse_human_readable_size "),
        "{rows:#?}"
    );
    assert!(
        rows[1].starts_with("| LowArgs ") && rows[1].contains("| members added |"),
        "{rows:#?}"
    );
    assert!(!prompt.contains("(breaking)"), "{rows:#?}");
}
