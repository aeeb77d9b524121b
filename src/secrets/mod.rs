//! Secrets: finding credentials in text and replacing them with a
//! placeholder naming the rule (`[REDACTED:aws-access-key]`), so that a
//! secret in a diff, a spec or a task file never leaves the machine and is
//! never written.
//!
//! Text is scanned as lines (a private key block spans several). Each rule
//! is a provider's token format (`rules`), a private key block (`pem`), or
//! a secret-looking value assigned to a secret-looking name (`assign`).
//! Precision matters as much as recall: a placeholder, a hash, an
//! identifier or a test fixture is not a secret, and every rule is tested
//! on true and false samples. Nothing here prints, and nothing returned
//! holds the secret's text: only rule, line and byte span.

mod assign;
mod diff;
pub mod net;
mod pem;
mod rules;
mod value;

use std::sync::OnceLock;

use serde::Serialize;

pub use diff::{DiffSecret, redact_diff};

/// What kind of text is scanned: it decides which assignment forms count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Source code: only quoted values count (`token = "…"`); an unquoted
    /// right-hand side is an expression.
    Code,
    /// Configuration (YAML, TOML, INI, properties): `password: value` counts.
    Config,
    /// A dotenv file: `NAME=value` lines, where any real value counts.
    Env,
    /// Markdown, specs, task fields, command output: quoted values only.
    Prose,
}

/// Where scanned text comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    pub kind: Kind,
    /// Test code or documentation: a password or token assigned there is
    /// a fixture or an example, so the assignment rule stands down;
    /// provider formats and keys still count.
    pub test: bool,
}

impl Context {
    pub const PROSE: Context = Context {
        kind: Kind::Prose,
        test: false,
    };

    /// The context of a repository file; `test` says whether it is test
    /// code (the caller knows the project's layout).
    pub fn file(path: &str, test: bool) -> Context {
        Context {
            kind: Kind::of_path(path),
            test,
        }
    }
}

impl Kind {
    /// The kind of a repository path, by its name.
    pub fn of_path(path: &str) -> Kind {
        let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
        if name == ".env"
            || name.starts_with(".env.")
            || name.ends_with(".env")
            || name == ".envrc"
            || name == ".netrc"
            || name == ".pgpass"
        {
            return Kind::Env;
        }
        let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        match ext {
            "yaml" | "yml" | "toml" | "ini" | "cfg" | "conf" | "properties" | "tfvars" | "hcl"
            | "npmrc" | "pypirc" | "gitconfig" | "cnf" => Kind::Config,
            "md" | "markdown" | "rst" | "txt" | "adoc" => Kind::Prose,
            _ if name == "dockerfile" => Kind::Config,
            _ => Kind::Code,
        }
    }

    fn unquoted_values(self) -> bool {
        matches!(self, Kind::Config | Kind::Env)
    }
}

/// A span of one line to replace: bytes `start..end` of line `line`
/// (0-based index into the lines scanned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub line: usize,
    pub start: usize,
    pub end: usize,
    pub rule: &'static str,
}

/// One secret found: its rule and the line it starts on (0-based index into
/// the lines scanned). A private key block is one secret over many spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub line: usize,
    pub rule: &'static str,
}

/// The result of scanning lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// Sorted by line then start, never overlapping.
    pub spans: Vec<Span>,
    pub found: Vec<Found>,
    /// In test code: the values an assignment outside tests would have
    /// counted, judged fixtures here (the safety net leaves them alone).
    pub fixtures: Vec<String>,
}

/// A secret replaced in a text, as the report's `redactions` lists it:
/// rule, the file (or field) it was in, and its line (1-based).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redaction {
    pub rule: String,
    pub file: String,
    pub line: u32,
}

/// The placeholder that replaces a secret.
pub fn placeholder(rule: &str) -> String {
    format!("[REDACTED:{rule}]")
}

/// Every rule id, for documentation and tests.
pub fn rule_ids() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = rules::table().iter().map(|r| r.id).collect();
    ids.push(pem::RULE);
    ids.push(assign::RULE);
    ids.push(rules::URL_RULE);
    ids
}

/// The compiled rules, built once per process: compiling some thirty
/// regular expressions costs milliseconds.
struct Scanner {
    tokens: rules::Tokens,
    assign: assign::Assign,
}

fn scanner() -> &'static Scanner {
    static SCANNER: OnceLock<Scanner> = OnceLock::new();
    SCANNER.get_or_init(|| Scanner {
        tokens: rules::Tokens::new(),
        assign: assign::Assign::new(),
    })
}

/// Find the secrets in `lines`.
pub fn scan(lines: &[&str], context: Context) -> Scan {
    let scanner = scanner();
    let mut spans: Vec<Span> = Vec::new();
    let mut found: Vec<Found> = Vec::new();
    let mut fixtures: Vec<String> = Vec::new();
    for block in pem::blocks(lines) {
        found.push(Found {
            line: block.first().map_or(0, |s| s.line),
            rule: pem::RULE,
        });
        spans.extend(block);
    }
    for (i, line) in lines.iter().enumerate() {
        // Provider formats first: they are the most certain, and an
        // assignment or URL overlapping one adds nothing.
        let mut here: Vec<Span> = spans.iter().filter(|s| s.line == i).copied().collect();
        let before = here.len();
        scanner.tokens.scan(line, i, &mut here);
        scanner.assign.scan(line, i, context, &mut here);
        for span in &here[before..] {
            found.push(Found {
                line: i,
                rule: span.rule,
            });
        }
        if context.test {
            let judged = here.len();
            let outside = Context {
                test: false,
                ..context
            };
            scanner.assign.scan(line, i, outside, &mut here);
            fixtures.extend(
                here.drain(judged..)
                    .filter_map(|s| line.get(s.start..s.end).map(str::to_string)),
            );
        }
        spans.retain(|s| s.line != i);
        spans.extend(here);
    }
    spans.sort_by_key(|s| (s.line, s.start));
    found.sort_by_key(|f| f.line);
    Scan {
        spans,
        found,
        fixtures,
    }
}

/// Whether `span` overlaps one already kept.
pub(crate) fn overlaps(kept: &[Span], start: usize, end: usize) -> bool {
    kept.iter().any(|s| s.start < end && start < s.end)
}

/// Replace every span of `scan` in `lines`.
pub fn apply(lines: &mut [String], scan: &Scan) {
    // Right to left within a line, so earlier offsets stay valid.
    for span in scan.spans.iter().rev() {
        if let Some(line) = lines.get_mut(span.line) {
            let end = span.end.min(line.len());
            if span.start < end && line.is_char_boundary(span.start) && line.is_char_boundary(end) {
                line.replace_range(span.start..end, &placeholder(span.rule));
            }
        }
    }
}

/// A text with its secrets replaced, and where they were (1-based lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    pub text: String,
    pub found: Vec<(u32, &'static str)>,
}

/// Redact a whole text, keeping its line endings.
pub fn redact(text: &str, context: Context) -> Redacted {
    let lines: Vec<&str> = text.split('\n').collect();
    let result = scan(&lines, context);
    if result.spans.is_empty() {
        return Redacted {
            text: text.to_string(),
            found: Vec::new(),
        };
    }
    let mut owned: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    apply(&mut owned, &result);
    Redacted {
        text: owned.join("\n"),
        found: result
            .found
            .iter()
            .map(|f| (f.line as u32 + 1, f.rule))
            .collect(),
    }
}

#[cfg(test)]
pub(crate) const CODE: Context = Context {
    kind: Kind::Code,
    test: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_in_test_code_are_fixtures_but_tokens_are_not() {
        let test = Context::file("tests/login.py", true);
        let text =
            "password = \"Zk3Xq9Lm2V\"\ntoken = \"ghp_R8fNq2Lx7TbV4mKc9WzPd3HsYe6Ju1Ao5GiQ\"";
        assert_eq!(redact(text, test).found, vec![(2, "github-token")]);
        assert_eq!(redact(text, CODE).found.len(), 2);
    }

    #[test]
    fn a_text_keeps_everything_but_its_secrets() {
        let text = "line one\r\nkey = \"AKIAQYLPMN5HHHFPZAM2\"\nlast\n";
        let out = redact(text, CODE);
        assert_eq!(
            out.text,
            "line one\r\nkey = \"[REDACTED:aws-access-key]\"\nlast\n"
        );
        assert_eq!(out.found, vec![(2, "aws-access-key")]);
    }

    #[test]
    fn overlapping_rules_redact_once_with_the_most_specific() {
        let text = "GITHUB_TOKEN = \"ghp_R8fNq2Lx7TbV4mKc9WzPd3HsYe6Ju1Ao5GiQ\"";
        let out = redact(text, CODE);
        assert_eq!(out.text, "GITHUB_TOKEN = \"[REDACTED:github-token]\"");
        assert_eq!(out.found, vec![(1, "github-token")]);
    }

    #[test]
    fn contexts_follow_file_names() {
        assert_eq!(Kind::of_path(".env"), Kind::Env);
        assert_eq!(Kind::of_path("deploy/.env.production"), Kind::Env);
        assert_eq!(Kind::of_path("config/app.yaml"), Kind::Config);
        assert_eq!(Kind::of_path("src/main.rs"), Kind::Code);
        assert_eq!(Kind::of_path("specs/product/x.md"), Kind::Prose);
    }

    #[test]
    fn every_rule_has_a_distinct_kebab_case_id() {
        let ids = rule_ids();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
        for id in ids {
            assert!(
                id.chars()
                    .all(|c| c.is_ascii_lowercase() || c == '-' || c.is_ascii_digit()),
                "{id}"
            );
        }
    }

    #[test]
    fn multibyte_text_around_a_secret_is_kept() {
        let text = "é = «token» \"sk_live_4eC39HqLyjWDarjtT1zdp7dc\" ünïcode";
        let out = redact(text, CODE);
        assert_eq!(out.text, "é = «token» \"[REDACTED:stripe-key]\" ünïcode");
    }
}
