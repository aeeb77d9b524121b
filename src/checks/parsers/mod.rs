//! Parsers of what tools print or write: one file per format, each turning
//! bytes into `Message`s (a level, candidate places, the tool's rule, the
//! text, a suggested fix). They trust nothing: the output comes from code
//! on the branch under review. Malformed input is an `Unreadable` with the
//! reason, never a panic; JSON nesting is bounded by serde_json's
//! recursion limit, XML is read without DTDs (so no entity expansion) and
//! with a node limit, and no parser keeps more than `MAX_MESSAGES`.
//!
//! Places are what the tool said, unchecked: `messages` decides which are
//! files of the checkout and which lines exist.

pub mod cargo;
pub mod eslint;
pub mod junit;
pub mod mypy;
pub mod pattern;
pub mod ruff;
pub mod sarif;
pub mod tsc;

use std::collections::HashSet;

use serde::Serialize;

pub use pattern::Pattern;

/// Messages kept per parse; the rest are counted.
pub const MAX_MESSAGES: usize = 10_000;

/// Candidate places kept per message.
const MAX_PLACES: usize = 8;

/// How a command's output is read.
#[derive(Debug, Clone, PartialEq)]
pub enum Parser {
    /// `cargo … --message-format=json`: rustc and clippy diagnostics.
    Cargo,
    /// Any JUnit XML (pytest, cargo-nextest, jest, …).
    Junit,
    /// `ruff check --output-format=json` (or `json-lines`).
    Ruff,
    /// mypy's `file:line[:col]: error: … [code]` lines (or `--output json`).
    Mypy,
    /// `eslint -f json`.
    Eslint,
    /// tsc's `file(line,col): error TSnnnn: …` (or `--pretty`).
    Tsc,
    /// SARIF 2.1.0 (Semgrep, CodeQL, Bandit, clippy-sarif, …).
    Sarif,
    /// A pattern with named groups file, line, col, severity, message, rule.
    Regex(Pattern),
}

impl Parser {
    pub const NAMES: [&'static str; 8] = [
        "cargo", "junit", "ruff", "mypy", "eslint", "tsc", "sarif", "regex",
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Parser::Cargo => "cargo",
            Parser::Junit => "junit",
            Parser::Ruff => "ruff",
            Parser::Mypy => "mypy",
            Parser::Eslint => "eslint",
            Parser::Tsc => "tsc",
            Parser::Sarif => "sarif",
            Parser::Regex(_) => "regex",
        }
    }

    /// A parser by its name; `regex` needs its pattern.
    pub fn named(name: &str, pattern: Option<Pattern>) -> Option<Parser> {
        Some(match name {
            "cargo" => Parser::Cargo,
            "junit" => Parser::Junit,
            "ruff" => Parser::Ruff,
            "mypy" => Parser::Mypy,
            "eslint" => Parser::Eslint,
            "tsc" => Parser::Tsc,
            "sarif" => Parser::Sarif,
            "regex" => Parser::Regex(pattern?),
            _ => return None,
        })
    }

    /// Whether the format is one document (JSON, XML), which a tool writes
    /// on stdout alone, or lines, which may come on either stream.
    fn reads_stderr(&self) -> bool {
        matches!(self, Parser::Mypy | Parser::Tsc | Parser::Regex(_))
    }

    /// Read `input`: the report file when the command names one, else its
    /// stdout (and stderr, for line formats).
    pub fn parse(&self, input: &Input) -> Result<Parsed, Unreadable> {
        let joined;
        let bytes: &[u8] = match input.report {
            Some(report) => report,
            None if self.reads_stderr() && !input.stderr.is_empty() => {
                let mut both = input.stdout.to_vec();
                if !both.is_empty() && !both.ends_with(b"\n") {
                    both.push(b'\n');
                }
                both.extend_from_slice(input.stderr);
                joined = both;
                &joined
            }
            None => input.stdout,
        };
        let text = String::from_utf8_lossy(bytes);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        match self {
            Parser::Cargo => cargo::parse(text),
            Parser::Junit => junit::parse(text),
            Parser::Ruff => ruff::parse(text),
            Parser::Mypy => mypy::parse(text),
            Parser::Eslint => eslint::parse(text),
            Parser::Tsc => tsc::parse(text),
            Parser::Sarif => sarif::parse(text),
            Parser::Regex(pattern) => pattern.parse(text),
        }
    }
}

impl Serialize for Parser {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// What a parser reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Input<'a> {
    pub stdout: &'a [u8],
    pub stderr: &'a [u8],
    /// The report file's bytes, when the command names one.
    pub report: Option<&'a [u8]>,
}

/// How serious the tool says a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    /// A tool's word for it; anything unknown is an error (a tool that
    /// invents a level is not telling speed its message is harmless).
    pub fn of_word(word: &str) -> Level {
        match word.trim().to_ascii_lowercase().as_str() {
            "warning" | "warn" | "w" | "medium" | "moderate" => Level::Warning,
            "note" | "info" | "information" | "notice" | "hint" | "help" | "i" | "low" | "none"
            | "suggestion" | "convention" | "refactor" => Level::Note,
            _ => Level::Error,
        }
    }
}

/// Where a tool says a message is: unchecked.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Place {
    pub file: String,
    pub line: Option<u64>,
    pub column: Option<u64>,
}

/// One message of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub level: Level,
    /// Where it is, best first: the first that names a file of the
    /// checkout is used (a panic's frames, a macro's call sites).
    pub places: Vec<Place>,
    pub rule: Option<String>,
    pub text: String,
    /// The tool's suggested fix, when it gives one.
    pub suggestion: Option<String>,
}

/// What a parser read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub messages: Vec<Message>,
    /// Messages past `MAX_MESSAGES`, counted, not kept.
    pub dropped: usize,
}

/// Why a parser could not read its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable(pub String);

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Gathers messages: drops exact repeats (cargo reports a lint once per
/// target that compiles the file) and counts what passes the cap.
#[derive(Default)]
struct Collect {
    parsed: Parsed,
    seen: HashSet<(Level, Option<Place>, Option<String>, String)>,
}

impl Collect {
    fn push(&mut self, mut message: Message) {
        message.places.truncate(MAX_PLACES);
        let key = (
            message.level,
            message.places.first().cloned(),
            message.rule.clone(),
            message.text.clone(),
        );
        if self.seen.contains(&key) {
            return;
        }
        if self.parsed.messages.len() >= MAX_MESSAGES {
            self.parsed.dropped += 1;
            return;
        }
        self.seen.insert(key);
        self.parsed.messages.push(message);
    }

    /// The last message kept, for continuation lines.
    fn last(&mut self) -> Option<&mut Message> {
        self.parsed.messages.last_mut()
    }

    fn done(self) -> Parsed {
        self.parsed
    }
}

/// A JSON number that can be a line or a column: a non-negative integer.
fn number(value: &serde_json::Value) -> Option<u64> {
    value.as_u64()
}

/// A JSON string that is not blank.
fn string(value: &serde_json::Value) -> Option<String> {
    value
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A place from its parts, when the file is not blank.
fn place(file: Option<String>, line: Option<u64>, column: Option<u64>) -> Option<Place> {
    let file = file?.trim().to_string();
    (!file.is_empty()).then_some(Place { file, line, column })
}

/// `text` without ANSI escape sequences (colours a tool prints even into a
/// pipe).
pub fn strip_ansi(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            // CSI: parameters and intermediates, then one final byte.
            Some('[') => {
                chars.next();
                for c in chars.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&c) {
                        break;
                    }
                }
            }
            // OSC (hyperlinks): up to BEL or ESC \.
            Some(']') => {
                chars.next();
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' {
                        chars.next();
                        break;
                    }
                }
            }
            Some(_) => {
                chars.next();
            }
            None => {}
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The first `limit` characters of `text`, for reasons quoting input.
fn clip(text: &str, limit: usize) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(limit + 1)
        .collect();
    if one_line.chars().count() > limit {
        format!("{}…", one_line.chars().take(limit).collect::<String>())
    } else {
        one_line
    }
}

/// Places named in free text (`src/a.rs:34:9`, `tests/test_x.py:12:`), in
/// order of appearance: where a test failure or a panic points.
fn places_in(text: &str) -> Vec<Place> {
    use std::sync::OnceLock;
    static PLACE: OnceLock<::regex::Regex> = OnceLock::new();
    let re = PLACE.get_or_init(|| {
        ::regex::Regex::new(
            r"([A-Za-z0-9_.][A-Za-z0-9_./\\-]*\.[A-Za-z0-9]{1,10}):([0-9]{1,9})(?::([0-9]{1,6}))?",
        )
        .expect("a valid pattern")
    });
    let mut out: Vec<Place> = Vec::new();
    for caps in re.captures_iter(text).take(64) {
        let place = Place {
            file: caps[1].to_string(),
            line: caps[2].parse().ok(),
            column: caps.get(3).and_then(|c| c.as_str().parse().ok()),
        };
        if !out.contains(&place) {
            out.push(place);
        }
        if out.len() >= MAX_PLACES {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_sequences_are_removed() {
        assert_eq!(
            strip_ansi("\u{1b}[96msrc/a.ts\u{1b}[0m:\u{1b}[93m7\u{1b}[0m"),
            "src/a.ts:7"
        );
        assert_eq!(
            strip_ansi("\u{1b}]8;;http://x\u{7}link\u{1b}]8;;\u{7}"),
            "link"
        );
        assert_eq!(strip_ansi("plain"), "plain");
        assert_eq!(strip_ansi("cut \u{1b}["), "cut ");
    }

    #[test]
    fn places_in_text_come_in_order_without_repeats() {
        let found = places_in(
            "thread 't' panicked at src/lib.rs:34:9:\n  at ./src/lib.rs:34:9\ntests/test_calc.py:9: AssertionError",
        );
        let files: Vec<(&str, Option<u64>, Option<u64>)> = found
            .iter()
            .map(|p| (p.file.as_str(), p.line, p.column))
            .collect();
        assert_eq!(
            files,
            [
                ("src/lib.rs", Some(34), Some(9)),
                ("./src/lib.rs", Some(34), Some(9)),
                ("tests/test_calc.py", Some(9), None)
            ]
        );
    }

    #[test]
    fn the_collector_drops_repeats_and_counts_past_the_cap() {
        let mut c = Collect::default();
        let m = |i: usize| Message {
            level: Level::Error,
            places: Vec::new(),
            rule: None,
            text: format!("m{i}"),
            suggestion: None,
        };
        c.push(m(0));
        c.push(m(0));
        for i in 1..MAX_MESSAGES + 5 {
            c.push(m(i));
        }
        let parsed = c.done();
        assert_eq!(parsed.messages.len(), MAX_MESSAGES);
        assert_eq!(parsed.dropped, 5);
    }

    #[test]
    fn unknown_levels_are_errors() {
        assert_eq!(Level::of_word("Warning"), Level::Warning);
        assert_eq!(Level::of_word("note"), Level::Note);
        assert_eq!(Level::of_word("catastrophe"), Level::Error);
    }
}
