//! Command checks that read their tools, end to end: a real Rust and a
//! real Python change (`fixtures/tools/{rust,python}/{before,after}`)
//! reviewed offline with clippy, pytest, ruff and mypy as command checks.
//! The tools' output is the one they really printed on that change,
//! recorded in `fixtures/tools/` (ruff's absolute paths were the recording
//! folder: the command puts the checkout's in their place), so the tests
//! need none of the tools installed. Also: findings on untouched lines
//! judged against the base commit, unreadable and hostile output.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};

const SPEC: &str =
    "# Fines\n\n## Fines\n\nA late book costs 10 cents a day, capped at the book's price.\n";

fn fixtures() -> String {
    format!("{}/fixtures/tools", env!("CARGO_MANIFEST_DIR"))
}

/// The files of a fixture project (`rust/before`, `python/after`, …).
fn files_of(project: &str) -> Vec<(String, String)> {
    let base = Path::new(&fixtures()).join(project);
    let mut out = Vec::new();
    let mut stack = vec![base.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(&base)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_string();
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// main: the Rust crate and the Python package before the change; task 1's
/// branch: after it.
pub fn real_change() -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    let before: Vec<(String, String)> =
        [files_of("rust/before"), files_of("python/before")].concat();
    let after: Vec<(String, String)> = [files_of("rust/after"), files_of("python/after")].concat();
    let mut main: Vec<(&str, &str)> = vec![("specs/product/fines.md", SPEC)];
    main.extend(before.iter().map(|(p, c)| (p.as_str(), c.as_str())));
    b.commit("main", None, &main, &[], "main").unwrap();
    let change: Vec<(&str, &str)> = after
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    b.commit("speed/task-1", Some("main"), &change, &[], "capped fines")
        .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    repo.write(
        ".speed/tasks/1.json",
        &json!({"id": 1, "title": "Capped fines", "status": "done",
                "files_touched": ["src/lib.rs", ".config/nextest.toml", "fines/calc.py", "fines/export.py", "tests/test_calc.py"],
                "spec_references": [{"spec": "specs/product/fines.md", "section": "Fines"}]})
        .to_string(),
    );
    repo
}

/// The four tools as command checks, replaying what each printed (with
/// its exit status) on the change.
pub const TOOLS: &str = r#"
[[checks.command]]
name = "clippy"
run = ["sh", "-c", 'cat "$TOOLS/rust/clippy-deny-warnings.jsonl"; exit 101']
parser = "cargo"
category = "lint"

[[checks.command]]
name = "pytest"
run = ["sh", "-c", 'cp "$TOOLS/python/pytest-junit.xml" report.xml; exit 1']
parser = "junit"
report = "report.xml"
category = "test"

[[checks.command]]
name = "ruff"
run = ["sh", "-c", 'sed "s#/tmp/speed-tools/py#$(pwd)#g" "$TOOLS/python/ruff.json"; exit 1']
parser = "ruff"
category = "lint"

[[checks.command]]
name = "mypy"
run = ["sh", "-c", 'cat "$TOOLS/python/mypy-columns.txt"; exit 1']
parser = "mypy"
category = "typecheck"
"#;

pub fn review(repo: &TempRepo, format: &str) -> Run {
    speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--format", format],
        &[("TOOLS", &fixtures())],
    )
}

/// `check file:line:col rule` of each finding, `(preexisting)` marked.
fn located(report: &Value) -> Vec<String> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["file"].is_string())
        .map(|c| {
            format!(
                "{} {}:{}:{} {}{}",
                c["check"].as_str().unwrap(),
                c["file"].as_str().unwrap(),
                c["line"],
                c["column"],
                c["rule"].as_str().unwrap_or("-"),
                if c["preexisting"] == true {
                    " (preexisting)"
                } else {
                    ""
                }
            )
        })
        .collect()
}

#[test]
fn a_real_rust_and_python_change_gives_located_findings_in_every_format() {
    let repo = real_change();
    repo.config(&format!("[llm]\nprovider = \"none\"\n{TOOLS}"));

    let run = review(&repo, "json");
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let report = &out["reviews"][0];
    let mut found = located(report);
    found.sort();
    let expected = [
        "clippy src/lib.rs:10:5 clippy::len_zero (preexisting)",
        "clippy src/lib.rs:15:9 unused_variables",
        "clippy src/lib.rs:20:5 clippy::needless_return",
        "mypy fines/calc.py:19:16 assignment",
        "mypy fines/calc.py:20:14 operator",
        "mypy fines/calc.py:22:12 return-value",
        "pytest tests/test_calc.py:13:null tests.test_calc::test_a_negative_price_is_refused",
        "pytest tests/test_calc.py:9:null tests.test_calc::test_the_cap_is_the_price",
        "ruff fines/calc.py:18:5 F841",
        "ruff fines/calc.py:2:8 F401 (preexisting)",
        "ruff fines/calc.py:3:8 F401",
    ];
    assert_eq!(found, expected, "{}", run.transcript());
    // Every failing command explained itself: no finding without a place.
    let unplaced: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["file"].is_null())
        .collect();
    assert!(unplaced.is_empty(), "{unplaced:?}");
    let clippy = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["rule"] == "clippy::len_zero")
        .unwrap();
    assert_eq!(clippy["category"], "lint");
    assert_eq!(clippy["advisory"], true);
    assert!(
        clippy["message"]
            .as_str()
            .unwrap()
            .contains("suggested fix: using `!is_empty`"),
        "{clippy}"
    );
    assert!(
        report["feedback"].as_str().unwrap().contains(
            "clippy (major) src/lib.rs:15:9: [unused_variables] unused variable: `grace`"
        ),
        "{}",
        report["feedback"]
    );

    let sarif: Value = serde_json::from_str(&review(&repo, "sarif").stdout).unwrap();
    crate::formats::assert_valid_sarif(&sarif);
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let at = |uri: &str, line: u64, column: u64| {
        results.iter().find(|r| {
            let loc = &r["locations"][0]["physicalLocation"];
            loc["artifactLocation"]["uri"] == uri
                && loc["region"]["startLine"] == line
                && loc["region"]["startColumn"] == column
        })
    };
    let unused = at("src/lib.rs", 15, 9).expect("clippy's finding in SARIF");
    assert_eq!(unused["ruleId"], "check/clippy");
    assert_eq!(unused["level"], "error");
    assert_eq!(at("fines/calc.py", 2, 8).unwrap()["level"], "warning");
    assert!(at("fines/calc.py", 19, 16).is_some());

    let github = review(&repo, "github").stdout;
    assert!(
        github.contains("::error file=src/lib.rs,line=15,col=9,title=speed check/clippy (task 1)::[unused_variables] unused variable: `grace`"),
        "{github}"
    );
    assert!(
        github.contains("::warning file=fines/calc.py,line=2,col=8,"),
        "{github}"
    );
    assert!(
        github.contains("file=tests/test_calc.py,line=9,"),
        "{github}"
    );

    let junit = review(&repo, "junit").stdout;
    let doc = roxmltree::Document::parse(&junit).unwrap();
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .expect("a failed test case");
    let body = failure.text().unwrap();
    for place in [
        "src/lib.rs:15:9",
        "fines/calc.py:19:16",
        "tests/test_calc.py:9",
    ] {
        assert!(body.contains(place), "{place} in {body}");
    }

    let human = review(&repo, "human").stdout;
    assert!(
        human.contains("clippy src/lib.rs:15:9: [unused_variables] unused variable: `grace`"),
        "{human}"
    );
    assert!(
        human.contains("(preexisting: on a line this change does not touch"),
        "{human}"
    );
}

/// A repository whose branch adds a parameter to `fine` and whose "type
/// checker" (a command reading the checkout) then reports a call in a file
/// the diff does not touch.
pub fn caller_broken() -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[
            ("specs/product/fines.md", SPEC),
            ("fines/calc.py", "def fine(days):\n    return days * 10\n"),
            (
                "fines/desk.py",
                "from fines.calc import fine\n\nprint(fine(3))\n",
            ),
        ],
        &[],
        "main",
    )
    .unwrap();
    b.commit(
        "speed/task-1",
        Some("main"),
        &[(
            "fines/calc.py",
            "def fine(days, rate):\n    return days * rate\n",
        )],
        &[],
        "a rate",
    )
    .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    repo.write(
        ".speed/tasks/1.json",
        &json!({"id": 1, "title": "Rates", "status": "done", "files_touched": ["fines/calc.py"],
                "spec_references": [{"spec": "specs/product/fines.md", "section": "Fines"}]})
        .to_string(),
    );
    repo
}

#[test]
fn a_finding_on_an_untouched_line_blocks_unless_the_base_has_it_too() {
    let repo = caller_broken();
    repo.config(
        r#"[llm]
provider = "none"

[[checks.command]]
name = "types"
run = ["sh", "-c", 'echo "fines/desk.py:1: error: Module has no docstring  [misc]"; if grep -q rate fines/calc.py; then echo "fines/desk.py:3: error: Missing positional argument \"rate\" in call to \"fine\"  [call-arg]"; exit 1; fi']
parser = "mypy"
category = "typecheck"
"#,
    );
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json"],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let checks = out["reviews"][0]["checks"].as_array().unwrap().clone();
    let call = checks.iter().find(|c| c["rule"] == "call-arg").unwrap();
    assert_eq!(call["preexisting"], false, "{call}");
    // Every parsed message has the contract's whole shape, unset places null.
    for key in [
        "check",
        "category",
        "severity",
        "file",
        "line",
        "column",
        "rule",
        "message",
        "preexisting",
    ] {
        assert!(call.get(key).is_some(), "{key}: {call}");
    }
    assert_eq!(call["column"], Value::Null, "{call}");
    assert!(
        call["message"]
            .as_str()
            .unwrap()
            .contains("not found at the base commit"),
        "{call}"
    );
    let old = checks.iter().find(|c| c["rule"] == "misc").unwrap();
    assert_eq!(old["preexisting"], true, "{old}");
    assert_eq!(old["advisory"], true, "{old}");
}

#[test]
fn unreadable_output_is_the_tail_and_a_notice_naming_the_parser() {
    let repo = caller_broken();
    repo.config(
        r#"[llm]
provider = "none"

[[checks.command]]
name = "lint"
run = ["sh", "-c", 'echo "error: ruff crashed: stack overflow"; exit 2']
parser = "ruff"

[[checks.command]]
name = "quiet"
run = ["sh", "-c", 'echo "{\"half\": "']
parser = "eslint"
"#,
    );
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json"],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let report = &out["reviews"][0];
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "{checks:?}");
    let message = checks[0]["message"].as_str().unwrap();
    assert!(message.contains("exited with status 2"), "{message}");
    // The finding names the parser it tried.
    assert!(
        message.contains("the ruff parser could not read its output"),
        "{message}"
    );
    assert!(
        message.contains("ruff crashed: stack overflow"),
        "{message}"
    );
    let notices = report["notices"].to_string();
    assert!(
        notices.contains("`lint`: the ruff parser could not read its output"),
        "{notices}"
    );
    // A passing command whose output is unreadable is only a notice.
    assert!(
        notices.contains("`quiet`: the eslint parser could not read its output"),
        "{notices}"
    );
    assert!(notices.contains("the command passed"), "{notices}");
}

#[test]
fn hostile_output_is_capped_cleaned_and_kept_in_the_checkout() {
    let repo = caller_broken();
    // 20,000 messages with escapes and bells, absurd lines and paths out
    // of the checkout, then an XML bomb for the JUnit parser.
    repo.config(
        r#"[llm]
provider = "none"

[[checks.command]]
name = "flood"
run = ["sh", "-c", 'echo "/etc/passwd:1: error: outside  [y]"; echo "fines/calc.py:999999: error: far  [z]"; i=0; while [ $i -lt 20000 ]; do printf "fines/calc.py:1:1: error: \033[31mbad\007 %s  [x]\n" $i; i=$((i+1)); done; exit 1']
parser = "mypy"

[[checks.command]]
name = "bomb"
run = ["sh", "-c", 'printf "<!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;\">]><testsuite><testcase name=\"t\"><failure message=\"&b;\"/></testcase></testsuite>" > r.xml; exit 1']
parser = "junit"
report = "r.xml"
"#,
    );
    let started = std::time::Instant::now();
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json"],
        &[],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(run.code, 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let report = &out["reviews"][0];
    let flood: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "flood")
        .collect();
    assert_eq!(flood.len(), 101, "{}", flood.len());
    let with = |text: &str| {
        flood
            .iter()
            .find(|f| f["message"].as_str().unwrap().contains(text))
            .unwrap_or_else(|| panic!("no finding says {text:?}"))
    };
    // 10,000 read, 100 listed: 9,900 counted, and 10,002 never read.
    let rest = with("more findings of `flood` are not listed")["message"]
        .as_str()
        .unwrap();
    assert!(rest.starts_with("19902 more findings"), "{rest}");
    assert!(rest.contains("were not even read"), "{rest}");
    // A path out of the checkout is no place; a line past the end of the
    // file is no line.
    let outside = with("/etc/passwd, which is not a file of the checkout");
    assert_eq!(outside["file"], Value::Null, "{outside}");
    let far = flood.iter().find(|f| f["rule"] == "z").unwrap();
    assert_eq!(
        (far["file"].as_str(), far["line"].as_u64()),
        (Some("fines/calc.py"), None),
        "{far}"
    );
    for f in &flood {
        let message = f["message"].as_str().unwrap();
        assert!(
            !message.contains('\u{1b}') && !message.contains('\u{7}'),
            "{message}"
        );
    }
    let bomb = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "bomb")
        .unwrap();
    assert!(
        bomb["message"]
            .as_str()
            .unwrap()
            .contains("exited with status 1")
    );
    assert!(
        report["notices"].to_string().contains("declares a DTD"),
        "{}",
        report["notices"]
    );
}
