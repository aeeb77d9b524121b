//! speed's built-in checks on real temporary repositories, each with the
//! change that should be found and the look-alikes that should not:
//! `breaking_change` (removed symbols and changed signatures against the
//! calls the diff did not update), `test_weakened`, `placeholder`,
//! `debug_leftover`, `scope`, `untested_criterion`, `large_diff` and
//! `empty_diff`. Every review here is offline: the checks alone decide.

use serde_json::{Value, json};

use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::speed;

const SPEC: &str = "# Fines\n\n## Fines\n\nA late book costs 10 cents a day.\n";

/// A repository whose main holds `main` and whose task branch applies
/// `branch` (and deletes `deletes`) on top; task 1 reviews that branch.
pub(crate) fn repo_with(
    main: &[(&str, &str)],
    branch: &[(&str, &str)],
    deletes: &[&str],
    task: Value,
) -> TempRepo {
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    let mut files = vec![("specs/product/fines.md", SPEC)];
    files.extend_from_slice(main);
    b.commit("main", None, &files, &[], "main").unwrap();
    b.commit("speed/task-1", Some("main"), branch, deletes, "the task")
        .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    let mut task = task;
    for (k, v) in [
        ("id", json!(1)),
        ("title", json!("Fines")),
        ("status", json!("done")),
        (
            "spec_references",
            json!([{"spec": "specs/product/fines.md", "section": "Fines"}]),
        ),
    ] {
        task.as_object_mut().unwrap().entry(k).or_insert(v);
    }
    repo.write(".speed/tasks/1.json", &task.to_string());
    repo
}

/// The findings of an offline review of task 1, as "check file:line".
fn findings(repo: &TempRepo) -> Vec<(String, String)> {
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json"],
        &[],
    );
    assert!(run.code == 0 || run.code == 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let report = &out["reviews"][0];
    assert_eq!(report["error"], Value::Null, "{}", run.transcript());
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let at = match (c["file"].as_str(), c["line"].as_u64()) {
                (Some(f), Some(l)) => format!(" {f}:{l}"),
                (Some(f), None) => format!(" {f}"),
                _ => String::new(),
            };
            (
                format!("{}{at}", c["check"].as_str().unwrap()),
                c["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn only(found: &[(String, String)], check: &str) -> Vec<String> {
    found
        .iter()
        .filter(|(c, _)| c.split(' ').next() == Some(check))
        .map(|(c, _)| c.clone())
        .collect()
}

/// Everything declared: scope findings stay out of the way.
pub(crate) fn declared() -> Value {
    json!({"files_to_modify": ["src", "fines", "tests"]})
}

const RUST_LIB: &str = "pub mod fines;\npub mod desk;\n";

fn rust_fines(signature: &str, body: &str) -> String {
    format!("/// The fine in cents.\n{signature} {{\n    {body}\n}}\n")
}

const RUST_DESK: &str =
    "use crate::fines::fine;\n\npub fn charge(days: u32) -> u32 {\n    fine(days)\n}\n";

#[test]
fn breaking_change_finds_an_unupdated_call_of_a_changed_rust_function() {
    let repo = repo_with(
        &[
            ("src/lib.rs", RUST_LIB),
            (
                "src/fines.rs",
                &rust_fines("pub fn fine(days: u32) -> u32", "days * 10"),
            ),
            ("src/desk.rs", RUST_DESK),
        ],
        &[(
            "src/fines.rs",
            &rust_fines("pub fn fine(days: u32, rate: u32) -> u32", "days * rate"),
        )],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert_eq!(
        only(&found, "breaking_change"),
        ["breaking_change src/desk.rs:4"],
        "{found:?}"
    );
    let message = &found
        .iter()
        .find(|f| f.0.starts_with("breaking_change"))
        .unwrap()
        .1;
    assert!(
        message.contains("fine (src/fines.rs:2) has a changed signature"),
        "{message}"
    );
}

#[test]
fn breaking_change_ignores_what_no_caller_can_tell() {
    for (what, signature) in [
        (
            "a comment appended to the signature line",
            "pub fn fine(days: u32) -> u32 // in cents",
        ),
        ("a pattern", "pub fn fine(mut days: u32) -> u32"),
        ("a parameter's name", "pub fn fine(d: u32) -> u32"),
        (
            "a type (the compiler's to judge)",
            "pub fn fine(days: u64) -> u64",
        ),
        ("a visibility", "pub(crate) fn fine(days: u32) -> u32"),
    ] {
        let repo = repo_with(
            &[
                ("src/lib.rs", RUST_LIB),
                (
                    "src/fines.rs",
                    &rust_fines("pub fn fine(days: u32) -> u32", "days * 10"),
                ),
                ("src/desk.rs", RUST_DESK),
            ],
            &[(
                "src/fines.rs",
                &rust_fines(signature, "let days = days; days * 10"),
            )],
            &[],
            declared(),
        );
        let found = findings(&repo);
        assert!(
            only(&found, "breaking_change").is_empty(),
            "{what}: {found:?}"
        );
    }
    // The caller updated by the same diff.
    let repo = repo_with(
        &[
            ("src/lib.rs", RUST_LIB),
            (
                "src/fines.rs",
                &rust_fines("pub fn fine(days: u32) -> u32", "days * 10"),
            ),
            ("src/desk.rs", RUST_DESK),
        ],
        &[
            (
                "src/fines.rs",
                &rust_fines("pub fn fine(days: u32, rate: u32) -> u32", "days * rate"),
            ),
            (
                "src/desk.rs",
                &RUST_DESK.replace("fine(days)", "fine(days, 10)"),
            ),
        ],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert!(only(&found, "breaking_change").is_empty(), "{found:?}");
}

const PY_FINES: &str = "def fine(days):\n    return days * 10\n";
const PY_DESK: &str = "from fines.rules import fine\n\n\ndef charge(days):\n    return fine(days)\n\n\ndef charge_named(days):\n    return fine(days=days)\n";

fn python_repo(new_fines: &str) -> TempRepo {
    repo_with(
        &[
            ("fines/__init__.py", ""),
            ("fines/rules.py", PY_FINES),
            ("fines/desk.py", PY_DESK),
        ],
        &[("fines/rules.py", new_fines)],
        &[],
        declared(),
    )
}

#[test]
fn breaking_change_binds_python_calls_to_the_new_parameters() {
    // A new required parameter: both calls break.
    let found = findings(&python_repo(
        "def fine(days, rate):\n    return days * rate\n",
    ));
    assert_eq!(
        only(&found, "breaking_change"),
        ["breaking_change fines/desk.py:5"],
        "{found:?}"
    );
    assert!(found.iter().any(|f| f.1.contains("2 calls")), "{found:?}");
    // A renamed parameter: only the call that names it breaks.
    let found = findings(&python_repo("def fine(d):\n    return d * 10\n"));
    assert_eq!(
        only(&found, "breaking_change"),
        ["breaking_change fines/desk.py:9"],
        "{found:?}"
    );
    for (what, new) in [
        (
            "a comment on the def line",
            "def fine(days):  # in cents\n    return days * 10\n",
        ),
        (
            "an optional parameter",
            "def fine(days, rate=10):\n    return days * rate\n",
        ),
        (
            "annotations",
            "def fine(days: int) -> int:\n    return days * 10\n",
        ),
        (
            "keyword arguments",
            "def fine(days, **options):\n    return days * 10\n",
        ),
    ] {
        let found = findings(&python_repo(new));
        assert!(
            only(&found, "breaking_change").is_empty(),
            "{what}: {found:?}"
        );
    }
}

#[test]
fn breaking_change_finds_a_removed_function_still_imported_but_not_a_moved_one() {
    let removed = findings(&python_repo("def fine_for(days):\n    return days * 10\n"));
    let got = only(&removed, "breaking_change");
    assert_eq!(got.len(), 1, "{removed:?}");
    assert!(
        got[0].starts_with("breaking_change fines/desk.py:"),
        "{got:?}"
    );

    // Moved under a condition in the same file: still defined.
    let found = findings(&python_repo(
        "import sys\n\nif sys.version_info >= (3, 9):\n    def fine(days):\n        return days * 10\nelse:\n    def fine(days):\n        return days * 11\n",
    ));
    assert!(only(&found, "breaking_change").is_empty(), "{found:?}");

    // Moved to another file, the import updated.
    let repo = repo_with(
        &[
            ("fines/__init__.py", ""),
            ("fines/rules.py", PY_FINES),
            ("fines/desk.py", PY_DESK),
        ],
        &[
            ("fines/rules.py", "RATE = 10\n"),
            ("fines/late.py", PY_FINES),
            (
                "fines/desk.py",
                &PY_DESK.replace("fines.rules", "fines.late"),
            ),
        ],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert!(only(&found, "breaking_change").is_empty(), "{found:?}");
}

#[test]
fn breaking_change_leaves_trait_items_and_method_calls_by_name_to_the_model() {
    let before = "pub struct Due(pub u32);\n\nimpl PartialEq for Due {\n    fn eq(&self, other: &Due) -> bool {\n        self.0 == other.0\n    }\n}\n\nimpl Due {\n    pub fn days(&self) -> u32 {\n        self.0\n    }\n}\n";
    let after = "pub struct Due(pub u32);\n\nimpl PartialEq for Due {\n    fn eq(&self, other: &Self, ) -> bool {\n        self.0 == other.0\n    }\n}\n";
    let desk = "use crate::fines::Due;\n\npub fn same(a: &Due, b: &Due) -> bool {\n    a.eq(b) && a.days() == b.days()\n}\n";
    let repo = repo_with(
        &[
            ("src/lib.rs", RUST_LIB),
            ("src/fines.rs", before),
            ("src/desk.rs", desk),
        ],
        &[("src/fines.rs", after)],
        &[],
        declared(),
    );
    let found = findings(&repo);
    // `days` is gone and called on values of its type; `eq` implements a
    // trait, whose declaration is what callers rely on.
    assert_eq!(
        only(&found, "breaking_change"),
        ["breaking_change src/desk.rs:4"],
        "{found:?}"
    );
    let message = &found
        .iter()
        .find(|f| f.0.starts_with("breaking"))
        .unwrap()
        .1;
    assert!(
        message.starts_with("Due::days (src/fines.rs:10) is removed, but 2 references"),
        "{message}"
    );
    assert!(
        message.ends_with("still use it: src/desk.rs:4."),
        "{message}"
    );

    // In Python a method called on a value of unknown type may be any
    // class's: the removal is left to the model (the impact table).
    let repo = repo_with(
        &[
            ("fines/__init__.py", ""),
            (
                "fines/rules.py",
                "class Due:\n    def days(self):\n        return 1\n\n    def cents(self):\n        return 10\n",
            ),
            (
                "fines/desk.py",
                "def same(a, b):\n    return a.days() == b.days()\n",
            ),
        ],
        &[(
            "fines/rules.py",
            "class Due:\n    def cents(self):\n        return 10\n",
        )],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert!(only(&found, "breaking_change").is_empty(), "{found:?}");
}

/// flask's `Config.get_namespace`, called from its tests through
/// `app.config` in every form a caller can take.
const FLASK_CONFIG: &str = "class Config(dict):\n    def get_namespace(\n        self, namespace: str, lowercase: bool = True, trim_namespace: bool = True\n    ) -> dict:\n        rv = {}\n        for k, v in self.items():\n            if k.startswith(namespace):\n                key = k[len(namespace):] if trim_namespace else k\n                rv[key.lower() if lowercase else key] = v\n        return rv\n";
const FLASK_APP: &str = "from .config import Config\n\n\nclass Flask:\n    def __init__(self, name):\n        self.config = Config()\n\n    def options(self, prefix, **kwargs):\n        return self.config.get_namespace(prefix, **kwargs)\n";
const FLASK_TEST: &str = "import flask\n\n\ndef test_get_namespace():\n    app = flask.Flask(__name__)\n    foo = app.config.get_namespace(\"FOO_\")\n    bar = app.config.get_namespace(\"BAR_\", lowercase=False)\n    baz = app.config.get_namespace(\"BAZ_\", False)\n    qux = app.config.get_namespace(\"QUX_\", trim_namespace=False)\n    assert foo == bar == baz == qux\n";

fn flask_repo(config: &str, test: &str) -> TempRepo {
    repo_with(
        &[
            ("src/flask/__init__.py", "from .app import Flask\n"),
            ("src/flask/config.py", FLASK_CONFIG),
            ("src/flask/app.py", FLASK_APP),
            ("tests/test_config.py", FLASK_TEST),
        ],
        &[
            ("src/flask/config.py", config),
            ("tests/test_config.py", test),
        ],
        &[],
        json!({"files_to_modify": ["src", "tests"]}),
    )
}

#[test]
fn breaking_change_finds_calls_that_rely_on_a_changed_default() {
    let flipped = FLASK_CONFIG.replace("lowercase: bool = True", "lowercase: bool = False");
    let found = findings(&flask_repo(&flipped, FLASK_TEST));
    // At the definition, naming the calls that leave `lowercase` out:
    // not the ones passing it by name or by position, not the forwarding
    // `**kwargs`, which may pass it.
    assert_eq!(
        only(&found, "breaking_change"),
        ["breaking_change src/flask/config.py:2"],
        "{found:?}"
    );
    let message = &found
        .iter()
        .find(|f| f.0.starts_with("breaking_change"))
        .unwrap()
        .1;
    assert_eq!(
        message,
        "Config.get_namespace (src/flask/config.py:2) changes the default of `lowercase` from `True` to `False`, but 2 calls the diff does not update leave it out and now get the new value: tests/test_config.py:6, tests/test_config.py:9."
    );

    // Callers the diff updates, or that all pass the argument, rely on
    // nothing; nor does a default written differently but the same.
    let updated = FLASK_TEST
        .replace(
            "get_namespace(\"FOO_\")",
            "get_namespace(\"FOO_\", lowercase=True)",
        )
        .replace(
            "trim_namespace=False)",
            "trim_namespace=False, lowercase=True)",
        );
    let found = findings(&flask_repo(&flipped, &updated));
    assert!(only(&found, "breaking_change").is_empty(), "{found:?}");
    let respelled = FLASK_CONFIG.replace("lowercase: bool = True", "lowercase:bool=(True)");
    let found = findings(&flask_repo(&respelled, FLASK_TEST));
    assert!(only(&found, "breaking_change").is_empty(), "{found:?}");
}

#[test]
fn breaking_change_reads_the_implementation_not_overload_stubs_nor_sentinel_defaults() {
    // click 8.2: `progressbar` gained `@overload` stubs whose parameters
    // the calls do not fit, and `CliRunner.invoke(catch_exceptions=True)`
    // became `=None`, resolved in the body to the runner's own default.
    let termui = "def progressbar(iterable=None, length=None, label=None):\n    return iterable\n";
    let termui_head = "import typing as t\n\n\n@t.overload\ndef progressbar(*, length: int, label: str = None) -> int: ...\n\n\n@t.overload\ndef progressbar(iterable=None, length=..., label=...) -> int: ...\n\n\ndef progressbar(iterable=None, length=None, label=None):\n    return iterable\n";
    let testing = "class CliRunner:\n    def __init__(self, catch_exceptions=True):\n        self.catch_exceptions = catch_exceptions\n\n    def invoke(self, cli, args=None, catch_exceptions=True):\n        return cli(args)\n";
    let testing_head = testing.replace(
        "catch_exceptions=True):\n        return cli(args)",
        "catch_exceptions=None):\n        if catch_exceptions is None:\n            catch_exceptions = self.catch_exceptions\n        return cli(args)",
    );
    let tests = "from cli.termui import progressbar\nfrom cli.testing import CliRunner\n\n\ndef test_bar():\n    assert progressbar(range(3)) is not None\n\n\ndef test_invoke():\n    runner = CliRunner()\n    assert runner.invoke(print, [\"x\"]) is None\n";
    let repo = repo_with(
        &[
            ("cli/__init__.py", ""),
            ("cli/termui.py", termui),
            ("cli/testing.py", testing),
            ("tests/test_cli.py", tests),
        ],
        &[
            ("cli/termui.py", termui_head),
            ("cli/testing.py", &testing_head),
        ],
        &[],
        json!({"files_to_modify": ["cli", "tests"]}),
    );
    let found = findings(&repo);
    assert!(only(&found, "breaking_change").is_empty(), "{found:?}");
    // The same default changed to a plain value is found.
    let repo = repo_with(
        &[
            ("cli/__init__.py", ""),
            ("cli/testing.py", testing),
            ("tests/test_cli.py", tests),
            ("cli/termui.py", termui),
        ],
        &[(
            "cli/testing.py",
            &testing.replace(
                "args=None, catch_exceptions=True",
                "args=None, catch_exceptions=False",
            ),
        )],
        &[],
        json!({"files_to_modify": ["cli", "tests"]}),
    );
    let found = findings(&repo);
    assert_eq!(
        only(&found, "breaking_change"),
        ["breaking_change cli/testing.py:5"],
        "{found:?}"
    );
}

const RUST_ARGS: &str = "#[derive(Default)]\npub struct Args {\n    pub pattern: String,\n}\n\npub enum Mode {\n    Sensitive,\n    Smart,\n}\n";
const RUST_USES: &str = "use crate::args::{Args, Mode};\n\npub fn make() -> Args {\n    Args {\n        pattern: String::new(),\n    }\n}\n\npub fn defaulted() -> Args {\n    Args {\n        pattern: String::new(),\n        ..Default::default()\n    }\n}\n\npub fn fold(m: &Mode) -> bool {\n    match m {\n        Mode::Sensitive => false,\n        Mode::Smart => true,\n    }\n}\n\npub fn smart(m: &Mode) -> bool {\n    match m {\n        Mode::Smart => true,\n        _ => false,\n    }\n}\n\npub fn pattern(a: &Args) -> &str {\n    let Args { pattern } = a;\n    pattern\n}\n";

fn rust_members_repo(args: &str, uses: &str) -> TempRepo {
    repo_with(
        &[
            ("src/lib.rs", "pub mod args;\npub mod uses;\n"),
            ("src/args.rs", RUST_ARGS),
            ("src/uses.rs", RUST_USES),
        ],
        &[("src/args.rs", args), ("src/uses.rs", uses)],
        &[],
        declared(),
    )
}

#[test]
fn breaking_change_finds_only_the_places_that_list_every_member_of_a_grown_type() {
    let grown = RUST_ARGS
        .replace(
            "    pub pattern: String,\n",
            "    pub pattern: String,\n    pub max_filesize: Option<u64>,\n",
        )
        .replace("    Smart,\n", "    Smart,\n    AsciiInsensitive,\n");
    let found = findings(&rust_members_repo(&grown, RUST_USES));
    assert_eq!(
        only(&found, "breaking_change"),
        [
            "breaking_change src/uses.rs:4",
            "breaking_change src/uses.rs:17"
        ],
        "{found:?}"
    );
    let messages: Vec<&str> = found
        .iter()
        .filter(|f| f.0.starts_with("breaking_change"))
        .map(|f| f.1.as_str())
        .collect();
    assert!(
        messages.contains(&"Mode (src/args.rs:7) gained the variant `AsciiInsensitive`, but 1 match lists its variants one by one, with no catch-all arm, so it does not compile: src/uses.rs:17."),
        "{messages:#?}"
    );
    assert!(
        messages.contains(&"Args (src/args.rs:2) gained the field `max_filesize`, but 2 struct literals or patterns name every other field, with no `..`, so they do not compile: src/uses.rs:4, src/uses.rs:31."),
        "{messages:#?}"
    );

    // Updated where they list every member: nothing left to find.
    let updated = RUST_USES
        .replace("        pattern: String::new(),\n    }\n}\n\npub fn defaulted", "        pattern: String::new(),\n        max_filesize: None,\n    }\n}\n\npub fn defaulted")
        .replace("Mode::Smart => true,\n    }", "Mode::Smart | Mode::AsciiInsensitive => true,\n    }")
        .replace("let Args { pattern } = a;", "let Args { pattern, .. } = a;");
    let found = findings(&rust_members_repo(&grown, &updated));
    assert!(only(&found, "breaking_change").is_empty(), "{found:?}");
}

#[test]
fn test_weakened_finds_deleted_and_newly_skipped_tests_not_rewritten_ones() {
    let tests = "from fines.rules import fine\n\n\ndef test_one_day():\n    assert fine(1) == 10\n\n\ndef test_two_days():\n    assert fine(2) == 20\n";
    let main = [
        ("fines/__init__.py", ""),
        ("fines/rules.py", PY_FINES),
        ("tests/test_fines.py", tests),
    ];
    // Deleted.
    let repo = repo_with(
        &main,
        &[(
            "tests/test_fines.py",
            "from fines.rules import fine\n\n\ndef test_one_day():\n    assert fine(1) == 10\n",
        )],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert_eq!(
        only(&found, "test_weakened"),
        ["test_weakened tests/test_fines.py"],
        "{found:?}"
    );
    assert!(
        found.iter().any(|f| f.1.contains("test_two_days")),
        "{found:?}"
    );
    // Newly skipped.
    let repo = repo_with(
        &main,
        &[(
            "tests/test_fines.py",
            &tests.replace(
                "def test_two_days",
                "import pytest\n\n\n@pytest.mark.skip(reason=\"flaky\")\ndef test_two_days",
            ),
        )],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert_eq!(
        only(&found, "test_weakened"),
        ["test_weakened tests/test_fines.py:11"],
        "{found:?}"
    );
    // Renamed, or its file moved: not weakened.
    let repo = repo_with(
        &main,
        &[(
            "tests/test_rules.py",
            &tests.replace("test_two_days", "test_a_second_day"),
        )],
        &["tests/test_fines.py"],
        declared(),
    );
    let found = findings(&repo);
    assert!(only(&found, "test_weakened").is_empty(), "{found:?}");
    // A Rust test marked #[ignore].
    let lib = "pub fn fine(d: u32) -> u32 {\n    d * 10\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn one() {\n        assert_eq!(super::fine(1), 10);\n    }\n}\n";
    let repo = repo_with(
        &[("src/lib.rs", lib)],
        &[(
            "src/lib.rs",
            &lib.replace("    #[test]\n", "    #[test]\n    #[ignore]\n"),
        )],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert_eq!(
        only(&found, "test_weakened"),
        ["test_weakened src/lib.rs:8"],
        "{found:?}"
    );
}

#[test]
fn placeholder_and_debug_leftover_in_added_code_not_in_tests_comments_or_deliberate_stubs() {
    let repo = repo_with(
        &[(
            "src/lib.rs",
            "pub fn fine(d: u32) -> u32 {\n    d * 10\n}\n",
        )],
        &[(
            "src/lib.rs",
            "pub fn fine(d: u32) -> u32 {\n    dbg!(d);\n    todo!()\n}\n\n// todo!() later\npub fn rate() -> u32 {\n    unimplemented!(\"rates are set by the library, see Policy::rate\")\n}\n\npub fn waive() {\n    unimplemented!()\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {\n        dbg!(super::fine(1));\n    }\n}\n",
        )],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert_eq!(
        only(&found, "placeholder"),
        ["placeholder src/lib.rs:3", "placeholder src/lib.rs:12"],
        "{found:?}"
    );
    assert_eq!(
        only(&found, "debug_leftover"),
        ["debug_leftover src/lib.rs:2"],
        "{found:?}"
    );

    let repo = repo_with(
        &[("fines/rules.py", PY_FINES)],
        &[(
            "fines/rules.py",
            "import pdb\n\n\ndef fine(days):\n    pdb.set_trace()\n    return days * 10\n\n\ndef waive(days):\n    pass\n\n\nclass BasePolicy:\n    def rate(self):\n        raise NotImplementedError\n\n\ndef later(days):\n    raise NotImplementedError\n",
        )],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert_eq!(
        only(&found, "placeholder"),
        [
            "placeholder fines/rules.py:10",
            "placeholder fines/rules.py:19"
        ],
        "{found:?}"
    );
    assert_eq!(
        only(&found, "debug_leftover"),
        ["debug_leftover fines/rules.py:5"],
        "{found:?}"
    );
}

#[test]
fn scope_flags_undeclared_files_except_tests_lockfiles_and_renames_declared_on_both_sides() {
    let repo = repo_with(
        &[
            ("src/lib.rs", "pub fn fine() {}\n"),
            ("src/other.rs", "pub fn other() {}\n"),
            ("Cargo.lock", "# lock\n"),
        ],
        &[
            ("src/lib.rs", "pub fn fine() { }\n"),
            ("src/other.rs", "pub fn other() { }\n"),
            ("Cargo.lock", "# lock 2\n"),
            ("tests/fines.rs", "#[test]\nfn t() {}\n"),
        ],
        &[],
        json!({"files_to_modify": ["src/lib.rs"]}),
    );
    let found = findings(&repo);
    assert_eq!(only(&found, "scope"), ["scope src/other.rs:1"], "{found:?}");
    // No declared scope: nothing to hold the diff to.
    let repo = repo_with(
        &[("src/lib.rs", "pub fn fine() {}\n")],
        &[("src/other.rs", "pub fn other() {}\n")],
        &[],
        json!({}),
    );
    assert!(only(&findings(&repo), "scope").is_empty());
}

#[test]
fn untested_criterion_only_when_a_criterion_wants_a_test_and_no_test_changed() {
    let criteria = json!([
        {"criterion": "Fines are 10 cents a day", "verify_by": "unit test"},
        {"criterion": "The desk shows the fine", "verify_by": "manual test"}
    ]);
    let task = |criteria: &Value| json!({"files_to_modify": ["src", "tests"], "acceptance_criteria": criteria});
    let lib = "pub fn fine(d: u32) -> u32 {\n    d * 10\n}\n";
    let repo = repo_with(
        &[("src/lib.rs", "pub fn fine(d: u32) -> u32 {\n    d * 9\n}\n")],
        &[("src/lib.rs", lib)],
        &[],
        task(&criteria),
    );
    let found = findings(&repo);
    assert_eq!(
        only(&found, "untested_criterion"),
        ["untested_criterion"],
        "{found:?}"
    );
    assert!(found.iter().any(|f| f.1.starts_with("AC-1 ")), "{found:?}");
    // A test in the same file counts.
    let repo = repo_with(
        &[("src/lib.rs", "pub fn fine(d: u32) -> u32 {\n    d * 9\n}\n")],
        &[(
            "src/lib.rs",
            &format!(
                "{lib}\n#[cfg(test)]\nmod tests {{\n    #[test]\n    fn ten() {{\n        assert_eq!(super::fine(1), 10);\n    }}\n}}\n"
            ),
        )],
        &[],
        task(&criteria),
    );
    assert!(only(&findings(&repo), "untested_criterion").is_empty());
    // Only a manual check asked for.
    let repo = repo_with(
        &[("src/lib.rs", "pub fn fine(d: u32) -> u32 {\n    d * 9\n}\n")],
        &[("src/lib.rs", lib)],
        &[],
        task(&json!([{"criterion": "The desk shows it", "verify_by": "manual test"}])),
    );
    assert!(only(&findings(&repo), "untested_criterion").is_empty());
}

#[test]
fn large_diff_counts_lines_and_files_without_lockfiles() {
    let big: String = (0..450)
        .map(|i| format!("pub const C{i}: u32 = {i};\n"))
        .collect();
    let repo = repo_with(
        &[("src/lib.rs", "pub const A: u32 = 1;\n")],
        &[("src/lib.rs", &big)],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert_eq!(only(&found, "large_diff"), ["large_diff"], "{found:?}");
    assert!(
        found.iter().any(|f| f.1.contains("451 lines in 1 files")),
        "{found:?}"
    );
    let repo = repo_with(
        &[
            ("src/lib.rs", "pub const A: u32 = 1;\n"),
            ("Cargo.lock", ""),
        ],
        &[
            ("src/lib.rs", "pub const A: u32 = 2;\n"),
            ("Cargo.lock", &big),
        ],
        &[],
        declared(),
    );
    assert!(only(&findings(&repo), "large_diff").is_empty());
    // Configured: a severity and limits, or off.
    repo.config("[checks]\nlarge_diff = { lines = 1, files = 1, severity = \"major\" }\n");
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json"],
        &[],
    );
    assert_eq!(run.code, 50, "{}", run.transcript());
    repo.config("[checks]\nlarge_diff = \"off\"\n");
    assert!(only(&findings(&repo), "large_diff").is_empty());
}

#[test]
fn empty_diff_and_a_diff_of_only_speeds_files_implement_nothing() {
    let repo = repo_with(&[("src/lib.rs", "pub fn f() {}\n")], &[], &[], declared());
    let found = findings(&repo);
    assert_eq!(only(&found, "empty_diff"), ["empty_diff"], "{found:?}");
    let repo = repo_with(
        &[("src/lib.rs", "pub fn f() {}\n")],
        &[(".speed/notes.md", "worked on it\n")],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert_eq!(only(&found, "empty_diff"), ["empty_diff"], "{found:?}");
}

/// The false positives the checks raised on real releases (tokio 1.54,
/// rand 0.10, syn 3, flask 3.1), each cut down to its shape and kept quiet,
/// beside the real finding it resembles.
#[test]
fn the_look_alikes_found_in_real_releases_stay_quiet() {
    // tokio 1.54: `#[tokio::test(…)]` moved behind `cfg_attr`; a test
    // really deleted beside it is still found.
    let before = "#[tokio::test(flavor = \"multi_thread\")]\nasync fn one() {\n    assert!(1 > 0);\n}\n\n#[tokio::test]\nasync fn two() {\n    assert!(2 > 0);\n}\n\n#[test]\nfn three() {\n    assert!(3 > 0);\n}\n";
    let after = "#[cfg_attr(not(target_family = \"wasm\"), tokio::test(flavor = \"multi_thread\"))]\n#[cfg_attr(target_family = \"wasm\", tokio::test)]\nasync fn one() {\n    assert!(1 > 0);\n}\n\n#[tokio::test]\nasync fn two() {\n    assert!(2 > 0);\n}\n";
    let repo = repo_with(
        &[("tests/runtime.rs", before)],
        &[("tests/runtime.rs", after)],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert_eq!(
        only(&found, "test_weakened"),
        ["test_weakened tests/runtime.rs"],
        "{found:?}"
    );
    assert!(found[0].1.contains("Test three"), "{found:?}");

    // rand 0.10: `Rng` removed from `src/rng.rs` and re-exported from
    // another crate in its place, so `crate::Rng` still resolves; `Fill`,
    // removed with nothing in its place, and `rng::Rng`, named through the
    // module it left, are still found.
    let repo = repo_with(
        &[
            (
                "src/lib.rs",
                "pub mod rng;\npub mod dist;\npub mod draw;\npub use rng::Rng;\n",
            ),
            (
                "src/rng.rs",
                "pub trait Rng {}\n\npub trait Fill {}\n\npub fn seed() {}\n",
            ),
            (
                "src/dist.rs",
                "use crate::Rng;\nuse crate::rng::Fill;\n\npub fn draw(_r: &dyn Rng, _f: &dyn Fill) {}\n",
            ),
            ("src/draw.rs", "pub fn one(_r: &dyn crate::rng::Rng) {}\n"),
        ],
        &[
            (
                "src/lib.rs",
                "pub mod rng;\npub mod dist;\npub use rand_core::Rng;\n",
            ),
            ("src/rng.rs", "pub fn seed() {}\n"),
        ],
        &[],
        declared(),
    );
    let found = findings(&repo);
    let broken: Vec<&(String, String)> = found
        .iter()
        .filter(|f| f.0.starts_with("breaking_change"))
        .collect();
    assert_eq!(broken.len(), 2, "{found:?}");
    assert!(broken[0].1.starts_with("Fill "), "{found:?}");
    assert!(broken[0].1.contains("src/dist.rs:2,"), "{found:?}");
    assert!(!broken[0].1.contains("src/dist.rs:1"), "{found:?}");
    assert!(broken[1].1.starts_with("Rng "), "{found:?}");
    assert!(broken[1].1.contains(": src/draw.rs:1."), "{found:?}");

    // The same in Python: `fine` is imported anew from another package in
    // one file, but `desk.py` still imports it from the module it left.
    let repo = repo_with(
        &[
            ("fines/__init__.py", ""),
            ("fines/rules.py", PY_FINES),
            ("fines/desk.py", PY_DESK),
        ],
        &[
            ("fines/rules.py", "RATE = 10\n"),
            (
                "fines/kiosk.py",
                "from payments import fine\n\nprint(fine(2))\n",
            ),
        ],
        &[],
        declared(),
    );
    let found = findings(&repo);
    let got = only(&found, "breaking_change");
    assert_eq!(got.len(), 1, "{found:?}");
    assert!(
        got[0].starts_with("breaking_change fines/desk.py:"),
        "{got:?}"
    );

    // syn 3: a deleted test crate's `mod snapshot;` is its own module, and
    // a sibling test crate declaring its own does not refer to it.
    let test_crate =
        "#[macro_use]\nmod snapshot;\n\n#[test]\nfn parses() {\n    snapshot!(parses);\n}\n";
    let repo = repo_with(
        &[
            (
                "tests/snapshot/mod.rs",
                "macro_rules! snapshot { () => {}; }\n",
            ),
            ("tests/test_a.rs", test_crate),
            ("tests/test_b.rs", &test_crate.replace("parses", "reads")),
        ],
        &[],
        &["tests/test_a.rs"],
        declared(),
    );
    let found = findings(&repo);
    assert!(only(&found, "breaking_change").is_empty(), "{found:?}");
    assert_eq!(
        only(&found, "test_weakened"),
        ["test_weakened tests/test_a.rs"],
        "{found:?}"
    );

    // flask 3.1: an abstract method of a base class that a class in
    // another changed file derives from; with no subclass it is found.
    let base = "class App:\n    def create_env(self):\n        raise NotImplementedError()\n";
    let derived = "from .base import App\n\n\nclass Flask(App):\n    def create_env(self):\n        return {}\n";
    let repo = repo_with(
        &[("fines/__init__.py", "")],
        &[("fines/base.py", base), ("fines/app.py", derived)],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert!(only(&found, "placeholder").is_empty(), "{found:?}");
    let repo = repo_with(
        &[("fines/__init__.py", "")],
        &[("fines/base.py", base)],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert_eq!(
        only(&found, "placeholder"),
        ["placeholder fines/base.py:3"],
        "{found:?}"
    );

    // rustix: a module compiled only for documentation lists what is not
    // implemented; libc: `unimplemented!("traits")` inside `s! { … }`
    // says why. The same stub in a module that is built is found.
    let stub = "/// See rustix-openpty.\npub fn openpty() {\n    unimplemented!()\n}\n";
    let libc = "s! {\n    impl Hash for U {\n        fn hash(&self) {\n            unimplemented!(\"traits\");\n        }\n    }\n}\n";
    let repo = repo_with(
        &[("src/lib.rs", "pub mod fines;\n")],
        &[
            (
                "src/lib.rs",
                "pub mod fines;\npub mod unix;\n#[cfg(doc)]\npub mod not_implemented;\npub mod built;\n",
            ),
            ("src/not_implemented.rs", stub),
            ("src/unix.rs", libc),
            ("src/built.rs", stub),
        ],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert_eq!(
        only(&found, "placeholder"),
        ["placeholder src/built.rs:3"],
        "{found:?}"
    );

    // flask 3.1's docs: an example `SECRET_KEY` in documentation is an
    // example; the same line in code is a secret.
    let line = "SECRET_KEY = '192b9bdd22ab9ed4d12e236c78afcb9a393ec15f71bbf5dc987d54727823bcbf'\n";
    let repo = repo_with(
        &[("fines/__init__.py", "")],
        &[("docs/config.rst", &format!("Example::\n\n    {line}"))],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert!(only(&found, "secret").is_empty(), "{found:?}");
    let repo = repo_with(
        &[("fines/__init__.py", "")],
        &[("fines/settings.py", line)],
        &[],
        declared(),
    );
    let found = findings(&repo);
    assert_eq!(
        only(&found, "secret"),
        ["secret fines/settings.py:1"],
        "{found:?}"
    );
}
