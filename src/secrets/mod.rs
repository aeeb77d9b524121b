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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
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

/// Compile the rules now (on a thread of the caller's choosing), so that
/// the first scan does not wait for them.
pub fn warm() {
    scanner();
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

    /// One true sample per rule (each rule's own tests hold many more, and
    /// their look-alikes): a rule added without a sample fails here.
    #[test]
    fn every_rule_finds_a_true_sample() {
        let samples = [
            ("aws-access-key", "id = 'AKIAQYLPMN5HHHFPZAM2'"),
            (
                "aws-secret-key",
                "aws_secret_access_key = sW7pLq2vXk9RmT4nB8cYd1ZfHj3Ga6Ue5Io0Kp/+",
            ),
            (
                "gcp-api-key",
                "k = \"AIzau8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8\"",
            ),
            (
                "gcp-service-account",
                r#""private_key_id": "4f1b2c3d5e6f708192a3b4c5d6e7f8091a2b3c4d","#,
            ),
            ("github-token", "ghp_R8fNq2Lx7TbV4mKc9WzPd3HsYe6Ju1Ao5GiQ"),
            ("gitlab-token", "glpat-Zk3Xq9Lm2Vn8Bc4Wd7Ry"),
            (
                "slack-token",
                "xoxb-1234567890123-1234567890123-Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1a",
            ),
            (
                "slack-webhook",
                "https://hooks.slack.com/services/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",
            ),
            ("stripe-key", "rk_test_51HqZk3Xq9Lm2Vn8Bc4Wd7Ry5H"),
            (
                "openai-api-key",
                "sk-proj-Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT0uE2iO9pLkMj8Nh7Bg6Vf5Cd4Xs3Za2Qw1E",
            ),
            (
                "anthropic-api-key",
                "sk-ant-api03-Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT0uE2iO9pLkMj8Nh7Bg6Vf5Cd4Xs3Za2Qw1EZk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT0uE2iO9pLk-AA",
            ),
            ("huggingface-token", "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"),
            ("npm-token", "npm_Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT0uE2iO9p"),
            (
                "pypi-token",
                "pypi-AgEIcHlwaS5vcmcCJDk3Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT0uE2iO9pLkMj8Nh7Bg6",
            ),
            (
                "sendgrid-key",
                "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",
            ),
            ("google-oauth-secret", "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"),
            (
                "azure-storage-key",
                "AccountName=a;AccountKey=DNxril3RavGD5MfvJ7NScUykT8C8UBkkpdhiG37LeXSyYV4g6snRoUYA4fXr6nzrvZcmT4a4Ad5y2FibpBV62h==;",
            ),
            (
                "digitalocean-token",
                "dop_v1_4f1b2c3d5e6f708192a3b4c5d6e7f8091a2b3c4d4f1b2c3d5e6f708192a3b4c5",
            ),
            ("shopify-token", "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"),
            ("databricks-token", "dapi4f1b2c3d5e6f708192a3b4c5d6e7f809"),
            (
                "age-secret-key",
                "AGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE6M",
            ),
            (
                "jwt",
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MjQyIiwibmFtZSI6IkFkYSJ9.Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT0uE2",
            ),
            (
                "authorization-header",
                r#"h = {"Authorization": "Bearer Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT"}"#,
            ),
            (
                "private-key",
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----",
            ),
            ("secret-assignment", "api_token = \"Zk3Xq9Lm2Vn8Bc4W\""),
            (
                "url-credentials",
                "postgres://app:Zk3Xq9Lm2V@db.internal:5432/app",
            ),
        ];
        let mut ids: Vec<&str> = samples.iter().map(|s| s.0).collect();
        ids.sort_unstable();
        let mut known = rule_ids();
        known.sort_unstable();
        assert_eq!(ids, known, "every rule needs a sample here");
        for (rule, text) in samples {
            let lines: Vec<&str> = text.lines().collect();
            let found: Vec<&str> = scan(&lines, CODE).found.iter().map(|f| f.rule).collect();
            assert_eq!(found, vec![rule], "{text}");
        }
    }

    /// What lockfiles, checksums and encoded test data hold is not a secret.
    #[test]
    fn lockfiles_hashes_and_encoded_data_are_not_secrets() {
        for (path, text) in [
            (
                "package-lock.json",
                r#"      "integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg==","#,
            ),
            (
                "yarn.lock",
                "  integrity sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg==",
            ),
            (
                "Cargo.lock",
                "checksum = \"3e1d3a9eaae13a7f5c9b8c6c0bcf4b7f0e9a7c4b1e2d3f4a5b6c7d8e9f0a1b2c\"",
            ),
            (
                "poetry.lock",
                "    {file = \"requests-2.32.3-py3-none-any.whl\", hash = \"sha256:70761cfe03c773ceb22aa2f671b4757976145175cdfca038c02654d061d6dcc6\"},",
            ),
            (
                "go.sum",
                "golang.org/x/text v0.3.7 h1:olpwvP2KacW1ZWvsR7uQhoyTYvKAupfQrRGBFM352Gk=",
            ),
            (
                "src/digest.rs",
                "const EMPTY_SHA256: &str = \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\";",
            ),
            (
                "tests/data.py",
                "PAYLOAD = \"SGVsbG8sIFdvcmxkISBUaGlzIGlzIGJhc2U2NCB0ZXN0IGRhdGEu\"",
            ),
            (
                "src/app.py",
                "commit = \"9fceb02d0ae598e95dc970b74767f19372d61af8\"",
            ),
        ] {
            let out = redact(text, Context::file(path, crate::paths::is_test(path)));
            assert!(out.found.is_empty(), "{path}: {text}: {:?}", out.found);
        }
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
