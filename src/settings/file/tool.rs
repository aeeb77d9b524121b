//! The keys of a `[[checks.command]]` that say how its tool's output is
//! read: `parser` (and `pattern` for `regex`), `report`, `category`,
//! `blocking` and `fix_priority`, each checked like every other key.

use crate::checks::parsers::{Parser, Pattern};
use crate::checks::{Blocking, Category, Tool};

use super::{Reader, Table};

/// The keys this adds to a `[[checks.command]]`.
pub(super) const KEYS: &[&str] = &[
    "parser",
    "pattern",
    "report",
    "category",
    "blocking",
    "fix_priority",
];

/// `fix_priority`: 1 is first; seed 002 counts 1 to 6, and its severity
/// offsets go to +20.
const FIX_PRIORITY: std::ops::RangeInclusive<i64> = 0..=1000;

impl Reader<'_> {
    /// How `entry`'s output is read; problems are recorded.
    pub(super) fn command_tool(&mut self, entry: &Table) -> Tool {
        let pattern =
            self.string(entry, "pattern")
                .and_then(|source| match Pattern::new(&source) {
                    Ok(pattern) => Some(pattern),
                    Err(why) => {
                        let span = entry.get("pattern").map_or(0..0, |v| v.span());
                        self.problem(
                            span,
                            entry.path("pattern"),
                            format!("not a usable pattern: {why}"),
                        );
                        None
                    }
                });
        let had_pattern = entry.get("pattern").is_some();
        let name = self.word(entry, "parser", &Parser::NAMES);
        let parser = match name.as_deref() {
            Some("regex") if !had_pattern => {
                let span = entry.get("parser").map_or(0..0, |v| v.span());
                self.problem(
                    span,
                    entry.path("pattern"),
                    "missing: parser = \"regex\" needs a pattern with named groups (file, line, col, severity, message, rule)".to_string(),
                );
                None
            }
            Some(name) => Parser::named(name, pattern),
            None => None,
        };
        let not_regex = match entry.get("parser") {
            None => true,
            // An unknown parser is its own problem already.
            Some(_) => name.as_deref().is_some_and(|n| n != "regex"),
        };
        if had_pattern && not_regex {
            let span = entry.get("pattern").map_or(0..0, |v| v.span());
            self.problem(
                span,
                entry.path("pattern"),
                "a pattern is read only with parser = \"regex\"".to_string(),
            );
        }
        let report = self.repo_path(entry, "report");
        if report.is_some() && entry.get("parser").is_none() {
            let span = entry.get("report").map_or(0..0, |v| v.span());
            self.problem(
                span,
                entry.path("report"),
                "a report is read only with a parser (junit, sarif, …)".to_string(),
            );
        }
        let words: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
        let category = self
            .word(entry, "category", &words)
            .and_then(|w| Category::parse(&w));
        Tool {
            parser,
            report,
            category,
            blocking: self.blocking(entry).unwrap_or_default(),
            fix_priority: self.u32(entry, "fix_priority", FIX_PRIORITY),
        }
    }

    /// `blocking`: true, false or "all".
    fn blocking(&mut self, entry: &Table) -> Option<Blocking> {
        let value = entry.get("blocking")?;
        match (value.get_ref().as_bool(), value.get_ref().as_str()) {
            (Some(true), _) => Some(Blocking::Changed),
            (Some(false), _) => Some(Blocking::Never),
            (_, Some("all")) => Some(Blocking::All),
            _ => {
                self.expected(entry, "blocking", value, "true, false or \"all\"");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Error, parse};
    use crate::checks::parsers::Parser;
    use crate::checks::{Blocking, Category};

    fn problems(text: &str) -> Vec<String> {
        match parse(text, "cfg.toml") {
            Err(Error::Invalid { problems, .. }) => {
                problems.0.iter().map(|p| p.to_string()).collect()
            }
            other => panic!("expected problems, got {other:?}"),
        }
    }

    fn entry(keys: &str) -> String {
        format!("[[checks.command]]\nname = \"c\"\nrun = [\"c\"]\n{keys}")
    }

    #[test]
    fn the_tool_keys_parse() {
        let text = entry(
            "parser = \"junit\"\nreport = \"target/nextest/ci/junit.xml\"\ncategory = \"test\"\nblocking = \"all\"\nfix_priority = 2\n",
        );
        let file = parse(&text, "cfg.toml").unwrap();
        let tool = &file.checks.commands.unwrap()[0].tool;
        assert_eq!(tool.parser, Some(Parser::Junit));
        assert_eq!(tool.report.as_deref(), Some("target/nextest/ci/junit.xml"));
        assert_eq!(tool.category, Some(Category::Test));
        assert_eq!(tool.blocking, Blocking::All);
        assert_eq!(tool.fix_priority, Some(2));
        let text = entry(
            "parser = \"regex\"\npattern = '^(?P<file>[^:]+):(?P<line>\\d+): (?P<message>.*)$'\nblocking = false\n",
        );
        let file = parse(&text, "cfg.toml").unwrap();
        let tool = &file.checks.commands.unwrap()[0].tool;
        assert!(matches!(tool.parser, Some(Parser::Regex(_))));
        assert_eq!(tool.blocking, Blocking::Never);
    }

    #[test]
    fn wrong_tool_keys_are_named() {
        let p = problems(&entry("parser = \"clipy\"\n"));
        assert!(
            p[0].contains("checks.command[0].parser") && p[0].contains("did you mean \"ruff\"")
                || p[0].contains("one of"),
            "{p:?}"
        );
        let p = problems(&entry("parser = \"regex\"\n"));
        assert!(p[0].contains("needs a pattern"), "{p:?}");
        let p = problems(&entry(
            "parser = \"regex\"\npattern = \"(?P<lnie>\\\\d+)\"\n",
        ));
        assert!(p[0].contains("`lnie`"), "{p:?}");
        let p = problems(&entry("pattern = \"(?P<message>.*)\"\n"));
        assert!(p[0].contains("only with parser = \"regex\""), "{p:?}");
        let p = problems(&entry("parser = \"sarif\"\nreport = \"../out.sarif\"\n"));
        assert!(p[0].contains("relative to the repository root"), "{p:?}");
        let p = problems(&entry("report = \"out.xml\"\n"));
        assert!(p[0].contains("only with a parser"), "{p:?}");
        let p = problems(&entry("category = \"style\"\n"));
        assert!(p[0].contains("\"typecheck\""), "{p:?}");
        let p = problems(&entry("blocking = \"some\"\n"));
        assert!(p[0].contains("true, false or \"all\""), "{p:?}");
        let p = problems(&entry("fix_priority = -1\n"));
        assert!(p[0].contains("from 0 to 1000"), "{p:?}");
        let p = problems(&entry("parsr = \"cargo\"\n"));
        assert!(p[0].contains("did you mean `parser`"), "{p:?}");
    }
}
