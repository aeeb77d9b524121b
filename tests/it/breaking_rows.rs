//! What the blast radius calls breaking, through the real binary: a
//! signature change no call can notice is not (a Rust parameter renamed, a
//! Python annotation refined, a Python parameter added with a default), a
//! Python parameter renamed that callers may pass by keyword is; and the
//! terminal's counts add up to the changed symbols and the breaking ones.

use serde_json::Value;

use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::speed;

const SPEC: &str = "# Files\n\n## Links\n\nA link names its original.\n";

const FS_BASE: &str = "pub fn hard_link(src: &str, dst: &str) -> bool {\n    src != dst\n}\n";
const FS_HEAD: &str =
    "pub fn hard_link(original: &str, link: &str) -> bool {\n    original != link\n}\n";
const FS_TYPED: &str =
    "pub fn hard_link(original: &str, link: String) -> bool {\n    original != link\n}\n";

const APP_BASE: &str = "\
import os
import typing as t


class Flask:
    def __init__(self, import_name: str, static_folder: t.Optional[t.Union[str, os.PathLike]] = \"static\"):
        self.name = import_name


def open_resource(resource: str, mode: str = \"rb\"):
    return resource


def send_file(path_or_file, mimetype=None):
    return path_or_file
";

const CLI: &str = "\
from pkg.app import Flask, open_resource, send_file


def main():
    app = Flask(\"x\")
    open_resource(\"schema.sql\")
    return send_file(\"a.txt\"), app
";

fn files_repo(fs_head: &str) -> TempRepo {
    let app_head = APP_BASE
        .replace(
            "t.Optional[t.Union[str, os.PathLike]]",
            "str | os.PathLike[str] | None",
        )
        .replace(
            "mode: str = \"rb\")",
            "mode: str = \"rb\", encoding: str | None = None)",
        )
        .replace(
            "send_file(path_or_file, mimetype=None):\n    return path_or_file",
            "send_file(path, mimetype=None):\n    return path",
        )
        // Added, and used nowhere yet.
        + &(1..=6)
            .map(|i| format!("\n\ndef helper_{i}():\n    return {i}\n"))
            .collect::<String>();
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[
            ("specs/product/files.md", SPEC),
            (
                "Cargo.toml",
                "[package]\nname = \"files\"\nversion = \"0.1.0\"\n",
            ),
            ("src/lib.rs", "pub mod fs;\npub mod app;\n"),
            ("src/fs.rs", FS_BASE),
            (
                "src/app.rs",
                "pub fn run() -> bool {\n    crate::fs::hard_link(\"a\", \"b\")\n}\n",
            ),
            ("pkg/__init__.py", ""),
            ("pkg/app.py", APP_BASE),
            ("pkg/cli.py", CLI),
        ],
        &[],
        "main",
    )
    .unwrap();
    b.commit(
        "feature/links",
        Some("main"),
        &[("src/fs.rs", fs_head), ("pkg/app.py", &app_head)],
        &[],
        "links",
    )
    .unwrap();
    b.checkout("main").unwrap();
    repo::adopt(tmp, root)
}

fn review(repo: &TempRepo, extra: &[&str]) -> crate::support::speed::Run {
    let mut args = vec![
        "review",
        "--branch",
        "feature/links",
        "--spec",
        "specs/product/files.md",
        "--offline",
        "--color",
        "never",
    ];
    args.extend_from_slice(extra);
    let run = speed(repo.path(), &args, &[]);
    assert!(matches!(run.code, 0 | 50), "{}", run.transcript());
    run
}

/// (symbol, change, breaking) of each changed symbol.
fn breaking(repo: &TempRepo) -> Vec<(String, String, bool)> {
    let run = review(repo, &["--json"]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let mut out: Vec<(String, String, bool)> = json["reviews"][0]["impact"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["change"] == "signature_changed")
        .map(|s| {
            (
                s["symbol"].as_str().unwrap().to_string(),
                s["change"].as_str().unwrap().to_string(),
                s["breaking"] == true,
            )
        })
        .collect();
    out.sort();
    out
}

fn row(symbol: &str, breaking: bool) -> (String, String, bool) {
    (
        symbol.to_string(),
        "signature_changed".to_string(),
        breaking,
    )
}

#[test]
fn renames_refinements_and_defaults_no_call_notices_are_not_breaking() {
    let repo = files_repo(FS_HEAD);
    assert_eq!(
        breaking(&repo),
        [
            row("Flask.__init__", false),
            row("hard_link", false),
            row("open_resource", false),
            // A caller may write `send_file(path_or_file=…)`.
            row("send_file", true),
        ]
    );
    // A Rust parameter's type changed is noticed.
    let repo = files_repo(FS_TYPED);
    assert!(breaking(&repo).contains(&row("hard_link", true)));
}

#[test]
fn the_terminal_counts_add_up_to_the_changed_and_the_breaking_symbols() {
    let repo = files_repo(FS_TYPED);
    let run = review(&repo, &[]);
    let out = &run.stdout;
    let header = out
        .lines()
        .find(|l| l.contains("Blast radius:"))
        .unwrap_or_else(|| panic!("{out}"));
    let number = |text: &str, after: &str| -> usize {
        let at = text
            .find(after)
            .unwrap_or_else(|| panic!("{after} in {text}"));
        text[..at]
            .split(|c: char| !c.is_ascii_digit())
            .rfind(|w| !w.is_empty())
            .unwrap()
            .parse()
            .unwrap()
    };
    let total = number(header, " changed symbol");
    let breaking_total = number(header, " breaking");
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains("Blast radius:"))
        .skip(1)
        .take_while(|l| l.starts_with("    ") && !l.trim().starts_with('…'))
        .collect();
    let marked = rows
        .iter()
        .filter(|l| l.trim_start().starts_with('!'))
        .count();
    let footer = out
        .lines()
        .find(|l| l.contains("more in the report"))
        .unwrap_or_else(|| panic!("{out}"));
    let rest = number(footer, " more in the report");
    assert_eq!(rows.len() + rest, total, "{out}");
    let listed: usize = footer
        .split(": ")
        .nth(1)
        .unwrap()
        .split(", ")
        .map(|p| p.split(' ').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(listed, rest, "{footer}");
    let rest_breaking = if footer.contains(" breaking") {
        number(footer, " breaking")
    } else {
        0
    };
    assert_eq!(marked + rest_breaking, breaking_total, "{out}");
    assert!(breaking_total >= 2, "{out}");
}
