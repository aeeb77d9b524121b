//! `test_weakened` on repositories shaped like the real projects it was
//! tried on: requests (pytest classes, a test deleted from a file that
//! gains others, an assertion weakened, a test added skipped) and ripgrep
//! (tests declared by its own `rgtest!` macro, found from the
//! `macro_rules!` its test crate's root pulls in, and the attribute forms
//! other crates use). Offline reviews: the checks alone decide.

use serde_json::{Value, json};

use crate::code_checks::{declared, repo_with};
use crate::support::repo::TempRepo;
use crate::support::speed::speed;

/// The `test_weakened` findings of an offline review of task 1, as
/// ("file[:line]", severity, message).
fn weakened(repo: &TempRepo) -> Vec<(String, String, String)> {
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
        .filter(|c| c["check"] == "test_weakened")
        .map(|c| {
            let at = match (c["file"].as_str(), c["line"].as_u64()) {
                (Some(f), Some(l)) => format!("{f}:{l}"),
                (Some(f), None) => f.to_string(),
                _ => String::new(),
            };
            (
                at,
                c["severity"].as_str().unwrap().to_string(),
                c["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A cut of requests 2.32's `tests/test_requests.py`.
const REQUESTS_TESTS: &str = r#"import pytest

import requests


class TestRequests:
    def test_basic_building(self):
        req = requests.Request()
        req.url = "http://kennethreitz.org/"
        req.data = {"life": "42"}

        pr = req.prepare()
        assert pr.url == req.url
        assert pr.body == "life=42"

    def test_headers_on_session_with_None_are_not_sent(self, httpbin):
        """Do not send headers in Session.headers with None values."""
        ses = requests.Session()
        ses.headers["Accept-Encoding"] = None
        req = requests.Request("GET", httpbin("get"))
        prep = ses.prepare_request(req)
        assert "Accept-Encoding" not in prep.headers

    def test_headers_preserve_order(self, httpbin):
        ses = requests.Session()
        ses.headers = {"Accept": "*/*"}
        prep = ses.prepare_request(requests.Request("GET", httpbin("get")))
        assert list(prep.headers) == ["Accept"]


class TestCaseInsensitiveDict:
    def test_len(self):
        cid = requests.structures.CaseInsensitiveDict({"a": "a"})
        assert len(cid) == 1


class TestMorselToCookieExpires:
    def test_len(self):
        assert len(requests.cookies.morsel_to_cookie) == 0
"#;

const REQUESTS_SESSIONS: &str = "import requests\n";

fn requests_repo(branch: &[(&str, &str)], deletes: &[&str]) -> TempRepo {
    repo_with(
        &[
            ("src/requests/__init__.py", ""),
            ("tests/test_requests.py", REQUESTS_TESTS),
            ("tests/test_sessions.py", REQUESTS_SESSIONS),
        ],
        branch,
        deletes,
        declared(),
    )
}

#[test]
fn a_test_deleted_from_a_file_that_gains_two_is_found_by_name() {
    let deleted_one = REQUESTS_TESTS.replace(
        "    def test_headers_on_session_with_None_are_not_sent(self, httpbin):\n        \"\"\"Do not send headers in Session.headers with None values.\"\"\"\n        ses = requests.Session()\n        ses.headers[\"Accept-Encoding\"] = None\n        req = requests.Request(\"GET\", httpbin(\"get\"))\n        prep = ses.prepare_request(req)\n        assert \"Accept-Encoding\" not in prep.headers\n",
        "    def test_session_get(self, httpbin):\n        assert requests.Session().get(httpbin(\"get\")).ok\n\n    def test_session_head(self, httpbin):\n        assert requests.Session().head(httpbin(\"get\")).ok\n",
    );
    assert_ne!(deleted_one, REQUESTS_TESTS);
    let repo = requests_repo(&[("tests/test_requests.py", &deleted_one)], &[]);
    let found = weakened(&repo);
    assert_eq!(found.len(), 1, "{found:?}");
    let (at, severity, message) = &found[0];
    assert_eq!(
        (at.as_str(), severity.as_str()),
        ("tests/test_requests.py", "major")
    );
    assert!(
        message.starts_with(
            "Test TestRequests.test_headers_on_session_with_None_are_not_sent (tests/test_requests.py:16 before this change) is deleted; the file holds 6 tests, 5 before."
        ),
        "{message}"
    );

    // Of two tests named `test_len`, the one of `TestCaseInsensitiveDict`.
    let deleted_len = REQUESTS_TESTS.replace(
        "    def test_len(self):\n        cid = requests.structures.CaseInsensitiveDict({\"a\": \"a\"})\n        assert len(cid) == 1\n",
        "    def test_copy(self):\n        assert requests.structures.CaseInsensitiveDict().copy() == {}\n",
    );
    let repo = requests_repo(&[("tests/test_requests.py", &deleted_len)], &[]);
    let found = weakened(&repo);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0]
            .2
            .starts_with("Test TestCaseInsensitiveDict.test_len "),
        "{found:?}"
    );

    // Moved to another file under its class and name: not deleted.
    let moved_out = REQUESTS_TESTS.replace(
        "\n\nclass TestMorselToCookieExpires:\n    def test_len(self):\n        assert len(requests.cookies.morsel_to_cookie) == 0\n",
        "",
    );
    let moved_in = format!(
        "{REQUESTS_SESSIONS}\n\nclass TestMorselToCookieExpires:\n    def test_len(self):\n        assert len(requests.cookies.morsel_to_cookie) == 0\n"
    );
    let repo = requests_repo(
        &[
            ("tests/test_requests.py", &moved_out),
            ("tests/test_sessions.py", &moved_in),
        ],
        &[],
    );
    assert!(weakened(&repo).is_empty());
}

#[test]
fn a_weaker_assertion_is_major_and_a_test_added_skipped_is_minor() {
    let changed = REQUESTS_TESTS.replace("assert pr.url == req.url", "assert pr.url")
        + "\n\n@pytest.mark.skip(reason=\"fails on CI\")\ndef test_redirect_limit(httpbin):\n    assert requests.get(httpbin(\"redirect/3\")).ok\n\n\n@pytest.mark.skipif(requests.compat.is_py2, reason=\"py3 only\")\ndef test_py3_only(httpbin):\n    assert requests.get(httpbin(\"get\")).ok\n";
    let repo = requests_repo(&[("tests/test_requests.py", &changed)], &[]);
    let found = weakened(&repo);
    assert_eq!(
        found,
        [
            (
                "tests/test_requests.py:7".to_string(),
                "major".to_string(),
                "Test TestRequests.test_basic_building asserts less: its 2 assertions compare 3 operands now, 4 before this change (assert 4 → 3 operands).".to_string()
            ),
            (
                "tests/test_requests.py:42".to_string(),
                "minor".to_string(),
                "Test test_redirect_limit is added already skipped: it does not run, so it tests nothing.".to_string()
            )
        ]
    );
    // An assertion left out: fewer assertions, with both counts.
    let fewer = REQUESTS_TESTS.replace("        assert pr.body == \"life=42\"\n", "");
    let repo = requests_repo(&[("tests/test_requests.py", &fewer)], &[]);
    let found = weakened(&repo);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].2,
        "Test TestRequests.test_basic_building makes fewer assertions: 1 now, 2 before this change (assert 2 → 1)."
    );
}

const RG_MANIFEST: &str = "[package]\nname = \"ripgrep\"\nversion = \"15.0.0\"\nedition = \"2024\"\n\n[[test]]\nname = \"integration\"\npath = \"tests/tests.rs\"\n";

const RG_TESTS_ROOT: &str =
    "// Macros useful for testing.\n#[macro_use]\nmod macros;\n\nmod util;\n\nmod misc;\n";

/// ripgrep's `tests/macros.rs`, and a macro that declares a function
/// that is no test.
const RG_MACROS: &str = r#"#[macro_export]
macro_rules! rgtest {
    ($name:ident, $fun:expr) => {
        #[test]
        fn $name() {
            let (dir, cmd) = crate::util::setup(stringify!($name));
            $fun(dir, cmd);
        }
    };
}

#[macro_export]
macro_rules! eqnice {
    ($expected:expr, $got:expr) => {
        let expected = &*$expected;
        let got = &*$got;
        if expected != got {
            panic!("printed outputs differ!\nexpected:\n{}\ngot:\n{}", expected, got);
        }
    };
}

#[macro_export]
macro_rules! fixture {
    ($name:ident, $text:expr) => {
        pub fn $name() -> &'static str {
            $text
        }
    };
}
"#;

const RG_UTIL: &str = "pub struct Dir;\npub struct TestCommand;\n\npub fn setup(_name: &str) -> (Dir, TestCommand) {\n    (Dir, TestCommand)\n}\n";

const RG_MISC: &str = r#"use crate::util::{Dir, TestCommand};

fixture!(sherlock, "For the Doctor Watsons of this world");

rgtest!(columns, |dir: Dir, mut cmd: TestCommand| {
    dir.create("sherlock", sherlock());
    cmd.arg("--column").arg("Sherlock").arg("sherlock");

    let expected = "1:57:For the Doctor Watsons of this world\n";
    eqnice!(expected, cmd.stdout());
});

rgtest!(max_filesize_parse_error_length, |_: Dir, mut cmd: TestCommand| {
    cmd.arg("--max-filesize").arg("44444444444444444444");
    cmd.assert_non_empty_stderr();
});

rgtest!(max_filesize_parse_error_suffix, |_: Dir, mut cmd: TestCommand| {
    cmd.arg("--max-filesize").arg("45k");
    cmd.assert_non_empty_stderr();
});
"#;

/// Tests in the attribute forms other crates use.
const RG_LIB: &str = r#"pub fn parse_size(s: &str) -> Option<u64> {
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn parses_async() {
        assert_eq!(parse_size("1"), Some(1));
    }

    #[rstest]
    #[case("2", Some(2))]
    fn parses_cases(#[case] s: &str, #[case] n: Option<u64>) {
        assert_eq!(parse_size(s), n);
    }

    #[test_case("3" ; "three")]
    fn parses_test_case(s: &str) {
        assert!(parse_size(s).is_some());
    }

    proptest! {
        #[test]
        fn parses_any(n in 0u64..1000) {
            assert_eq!(parse_size(&n.to_string()), Some(n));
        }
    }

    #[test]
    #[should_panic(expected = "empty")]
    fn panics_on_empty() {
        parse_size("").expect("empty");
    }
}
"#;

fn ripgrep_repo(branch: &[(&str, &str)]) -> TempRepo {
    repo_with(
        &[
            ("Cargo.toml", RG_MANIFEST),
            ("src/lib.rs", RG_LIB),
            ("tests/tests.rs", RG_TESTS_ROOT),
            ("tests/macros.rs", RG_MACROS),
            ("tests/util.rs", RG_UTIL),
            ("tests/misc.rs", RG_MISC),
        ],
        branch,
        &[],
        declared(),
    )
}

#[test]
fn tests_declared_by_a_project_macro_are_known_from_its_definition() {
    // ripgrep's case: one `rgtest!` deleted, two added, in a file the
    // macro's definition is not in.
    let misc = RG_MISC.replace(
        "rgtest!(max_filesize_parse_error_suffix, |_: Dir, mut cmd: TestCommand| {\n    cmd.arg(\"--max-filesize\").arg(\"45k\");\n    cmd.assert_non_empty_stderr();\n});\n",
        "rgtest!(min_filesize, |_: Dir, mut cmd: TestCommand| {\n    cmd.arg(\"--min-filesize\").arg(\"1k\");\n    cmd.assert_non_empty_stderr();\n});\n\nrgtest!(min_filesize_env, |_: Dir, mut cmd: TestCommand| {\n    cmd.env(\"RIPGREP_MIN_FILESIZE\", \"1k\");\n    cmd.assert_non_empty_stderr();\n});\n",
    );
    let repo = ripgrep_repo(&[("tests/misc.rs", &misc)]);
    let found = weakened(&repo);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "tests/misc.rs");
    assert_eq!(
        found[0].2,
        "Test max_filesize_parse_error_suffix (tests/misc.rs:18 before this change) is deleted; the file holds 4 tests, 3 before."
    );

    // Its own assertion macro, `eqnice!`, known the same way; a macro
    // that declares a plain function declares no test.
    let misc = RG_MISC
        .replace(
            "    eqnice!(expected, cmd.stdout());\n",
            "    let _ = expected;\n",
        )
        .replace(
            "fixture!(sherlock, \"For the Doctor Watsons of this world\");\n",
            "",
        );
    let repo = ripgrep_repo(&[("tests/misc.rs", &misc)]);
    let found = weakened(&repo);
    assert_eq!(
        found,
        [(
            "tests/misc.rs:4".to_string(),
            "major".to_string(),
            "Test columns makes fewer assertions: 0 now, 1 before this change (eqnice! 1 → 0)."
                .to_string()
        )]
    );

    // Without the definition in reach (`mod macros;` gone), the calls are
    // no tests on either side, so nothing is deleted or weakened.
    let repo = repo_with(
        &[
            ("Cargo.toml", RG_MANIFEST),
            ("tests/tests.rs", "mod misc;\n"),
            ("tests/misc.rs", RG_MISC),
        ],
        &[("tests/misc.rs", "use crate::util::Dir;\n")],
        &[],
        declared(),
    );
    assert!(weakened(&repo).is_empty());
}

#[test]
fn tokio_rstest_test_case_and_proptest_tests_are_tests_and_should_panic_an_assertion() {
    let mut lib = RG_LIB.to_string();
    for gone in [
        "    #[tokio::test]\n    async fn parses_async() {\n        assert_eq!(parse_size(\"1\"), Some(1));\n    }\n\n",
        "    #[rstest]\n    #[case(\"2\", Some(2))]\n    fn parses_cases(#[case] s: &str, #[case] n: Option<u64>) {\n        assert_eq!(parse_size(s), n);\n    }\n\n",
        "    #[test_case(\"3\" ; \"three\")]\n    fn parses_test_case(s: &str) {\n        assert!(parse_size(s).is_some());\n    }\n\n",
        "        #[test]\n        fn parses_any(n in 0u64..1000) {\n            assert_eq!(parse_size(&n.to_string()), Some(n));\n        }\n",
        "    #[should_panic(expected = \"empty\")]\n",
    ] {
        assert!(lib.contains(gone), "{gone}");
        lib = lib.replace(gone, "");
    }
    let repo = ripgrep_repo(&[("src/lib.rs", &lib)]);
    let found = weakened(&repo);
    assert_eq!(
        found,
        [
            (
                "src/lib.rs".to_string(),
                "major".to_string(),
                "4 tests of src/lib.rs are deleted: tests::parses_async (line 10), tests::parses_cases (line 16), tests::parses_test_case (line 21), tests::parses_any (line 27); the file holds 1 test, 5 before.".to_string()
            ),
            (
                "src/lib.rs:13".to_string(),
                "major".to_string(),
                "Test tests::panics_on_empty makes fewer assertions: 0 now, 1 before this change (#[should_panic] 1 → 0).".to_string()
            )
        ]
    );
}

/// ripgrep 14's `crates/printer/src/hyperlink_aliases.rs`, cut: a table
/// and three tests of it.
const RG_ALIASES: &str = r#"/// Aliases to well-known hyperlink schemes.
pub const HYPERLINK_PATTERN_ALIASES: &[(&str, &str)] = &[
    ("file", "file://{host}{path}"),
    ("vscode", "vscode://file{path}:{line}:{column}"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_sorted() {
        let mut prev = HYPERLINK_PATTERN_ALIASES
            .get(0)
            .expect("aliases should be non-empty")
            .0;
        for &(name, _) in HYPERLINK_PATTERN_ALIASES.iter().skip(1) {
            assert!(
                name > prev,
                "'{prev}' should come before '{name}' in \
                 HYPERLINK_PATTERN_ALIASES",
            );
            prev = name;
        }
    }

    #[test]
    fn alias_names_are_reasonable() {
        for &(name, _) in HYPERLINK_PATTERN_ALIASES.iter() {
            assert!(name.chars().all(|c| c.is_alphanumeric() || c == '+'));
        }
    }

    #[test]
    fn aliases_are_valid_formats() {
        for (name, definition) in HYPERLINK_PATTERN_ALIASES {
            assert!(!definition.is_empty(), "invalid hyperlink alias '{name}'");
        }
    }
}
"#;

/// ripgrep 15's rewrite of the same tests, over `hyperlink_aliases()`:
/// `is_sorted` renamed `aliases_are_sorted`, 5 of its 11 lines kept
/// around the same `assert!`.
const RG_ALIASES_15_TESTS: &str = r#"#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_are_sorted() {
        let aliases = hyperlink_aliases();
        let mut prev =
            aliases.first().expect("aliases should be non-empty").name();
        for alias in aliases.iter().skip(1) {
            let name = alias.name();
            assert!(
                name > prev,
                "'{prev}' should come before '{name}' in \
                 HYPERLINK_PATTERN_ALIASES",
            );
            prev = name;
        }
    }

    #[test]
    fn alias_names_are_reasonable() {
        for alias in hyperlink_aliases() {
            let name = alias.name();
            assert!(name.chars().all(|c| c.is_alphanumeric() || c == '+'));
        }
    }

    #[test]
    fn aliases_are_valid_formats() {
        for alias in hyperlink_aliases() {
            let (name, definition) = (alias.name(), alias.format());
            assert!(!definition.is_empty(), "invalid hyperlink alias '{name}'");
        }
    }
}
"#;

const RG_PRINTER_LIB: &str = "mod hyperlink;\nmod hyperlink_aliases;\n";
const RG_HYPERLINK: &str = "pub struct HyperlinkFormat;\n";

fn printer_repo(branch: &[(&str, &str)], deletes: &[&str]) -> TempRepo {
    repo_with(
        &[
            ("crates/printer/src/lib.rs", RG_PRINTER_LIB),
            ("crates/printer/src/hyperlink.rs", RG_HYPERLINK),
            ("crates/printer/src/hyperlink_aliases.rs", RG_ALIASES),
        ],
        branch,
        deletes,
        json!({"files_to_modify": ["crates"]}),
    )
}

#[test]
fn a_test_file_moved_is_the_same_tests_whether_or_not_git_sees_the_rename() {
    // Moved as it is: git sees a rename.
    let lib = "mod hyperlink;\n";
    let repo = printer_repo(
        &[
            ("crates/printer/src/lib.rs", lib),
            ("crates/printer/src/hyperlink/aliases.rs", RG_ALIASES),
        ],
        &["crates/printer/src/hyperlink_aliases.rs"],
    );
    assert!(weakened(&repo).is_empty(), "{:?}", weakened(&repo));

    // ripgrep 15: the table went to `hyperlink/aliases.rs` rewritten,
    // and its tests to `hyperlink/mod.rs`, one of them renamed as it was
    // rewritten. Git sees no rename of `hyperlink_aliases.rs`.
    let aliases = "/// Aliases to well-known hyperlink schemes.\npub(super) const HYPERLINK_ALIASES: &[HyperlinkAlias] = &[\n    alias(\"file\", \"File scheme\", \"file://{host}{path}\"),\n];\n\nconst fn alias(name: &'static str, description: &'static str, format: &'static str) -> HyperlinkAlias {\n    HyperlinkAlias { name, description, format }\n}\n";
    let module = format!(
        "mod aliases;\n\npub struct HyperlinkFormat;\n\npub fn hyperlink_aliases() -> Vec<HyperlinkAlias> {{\n    aliases::HYPERLINK_ALIASES.to_vec()\n}}\n\n{RG_ALIASES_15_TESTS}"
    );
    let repo = printer_repo(
        &[
            ("crates/printer/src/lib.rs", lib),
            ("crates/printer/src/hyperlink/aliases.rs", aliases),
            ("crates/printer/src/hyperlink/mod.rs", &module),
        ],
        &[
            "crates/printer/src/hyperlink_aliases.rs",
            "crates/printer/src/hyperlink.rs",
        ],
    );
    let found = weakened(&repo);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn a_moved_test_that_lost_an_assertion_is_weakened_and_one_left_behind_is_deleted() {
    // Deleted here, added there with an edit (no rename git can see):
    // `is_sorted` lost its `assert!`.
    let lib = "mod hyperlink;\n";
    let module = format!("pub struct HyperlinkFormat;\n\n{RG_ALIASES_15_TESTS}").replace(
        "            assert!(\n                name > prev,\n                \"'{prev}' should come before '{name}' in \\\n                 HYPERLINK_PATTERN_ALIASES\",\n            );\n",
        "",
    );
    assert!(!module.contains("name > prev"));
    let repo = printer_repo(
        &[
            ("crates/printer/src/lib.rs", lib),
            ("crates/printer/src/hyperlink/mod.rs", &module),
        ],
        &[
            "crates/printer/src/hyperlink_aliases.rs",
            "crates/printer/src/hyperlink.rs",
        ],
    );
    let found = weakened(&repo);
    assert_eq!(found.len(), 1, "{found:?}");
    // Renamed, and rewritten past recognition once its assertion is gone:
    // deleted, at the file git sees it renamed to.
    assert_eq!(
        found[0],
        (
            "crates/printer/src/hyperlink/mod.rs".to_string(),
            "major".to_string(),
            "Test tests::is_sorted (crates/printer/src/hyperlink_aliases.rs:12 before this change) is deleted; the file holds 3 tests, 3 before.".to_string()
        )
    );

    // Moved (git sees the rename) with an assertion less: weakened.
    let moved = RG_ALIASES.replace(
        "            assert!(!definition.is_empty(), \"invalid hyperlink alias '{name}'\");\n",
        "            let _ = (name, definition);\n",
    );
    let repo = printer_repo(
        &[
            ("crates/printer/src/lib.rs", lib),
            ("crates/printer/src/hyperlink/aliases.rs", &moved),
        ],
        &["crates/printer/src/hyperlink_aliases.rs"],
    );
    let found = weakened(&repo);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "crates/printer/src/hyperlink/aliases.rs:35");
    assert_eq!(
        found[0].2,
        "Test tests::aliases_are_valid_formats makes fewer assertions: 0 now, 1 before this change (assert! 1 → 0)."
    );

    // A test really deleted as its file moved is still deleted.
    let without = RG_ALIASES.replace(
        "    #[test]\n    fn alias_names_are_reasonable() {\n        for &(name, _) in HYPERLINK_PATTERN_ALIASES.iter() {\n            assert!(name.chars().all(|c| c.is_alphanumeric() || c == '+'));\n        }\n    }\n\n",
        "",
    );
    assert_ne!(without, RG_ALIASES);
    let repo = printer_repo(
        &[
            ("crates/printer/src/lib.rs", lib),
            ("crates/printer/src/hyperlink/aliases.rs", &without),
        ],
        &["crates/printer/src/hyperlink_aliases.rs"],
    );
    let found = weakened(&repo);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].2.starts_with("Test tests::alias_names_are_reasonable (crates/printer/src/hyperlink_aliases.rs:28 before this change) is deleted"),
        "{found:?}"
    );
}
