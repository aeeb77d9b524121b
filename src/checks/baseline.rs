//! The base commit's word on preexisting findings. A finding on a line the
//! diff did not touch is not this change's by the line rule; but a change
//! breaks code it does not touch (a function's callers, after its
//! signature changed; a test, after the code it tests), and the line rule
//! alone would wave those through. So when a finding would block but for
//! that rule, its command runs again on the base commit: a finding also
//! there (same file, rule and words; lines may move) stays preexisting,
//! one that is not was caused by this change and blocks. This costs a
//! second run only for commands with such findings.

use std::collections::HashSet;
use std::path::Path;

use super::checkout::run_in;
use super::messages::{Changed, normalize};
use super::reading::Ran;
use super::{Blocking, CommandCheck, Error, Finding};

/// What makes two findings of one command the same across commits.
type Key = (Option<String>, Option<String>, String);

fn key(f: &Finding) -> Key {
    (f.file.clone(), f.rule.clone(), normalize(&f.message))
}

/// Whether only the line rule keeps `f` from blocking.
fn waived(f: &Finding, command: &CommandCheck) -> bool {
    f.preexisting
        && f.severity.is_blocking()
        && command.tool.blocking == Blocking::Changed
        && f.check == command.name
}

/// Check the waived findings of `ran` against the base commit.
pub(super) fn confirm(
    root: &Path,
    base: &str,
    commands: &[CommandCheck],
    ran: &mut Ran,
) -> Result<(), Error> {
    let again: Vec<CommandCheck> = commands
        .iter()
        .filter(|c| ran.findings.iter().any(|f| waived(f, c)))
        .cloned()
        .collect();
    if again.is_empty() {
        return Ok(());
    }
    let at_base = run_in(root, base, &again, &Changed::everything(), usize::MAX)?;
    let short = &base[..base.len().min(10)];
    for command in &again {
        // A base whose output could not be read (or a command that could
        // not run there) confirms nothing: the line rule stands.
        if at_base.unread.contains(&command.name) {
            ran.notices.push(format!(
                "`{}`: its findings on lines this change does not touch were taken as preexisting; the run at the base commit {short} could not confirm it",
                command.name
            ));
            continue;
        }
        let found: HashSet<Key> = at_base
            .findings
            .iter()
            .filter(|f| f.check == command.name)
            .map(key)
            .collect();
        for f in ran.findings.iter_mut().filter(|f| waived(f, command)) {
            if !found.contains(&key(f)) {
                f.preexisting = false;
                f.advisory = false;
                f.message.push_str(&format!(
                    "\n(on a line this change does not touch, but not found at the base commit {short}: this change caused it)"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::parsers::Parser;
    use crate::checks::{Category, Severity, Tool};
    use std::time::Duration;

    #[test]
    fn only_findings_the_line_rule_waives_are_looked_for() {
        let command = CommandCheck {
            name: "mypy".to_string(),
            run: vec!["mypy".to_string()],
            severity: Severity::Major,
            timeout: Duration::from_secs(1),
            tool: Tool {
                parser: Some(Parser::Mypy),
                category: Some(Category::Typecheck),
                ..Tool::default()
            },
        };
        let f = Finding {
            check: "mypy".to_string(),
            severity: Severity::Major,
            file: Some("a.py".to_string()),
            line: Some(3),
            message: "Incompatible types at line 3".to_string(),
            preexisting: true,
            advisory: true,
            ..Finding::default()
        };
        assert!(waived(&f, &command));
        let minor = Finding {
            severity: Severity::Minor,
            ..f.clone()
        };
        assert!(!waived(&minor, &command));
        let all = CommandCheck {
            tool: Tool {
                blocking: Blocking::All,
                ..command.tool.clone()
            },
            ..command.clone()
        };
        assert!(!waived(&f, &all));
        // Lines move between commits; the words are what match.
        let moved = Finding {
            line: Some(9),
            message: "Incompatible types at line 9".to_string(),
            ..f.clone()
        };
        assert_eq!(key(&f), key(&moved));
    }
}
