//! The configured check commands: each program found on the PATH, and
//! each run once at main's commit in a temporary checkout (never the
//! working tree), with its timeout: passing, failing, timing out, and
//! whether it edits the files it checks.

use std::path::Path;

use super::{Findings, Inputs};
use crate::checks::trial::{self, End};
use crate::checks::{CommandCheck, Finding};
use crate::onboard::{detect, python};

pub(super) fn check(
    root: &Path,
    main: &str,
    commands: &[CommandCheck],
    inputs: &Inputs,
    out: &mut Findings,
) {
    if commands.is_empty() {
        out.note("none configured: reviews run speed's own checks only ([[checks.command]] adds your tools; see docs/checks.md)");
        return;
    }
    for command in commands {
        let name = &command.name;
        let Some(program) = command.run.first() else {
            out.problem(
                format!("{name}: its `run` is empty"),
                "give it the command to run",
            );
            continue;
        };
        let Some(path) = detect::which(program, inputs.env) else {
            out.problem(
                format!("{name}: `{program}` is not found on PATH, so every review reports the check as failed"),
                format!("install {program}, or comment the check out in .speed/config.toml"),
            );
            continue;
        };
        working_tree_imports(root, command, &path, inputs, out);
        (inputs.progress)(&format!(
            "running {name} (`{}`) at main in a temporary checkout, for at most {}…",
            command.run.join(" "),
            humantime::format_duration(command.timeout)
        ));
        let tried = match trial::trial(root, main, command) {
            Ok(tried) => tried,
            Err(err) => {
                out.warn(
                    format!("{name}: could not be tried: {err}"),
                    "check the temporary folder (TMPDIR) has room",
                );
                continue;
            }
        };
        let took = tried.duration.as_secs_f64();
        let shown = command.run.join(" ");
        match &tried.ended {
            End::Passed => out.ok(format!("{name}: `{shown}` passed at main in {took:.1} s")),
            End::Failed(what) => {
                let mut text = format!("{name}: `{shown}` {what} at main (in {took:.1} s)");
                match found(&tried.findings) {
                    // Its parser read it: what a review would show, not
                    // the end of a JSON array.
                    Some(list) => text.push_str(&list),
                    None if !tried.tail.is_empty() => {
                        text.push_str(&format!("; its last lines:\n{}", tried.tail));
                    }
                    None => {}
                }
                for notice in &tried.notices {
                    text.push_str(&format!("\n{notice}"));
                }
                out.warn(
                    text,
                    "fix what fails on main first: each review carries these failures, and a finding on a line the change did not touch is only preexisting",
                );
            }
            End::TimedOut(after) => out.warn(
                format!(
                    "{name}: `{shown}` did not finish within its timeout ({}) at main, and was killed",
                    humantime::format_duration(*after)
                ),
                "raise its timeout_secs, or make the command quicker (a fresh checkout has no build cache)",
            ),
            End::NotStarted(why) => out.problem(
                format!("{name}: `{shown}` could not be started: {why}"),
                "check the command and that it is executable",
            ),
        }
        if !tried.modified.is_empty() {
            let mut files = tried.modified.join(", ");
            if tried.modified_more > 0 {
                files.push_str(&format!(" and {} more", tried.modified_more));
            }
            out.warn(
                format!("{name} edits the files of its checkout: {files}; a check must report, not change the code it checks"),
                "make it report only (ruff: `--no-fix`, or no `fix = true` in its configuration; formatters: `--check`)",
            );
        }
    }
}

/// How many of a failed command's findings are named.
const SHOWN_FINDINGS: usize = 5;

/// The longest message shown of a finding.
const SHOWN_MESSAGE: usize = 160;

/// A failed command's findings as its parser read them, the first few
/// named at their file and line; None when nothing located was read (no
/// parser, or output it could not read: the tail says more then).
fn found(findings: &[Finding]) -> Option<String> {
    let located: Vec<&Finding> = findings.iter().filter(|f| f.file.is_some()).collect();
    if located.is_empty() {
        return None;
    }
    let count = located.len();
    let mut text = format!(
        ": {count} finding{} (a review shows them as preexisting where a change does not touch their lines)",
        if count == 1 { "" } else { "s" }
    );
    for finding in located.iter().take(SHOWN_FINDINGS) {
        let place = match (&finding.file, finding.line) {
            (Some(file), Some(line)) => format!("{file}:{line}"),
            (Some(file), None) => file.clone(),
            _ => String::new(),
        };
        let rule = finding
            .rule
            .as_deref()
            .map(|r| format!("{r} "))
            .unwrap_or_default();
        let message = finding.message.lines().next().unwrap_or_default();
        let message: String = if message.chars().count() > SHOWN_MESSAGE {
            let cut: String = message.chars().take(SHOWN_MESSAGE).collect();
            format!("{cut}…")
        } else {
            message.to_string()
        };
        text.push_str(&format!("\n{place}: {rule}{message}"));
    }
    if count > SHOWN_FINDINGS {
        text.push_str(&format!("\n… and {} more", count - SHOWN_FINDINGS));
    }
    // A failure its output did not explain is said too.
    for failure in findings.iter().filter(|f| f.file.is_none()) {
        text.push_str(&format!("\n{}", failure.message));
    }
    Some(text)
}

/// A Python check whose environment has this repository installed in
/// editable mode imports the working tree's code in the checkout, unless
/// its command puts the checkout's code first.
fn working_tree_imports(
    root: &Path,
    command: &CommandCheck,
    program: &Path,
    inputs: &Inputs,
    out: &mut Findings,
) {
    let first = command
        .run
        .iter()
        .any(|arg| arg.contains("pythonpath=") || arg.starts_with("PYTHONPATH="));
    if first {
        return;
    }
    let installs = python::editable_installs(program, root, inputs.env);
    let Some(install) = installs.first() else {
        return;
    };
    let names: Vec<&str> = installs.iter().map(|i| i.name.as_str()).collect();
    let dir = python::import_root(root).unwrap_or("src");
    let fix = if command.run.iter().any(|arg| arg.contains("pytest")) {
        format!(
            "put the checkout's code first: add \"-o\", \"pythonpath={dir}\" to its run (pytest inserts it before site-packages)"
        )
    } else {
        format!(
            "put the checkout's code first: run = [\"env\", \"PYTHONPATH={dir}\", {}]",
            command
                .run
                .iter()
                .map(|a| format!("{a:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    out.warn(
        format!(
            "{}: the Python it runs with has {} installed in editable mode from your working tree ({}, in {}): in the temporary checkout, its imports find your working tree's code, not the commit under review",
            command.name,
            names.join(", "),
            install.from.display(),
            install.site_packages.display()
        ),
        fix,
    );
}
