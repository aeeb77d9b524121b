//! A tool's parsed messages as findings of its command check: each placed
//! at a file of the checkout or nowhere, weighed, marked preexisting when
//! it sits on a line the diff did not touch, cleaned, and capped.
//!
//! Everything a message says is untrusted. A place is kept only when it
//! names a regular file inside the checkout (an absolute path under it is
//! made relative; `..`, other absolute paths and symbolic links leading
//! out are refused without being read), a line only when the file has it,
//! a column only beside a line. Text loses terminal escapes and control
//! characters, is cut to a few lines, and passes the secrets redaction.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::git::{Diff, LineKind};

use super::parsers::{Level, Message, Parsed, Place};
use super::{Blocking, CommandCheck, Finding, Severity};

/// Findings kept per command; the rest are summed up in one more.
pub const MAX_FINDINGS: usize = 100;
const MAX_TEXT_BYTES: usize = 2000;
const MAX_TEXT_LINES: usize = 16;
const MAX_RULE_CHARS: usize = 200;
/// Larger files are not read to check a line number.
const MAX_COUNTED_BYTES: u64 = 64 << 20;
const MAX_COLUMN: u64 = 100_000;

/// The lines a diff adds or changes, by the head side's path: what a
/// finding must sit on to be this change's.
#[derive(Debug, Clone, Default)]
pub struct Changed {
    lines: HashMap<String, HashSet<u32>>,
    /// No diff to go by: every finding is the change's.
    everything: bool,
}

impl Changed {
    pub fn of(diff: &Diff) -> Changed {
        let mut lines: HashMap<String, HashSet<u32>> = HashMap::new();
        for file in &diff.files {
            let added = lines.entry(file.path.clone()).or_default();
            for hunk in &file.hunks {
                for line in &hunk.lines {
                    if let (LineKind::Added, Some(n)) = (line.kind, line.new_lineno) {
                        added.insert(n);
                    }
                }
            }
        }
        Changed {
            lines,
            everything: false,
        }
    }

    /// With no diff to go by: nothing is preexisting.
    pub fn everything() -> Changed {
        Changed {
            lines: HashMap::new(),
            everything: true,
        }
    }

    /// Whether a finding at `file:line` is on the change: on an added
    /// line, or anywhere in a changed file when it has no line.
    pub fn touches(&self, file: &str, line: Option<u32>) -> bool {
        if self.everything {
            return true;
        }
        match (self.lines.get(file), line) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(added), Some(line)) => added.contains(&line),
        }
    }
}

/// What turning one command's messages into findings needs.
pub struct Reading<'a> {
    pub check: &'a CommandCheck,
    /// The checkout the command ran in.
    pub dir: &'a Path,
    pub changed: &'a Changed,
    /// Findings kept; the rest are counted in one more.
    pub cap: usize,
}

/// The findings of `parsed`, worst first, at most `reading.cap` and one
/// that counts the rest.
pub fn findings(reading: &Reading, parsed: Parsed) -> Vec<Finding> {
    let mut files = Files::new(reading.dir);
    let mut found: Vec<Finding> = parsed
        .messages
        .into_iter()
        .map(|m| finding(reading, &mut files, m))
        .collect();
    found.sort_by(|a, b| {
        b.blocking()
            .cmp(&a.blocking())
            .then(a.severity.cmp(&b.severity))
            .then_with(|| a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
            .then(a.column.cmp(&b.column))
    });
    let rest = found.split_off(found.len().min(reading.cap));
    if !rest.is_empty() || parsed.dropped > 0 {
        found.push(summary(reading.check, &rest, parsed.dropped));
    }
    found
}

fn finding(reading: &Reading, files: &mut Files, message: Message) -> Finding {
    let check = reading.check;
    let severity = match message.level {
        Level::Error => check.severity,
        // The lesser of the two: a warning never outweighs the command.
        Level::Warning => check.severity.max(Severity::Minor),
        Level::Note => Severity::Nit,
    };
    let located = message.places.iter().find_map(|p| files.locate(p));
    let mut text = message.text;
    if located.is_none() {
        if let Some(first) = message.places.first() {
            text.push_str(&format!(
                "\n(reported at {}, which is not a file of the checkout)",
                clean(&first.file, 1, 300)
            ));
        }
    }
    if let Some(suggestion) = message.suggestion.filter(|s| !s.trim().is_empty()) {
        text.push_str("\nsuggested fix: ");
        text.push_str(&suggestion);
    }
    let (file, line, column) = match located {
        Some((file, line, column)) => (Some(file), line, column),
        None => (None, None, None),
    };
    let preexisting = file
        .as_deref()
        .is_some_and(|f| !reading.changed.touches(f, line));
    let advisory = match check.tool.blocking {
        Blocking::Never => true,
        Blocking::Changed => preexisting,
        Blocking::All => false,
    };
    Finding {
        check: check.name.clone(),
        category: check.tool.category,
        severity,
        file,
        line,
        column,
        rule: message
            .rule
            .map(|r| redact(&clean(&r, 1, MAX_RULE_CHARS)))
            .filter(|r| !r.is_empty()),
        message: redact(&clean(&text, MAX_TEXT_LINES, MAX_TEXT_BYTES)),
        preexisting,
        advisory,
    }
}

/// One finding for what was not listed: its weight is the worst of them,
/// and it blocks when any of them would.
fn summary(check: &CommandCheck, rest: &[Finding], dropped: usize) -> Finding {
    let blocking = rest.iter().filter(|f| f.blocking()).count();
    let worst = rest
        .iter()
        .filter(|f| f.blocking() || blocking == 0)
        .map(|f| f.severity)
        .min()
        .unwrap_or(Severity::Nit);
    let mut message = format!(
        "{} more finding{} of `{}` {} not listed here",
        rest.len() + dropped,
        if rest.len() + dropped == 1 { "" } else { "s" },
        check.name,
        if rest.len() + dropped == 1 {
            "is"
        } else {
            "are"
        },
    );
    if blocking > 0 {
        message.push_str(&format!(" ({blocking} of them blocking)"));
    }
    if dropped > 0 {
        message.push_str(&format!(
            "; {dropped} of them were not even read (the output holds more messages than speed reads)"
        ));
    }
    message.push_str(&format!("; run `{}` to see them all.", check.run.join(" ")));
    Finding {
        check: check.name.clone(),
        category: check.tool.category,
        severity: worst,
        message,
        advisory: blocking == 0,
        ..Finding::default()
    }
}

/// The checkout's files, as the messages name them.
struct Files {
    /// The checkout as the command saw it, and with its links resolved.
    dir: PathBuf,
    real: Option<PathBuf>,
    /// Line counts by relative path (None: too large to count).
    counts: HashMap<String, Option<u64>>,
}

impl Files {
    fn new(dir: &Path) -> Files {
        Files {
            dir: dir.to_path_buf(),
            real: dir.canonicalize().ok(),
            counts: HashMap::new(),
        }
    }

    /// The place as a file of the checkout with the line it has, or None.
    fn locate(&mut self, place: &Place) -> Option<(String, Option<u32>, Option<u32>)> {
        let file = self.relative(&place.file)?;
        let count = self.count(&file)?;
        let line = place
            .line
            .filter(|l| *l >= 1 && count.is_none_or(|c| *l <= c + 1))
            .and_then(|l| u32::try_from(l).ok());
        let column = place
            .column
            .filter(|c| line.is_some() && (1..=MAX_COLUMN).contains(c))
            .and_then(|c| u32::try_from(c).ok());
        Some((file, line, column))
    }

    /// A path the tool printed, as a path relative to the checkout, when it
    /// names a regular file inside it.
    fn relative(&self, raw: &str) -> Option<String> {
        let raw = raw.trim();
        if raw.is_empty() || raw.len() > 4096 || raw.chars().any(char::is_control) {
            return None;
        }
        let path = Path::new(raw);
        let inside: &Path = if path.is_absolute() {
            // Only under the checkout (as the command saw it, or with its
            // links resolved): anything else is never touched.
            path.strip_prefix(&self.dir)
                .ok()
                .or_else(|| path.strip_prefix(self.real.as_ref()?).ok())?
        } else {
            path
        };
        let mut parts = Vec::new();
        for component in inside.components() {
            match component {
                Component::Normal(part) => parts.push(part.to_str()?),
                Component::CurDir => {}
                _ => return None,
            }
        }
        if parts.is_empty() {
            return None;
        }
        let relative = parts.join("/");
        let real = self.real.as_ref()?;
        let target = real.join(&relative).canonicalize().ok()?;
        (target.starts_with(real) && target.is_file()).then_some(relative)
    }

    /// The lines of a file of the checkout; Some(None) when it is too
    /// large to count, None when it cannot be read.
    fn count(&mut self, relative: &str) -> Option<Option<u64>> {
        if let Some(count) = self.counts.get(relative) {
            return Some(*count);
        }
        let path = self.real.as_ref()?.join(relative);
        let file = std::fs::File::open(&path).ok()?;
        let size = file.metadata().ok()?.len();
        let count = if size > MAX_COUNTED_BYTES {
            None
        } else {
            let mut bytes = Vec::with_capacity(size as usize);
            file.take(MAX_COUNTED_BYTES).read_to_end(&mut bytes).ok()?;
            let newlines = memchr::memchr_iter(b'\n', &bytes).count() as u64;
            let unterminated = u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"));
            Some(newlines + unterminated)
        };
        self.counts.insert(relative.to_string(), count);
        Some(count)
    }
}

/// Text from a tool made safe to show: escapes and control characters
/// gone (tabs become spaces), at most `max_lines` lines and about
/// `max_bytes` bytes.
pub fn clean(text: &str, max_lines: usize, max_bytes: usize) -> String {
    let text = super::parsers::strip_ansi(text);
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        if n == max_lines {
            out.push_str("\n…");
            break;
        }
        if n > 0 {
            out.push('\n');
        }
        for c in line.chars() {
            if out.len() >= max_bytes {
                out.push('…');
                return out;
            }
            match c {
                '\t' => out.push(' '),
                c if c.is_control() => {}
                // Bidirectional overrides reorder what a reader sees.
                '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
                c => out.push(c),
            }
        }
    }
    out.trim_end().to_string()
}

/// Secrets a test run printed stay out of every report.
fn redact(text: &str) -> String {
    let context = crate::secrets::Context {
        kind: crate::secrets::Kind::Prose,
        test: false,
    };
    crate::secrets::redact(text, context).text
}

/// A message's words without what moves between runs of a tool (line
/// numbers and counts quoted in it, spacing, case): findings are matched
/// by it across commits.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(512));
    let mut digits = false;
    let mut space = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !digits {
                out.push('#');
            }
            digits = true;
            continue;
        }
        digits = false;
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.extend(c.to_lowercase());
        if out.len() >= 500 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::parsers::Parser;
    use crate::checks::{Category, Tool};
    use std::time::Duration;

    fn check(blocking: Blocking) -> CommandCheck {
        CommandCheck {
            name: "lint".to_string(),
            run: vec!["lint".to_string()],
            severity: Severity::Major,
            timeout: Duration::from_secs(5),
            tool: Tool {
                parser: Some(Parser::Ruff),
                category: Some(Category::Lint),
                blocking,
                ..Tool::default()
            },
        }
    }

    fn message(file: &str, line: u64, level: Level) -> Message {
        Message {
            level,
            places: vec![Place {
                file: file.to_string(),
                line: Some(line),
                column: Some(3),
            }],
            rule: Some("R1".to_string()),
            text: "bad \u{1b}[31mthing\u{7}".to_string(),
            suggestion: Some("do better".to_string()),
        }
    }

    fn checkout() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.py"), "one\ntwo\nthree\nfour").unwrap();
        std::fs::write(dir.path().join("outside.txt"), "x\n").unwrap();
        dir
    }

    fn changed(lines: &[u32]) -> Changed {
        let mut c = Changed::default();
        c.lines
            .insert("src/a.py".to_string(), lines.iter().copied().collect());
        c
    }

    #[test]
    fn places_are_files_of_the_checkout_and_lines_they_have() {
        let dir = checkout();
        let mut files = Files::new(dir.path());
        let place = |file: &str, line| Place {
            file: file.to_string(),
            line: Some(line),
            column: Some(7),
        };
        assert_eq!(
            files.locate(&place("./src/a.py", 2)),
            Some(("src/a.py".to_string(), Some(2), Some(7)))
        );
        let absolute = dir.path().join("src/a.py");
        assert_eq!(
            files.locate(&place(absolute.to_str().unwrap(), 4)),
            Some(("src/a.py".to_string(), Some(4), Some(7)))
        );
        // Past the end (one past is where "no newline at end" points).
        assert_eq!(files.locate(&place("src/a.py", 6)).unwrap().1, None);
        assert_eq!(files.locate(&place("src/a.py", 0)).unwrap().1, None);
        assert_eq!(files.locate(&place("src/a.py", u64::MAX)).unwrap().1, None);
        for outside in [
            "../etc/passwd",
            "/etc/passwd",
            "src/../../x",
            "src",
            "",
            "src/a.py\0",
        ] {
            assert_eq!(files.locate(&place(outside, 1)), None, "{outside:?}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/hostname", dir.path().join("src/link")).unwrap();
            assert_eq!(files.locate(&place("src/link", 1)), None);
            std::os::unix::fs::symlink("/etc", dir.path().join("etc")).unwrap();
            assert_eq!(files.locate(&place("etc/hostname", 1)), None);
        }
    }

    #[test]
    fn a_finding_off_the_change_is_preexisting_and_does_not_block() {
        let dir = checkout();
        let reading = Reading {
            check: &check(Blocking::Changed),
            dir: dir.path(),
            changed: &changed(&[2]),
            cap: MAX_FINDINGS,
        };
        let parsed = Parsed {
            messages: vec![
                message("src/a.py", 2, Level::Error),
                message("src/a.py", 3, Level::Error),
                message("src/a.py", 3, Level::Warning),
                message("/elsewhere/b.py", 1, Level::Error),
            ],
            dropped: 0,
        };
        let found = findings(&reading, parsed);
        let summary: Vec<(Option<u32>, Severity, bool, bool)> = found
            .iter()
            .map(|f| (f.line, f.severity, f.preexisting, f.blocking()))
            .collect();
        assert_eq!(
            summary,
            [
                // Unplaced: nobody can say it predates the change.
                (None, Severity::Major, false, true),
                (Some(2), Severity::Major, false, true),
                (Some(3), Severity::Major, true, false),
                (Some(3), Severity::Minor, true, false),
            ]
        );
        let first = &found[1];
        assert_eq!(first.message, "bad thing\nsuggested fix: do better");
        assert_eq!(first.rule.as_deref(), Some("R1"));
        assert_eq!(first.category, Some(Category::Lint));
        assert!(
            found[0]
                .message
                .contains("/elsewhere/b.py, which is not a file of the checkout"),
            "{}",
            found[1].message
        );
        // blocking = "all": preexisting still blocks; false: nothing does.
        let all = check(Blocking::All);
        let reading_all = Reading {
            check: &all,
            ..reading
        };
        let parsed = Parsed {
            messages: vec![message("src/a.py", 3, Level::Error)],
            dropped: 0,
        };
        let found = findings(&reading_all, parsed.clone());
        assert!(found[0].preexisting && found[0].blocking());
        let never = check(Blocking::Never);
        let found = findings(
            &Reading {
                check: &never,
                dir: dir.path(),
                changed: &changed(&[3]),
                cap: MAX_FINDINGS,
            },
            parsed,
        );
        assert!(!found[0].preexisting && !found[0].blocking());
    }

    #[test]
    fn findings_are_capped_and_the_rest_counted_with_their_weight() {
        let dir = checkout();
        let reading = Reading {
            check: &check(Blocking::Changed),
            dir: dir.path(),
            changed: &changed(&[1]),
            cap: MAX_FINDINGS,
        };
        let mut messages: Vec<Message> = (0..MAX_FINDINGS + 10)
            .map(|_| message("src/a.py", 3, Level::Warning))
            .collect();
        messages.push(message("src/a.py", 1, Level::Error));
        let found = findings(
            &reading,
            Parsed {
                messages,
                dropped: 7,
            },
        );
        assert_eq!(found.len(), MAX_FINDINGS + 1);
        // The blocking one is kept, first.
        assert!(found[0].blocking());
        let last = found.last().unwrap();
        assert!(
            last.message
                .starts_with("18 more findings of `lint` are not listed"),
            "{}",
            last.message
        );
        assert!(!last.blocking());
    }

    #[test]
    fn text_is_cleaned_and_redacted() {
        let long = "x".repeat(5000);
        assert!(clean(&long, 3, 100).len() < 110);
        assert_eq!(clean("a\tb\r\n\u{202e}c\u{0}", 5, 100), "a b\nc");
        assert_eq!(clean("1\n2\n3\n4", 2, 100), "1\n2\n…");
        let secret = redact("token = \"ghp_abcdefghijklmnopqrstuvwxyz0123456789\"");
        assert!(!secret.contains("ghp_abc"), "{secret}");
    }

    #[test]
    fn normalized_words_ignore_numbers_spacing_and_case() {
        assert_eq!(
            normalize("Unused  variable `x` at line 12"),
            normalize("unused variable `x` at line 7 ")
        );
        assert_ne!(normalize("unused `x`"), normalize("unused `y`"));
    }
}
