//! `error_discarded` through the real binary, on excerpts of real code:
//! ripgrep's `File::open` arm that returns `None`, its `let _ =` on
//! `print_stats` and `try_associate`; flask's `from_prefixed_env` that
//! keeps a value when `loads` fails, Django's `localtime` filter that
//! returns `""` on any error. Beside each, the near misses that handle the
//! error (flask's `wsgi_app` bare `except:` that raises again, a
//! `Result` used as an either in a field, `let _ = tx.send(…)`), test
//! code, and lines the diff does not add. Offline reviews, and a dry run
//! for the prompt.

use serde_json::Value;

use crate::code_checks::{declared, repo_with};
use crate::support::repo::TempRepo;
use crate::support::speed::speed;

/// The offline review of task 1: (exit code, report).
fn review(repo: &TempRepo) -> (i32, Value) {
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--offline", "--json"],
        &[],
    );
    assert!(run.code == 0 || run.code == 50, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let report = out["reviews"][0].clone();
    assert_eq!(report["error"], Value::Null, "{}", run.transcript());
    (run.code, report)
}

/// The `error_discarded` findings as ("file:line", severity, message).
fn discarded(report: &Value) -> Vec<(String, String, String)> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "error_discarded")
        .map(|c| {
            (
                format!("{}:{}", c["file"].as_str().unwrap(), c["line"]),
                c["severity"].as_str().unwrap().to_string(),
                c["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn places(found: &[(String, String, String)]) -> Vec<&str> {
    found.iter().map(|f| f.0.as_str()).collect()
}

const RUST_LIB: &str = "pub mod gitignore;\npub mod decompress;\npub mod stats;\n";

/// ripgrep 15.1.0 `crates/ignore/src/gitignore.rs`, before the change: a
/// `let _ =` that the change leaves alone.
const GITIGNORE_MAIN: &str = r#"use std::fs::{self, File};
use std::io::{BufReader, Read};
use std::path::Path;

pub fn forget(path: &Path) {
    let _ = fs::remove_file(path);
}
"#;

/// The change adds ripgrep's `gitconfig_home_contents`, a test module
/// that discards on purpose, and a function that handles its error.
const GITIGNORE_BRANCH: &str = r#"use std::fs::{self, File};
use std::io::{BufReader, Read};
use std::path::Path;

pub fn forget(path: &Path) {
    let _ = fs::remove_file(path);
}

/// Returns the file contents of git's global config file, if one exists, in
/// the user's home directory.
fn gitconfig_home_contents() -> Option<Vec<u8>> {
    let home = match home_dir() {
        None => return None,
        Some(home) => home,
    };
    let mut file = match File::open(home.join(".gitconfig")) {
        Err(_) => return None,
        Ok(file) => BufReader::new(file),
    };
    let mut contents = vec![];
    file.read_to_end(&mut contents).ok().map(|_| contents)
}

pub fn excludes(path: &Path) -> Result<Vec<u8>, std::io::Error> {
    let mut file = match File::open(path) {
        Err(err) => return Err(err),
        Ok(file) => file,
    };
    let mut contents = vec![];
    file.read_to_end(&mut contents)?;
    Ok(contents)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk() {
        for entry in std::fs::read_dir(".").unwrap() {
            let entry = match entry {
                Err(_) => continue,
                Ok(entry) => entry,
            };
            let _ = fs::remove_file(entry.path());
        }
    }
}
"#;

/// ripgrep's `crates/cli/src/decompress.rs`: `associate` ignores what
/// `try_associate` (a `Result`) says; `close` matches a `Result` that is
/// an either (a command's reader or a plain file), not a failure.
const DECOMPRESS: &str = r#"use std::fs::File;
use std::io;

pub struct CommandError;
pub struct CommandReader;

impl CommandReader {
    fn close(&mut self) -> io::Result<()> {
        Ok(())
    }
}

pub struct DecompressionMatcherBuilder;

impl DecompressionMatcherBuilder {
    pub fn associate(&mut self, glob: &str, program: &str) -> &mut DecompressionMatcherBuilder {
        let _ = self.try_associate(glob, program);
        self
    }

    pub fn try_associate(
        &mut self,
        glob: &str,
        program: &str,
    ) -> Result<&mut DecompressionMatcherBuilder, CommandError> {
        Ok(self)
    }
}

pub struct DecompressionReader {
    rdr: Result<CommandReader, File>,
}

impl DecompressionReader {
    pub fn close(&mut self) -> io::Result<()> {
        match self.rdr {
            Ok(ref mut rdr) => rdr.close(),
            Err(_) => Ok(()),
        }
    }
}
"#;

/// ripgrep's `crates/core/main.rs` `search`'s end, with `print_stats`,
/// and calls whose errors have nowhere to go or nobody waiting.
const STATS: &str = r#"use std::io::{self, Write};
use std::sync::mpsc::Sender;

pub fn search(stats: Option<u64>, wtr: &mut Vec<u8>, tx: Sender<u64>) -> bool {
    if let Some(ref stats) = stats {
        let _ = print_stats(*stats, wtr);
    }
    let _ = tx.send(1);
    let _ = writeln!(io::stderr(), "searched");
    let mut summary = String::new();
    let _ = write!(summary, "{}", 1);
    io::stdout().flush().ok();
    let config = std::fs::read_to_string("rg.toml").unwrap_or_default();
    !config.is_empty()
}

fn print_stats<W: Write>(stats: u64, mut wtr: W) -> io::Result<()> {
    writeln!(wtr, "{stats} matches")
}
"#;

fn rust_repo() -> TempRepo {
    repo_with(
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"ig\"\nversion = \"0.1.0\"\n",
            ),
            ("src/lib.rs", RUST_LIB),
            ("src/gitignore.rs", GITIGNORE_MAIN),
        ],
        &[
            ("src/gitignore.rs", GITIGNORE_BRANCH),
            ("src/decompress.rs", DECOMPRESS),
            ("src/stats.rs", STATS),
            (
                "tests/clean.rs",
                "#[test]\nfn clean() {\n    let _ = std::fs::remove_file(\"x\");\n}\n",
            ),
        ],
        &[],
        declared(),
    )
}

#[test]
fn rust_discards_are_found_where_the_change_adds_them() {
    let repo = rust_repo();
    let (code, report) = review(&repo);
    let found = discarded(&report);
    assert_eq!(
        places(&found),
        [
            "src/decompress.rs:17",
            "src/gitignore.rs:17",
            "src/stats.rs:6",
            "src/stats.rs:12",
            "src/stats.rs:13",
        ],
        "{found:#?}"
    );
    let message = |at: &str| &found.iter().find(|f| f.0 == at).unwrap().2;
    assert_eq!(
        message("src/gitignore.rs:17"),
        "`Err(_) => return None` in `gitconfig_home_contents`: the error is discarded and the code carries on as if nothing failed."
    );
    assert!(
        message("src/decompress.rs:17")
            .starts_with("`let _ = self.try_associate(glob, program)` in `associate`"),
        "{found:#?}"
    );
    assert!(message("src/stats.rs:6").starts_with("`let _ = print_stats(*stats, wtr)`"));
    assert!(message("src/stats.rs:12").starts_with("`io::stdout().flush().ok();`"));
    assert!(message("src/stats.rs:13").contains("unwrap_or_default()"));
    // Minor: a fact for the reviewer, never blocking alone.
    assert!(found.iter().all(|f| f.1 == "minor"), "{found:#?}");
    assert_eq!(report["verdict"], "checks_passed", "{report:#}");
    assert_eq!(code, 0);
}

/// flask 3.1.0 `src/flask/config.py`'s `from_prefixed_env` (cut).
const FLASK_CONFIG: &str = r#"import json
import os


class Config(dict):
    def from_prefixed_env(self, prefix="FLASK", *, loads=json.loads):
        prefix = f"{prefix}_"

        for key in sorted(os.environ):
            if not key.startswith(prefix):
                continue

            value = os.environ[key]
            key = key.removeprefix(prefix)

            try:
                value = loads(value)
            except Exception:
                # Keep the value as a string if loading failed.
                pass

            self[key] = value

        return True
"#;

/// Django 5.1.4 `django/templatetags/tz.py`'s `do_timezone` (cut), after
/// a function the change does not touch.
const DJANGO_TZ_MAIN: &str = r#"from django.utils import timezone


def utc(value):
    try:
        return timezone.localtime(value, timezone.utc)
    except Exception:
        return ""
"#;

const DJANGO_TZ_BRANCH: &str = r#"from django.utils import timezone


def utc(value):
    try:
        return timezone.localtime(value, timezone.utc)
    except Exception:
        return ""


def do_timezone(value, arg):
    # Obtain a timezone-aware datetime
    try:
        if timezone.is_naive(value):
            default_timezone = timezone.get_default_timezone()
            value = timezone.make_aware(value, default_timezone)
    # Filters must never raise exceptionsm, so catch everything.
    except Exception:
        return ""
    return value


def load(path):
    try:
        return open(path).read()
    except:
        return None
"#;

/// flask 3.1.0 `src/flask/app.py`'s `wsgi_app` and `cli.py`'s
/// `list_commands` (cut): every error is handled.
const FLASK_APP: &str = r#"import sys
import traceback

import click


class Flask:
    def wsgi_app(self, environ, start_response):
        ctx = self.request_context(environ)
        error = None
        try:
            try:
                ctx.push()
                response = self.full_dispatch_request()
            except Exception as e:
                error = e
                response = self.handle_exception(e)
            except:  # noqa: B001
                error = sys.exc_info()[1]
                raise
            return response(environ, start_response)
        finally:
            ctx.pop(error)

    def list_commands(self, ctx, info, rv):
        try:
            rv.update(info.load_app().cli.list_commands(ctx))
        except Exception:
            click.secho(f"{traceback.format_exc()}\n", err=True, fg="red")
        try:
            rv.update(info.extra)
        except ValueError:
            pass
        return sorted(rv)
"#;

const PY_TEST: &str =
    "def test_load():\n    try:\n        load()\n    except Exception:\n        pass\n";

fn python_repo() -> TempRepo {
    repo_with(
        &[
            ("src/flask/__init__.py", ""),
            ("src/django/tz.py", DJANGO_TZ_MAIN),
        ],
        &[
            ("src/flask/config.py", FLASK_CONFIG),
            ("src/django/tz.py", DJANGO_TZ_BRANCH),
            ("src/flask/app.py", FLASK_APP),
            ("tests/test_config.py", PY_TEST),
            ("src/conftest.py", PY_TEST),
            ("src/flask/test_helpers.py", PY_TEST),
        ],
        &[],
        declared(),
    )
}

#[test]
fn python_discards_are_found_where_the_change_adds_them() {
    let repo = python_repo();
    let (code, report) = review(&repo);
    let found = discarded(&report);
    assert_eq!(
        places(&found),
        [
            "src/django/tz.py:18",
            "src/django/tz.py:26",
            "src/flask/config.py:18",
        ],
        "{found:#?}"
    );
    assert_eq!(
        found[0].2,
        "`except Exception: return \"\"` in `do_timezone`: every error the `try` body raises is discarded."
    );
    assert!(
        found[1]
            .2
            .starts_with("`except:` in `load`: a bare `except:` catches every exception")
    );
    assert_eq!(
        found[2].2,
        "`except Exception: pass` in `from_prefixed_env`: every error the `try` body raises is discarded."
    );
    assert!(found.iter().all(|f| f.1 == "minor"));
    assert_eq!(code, 0, "{report:#}");
}

#[test]
fn its_severity_is_configured_like_the_other_checks() {
    let repo = python_repo();
    repo.config("[checks]\nerror_discarded = \"major\"\n");
    let (code, report) = review(&repo);
    let found = discarded(&report);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found.iter().all(|f| f.1 == "major"));
    assert_eq!(report["verdict"], "request_changes");
    assert_eq!(code, 50);

    repo.config("[checks]\nerror_discarded = \"off\"\n");
    let (code, report) = review(&repo);
    assert_eq!(discarded(&report), []);
    assert_eq!(code, 0);
}

#[test]
fn the_model_reads_them_among_the_automated_check_results() {
    let repo = rust_repo();
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--dry-run", "--json"],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let dry = &out["reviews"][0];
    let prompt = dry["prompt"].as_str().unwrap();
    let results = prompt
        .split("## 6. Automated check results")
        .nth(1)
        .expect("the automated check results");
    assert!(
        results.contains("speed check: error_discarded")
            && results.contains("src/gitignore.rs:17")
            && results.contains("gitconfig_home_contents"),
        "{results}"
    );
}
