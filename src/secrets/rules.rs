//! Provider token formats and credentials in URLs: each rule is a pattern
//! that few things but the real token match (a fixed prefix, a length, an
//! alphabet), checked further for entropy and placeholders. The formats
//! are the providers' published ones, as secret scanners such as gitleaks
//! and detect-secrets define them.

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

use super::value::{entropy, is_placeholder};
use super::{Span, overlaps};

pub const URL_RULE: &str = "url-credentials";

/// One token rule. The span redacted is the named group `s` when the
/// pattern has one, else the whole match; `v` (default: the span) is what
/// the entropy and placeholder tests read.
pub struct Rule {
    pub id: &'static str,
    /// Lowercase words one of which the line must contain for the pattern
    /// to be tried (a cheap filter: most lines hold none).
    keywords: &'static [&'static str],
    pattern: &'static str,
    min_entropy: f64,
}

pub fn table() -> &'static [Rule] {
    TABLE
}

const TABLE: &[Rule] = &[
    Rule {
        id: "aws-access-key",
        keywords: &["akia", "asia", "abia", "acca"],
        // Access key ids: a type prefix and 16 base-32 characters.
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b",
        min_entropy: 3.0,
    },
    Rule {
        id: "aws-secret-key",
        keywords: &["aws"],
        // A 40-character secret assigned to a name mentioning aws and secret.
        pattern: r#"(?i)aws[\w.-]{0,24}?secret[\w.-]{0,24}["'\]]{0,2}\s*(?::=|=>|=|:)\s*["']?(?-i)(?P<s>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        min_entropy: 4.0,
    },
    Rule {
        id: "gcp-api-key",
        keywords: &["aiza"],
        pattern: r"\bAIza[0-9A-Za-z_-]{35}(?:[^0-9A-Za-z_-]|$)",
        min_entropy: 3.5,
    },
    Rule {
        id: "gcp-service-account",
        keywords: &["private_key_id"],
        // The key id of a service account's JSON key file; its private key
        // is a PEM block, found by the private-key rule.
        pattern: r#""private_key_id"\s*:\s*"(?P<s>[0-9a-f]{40})""#,
        min_entropy: 3.0,
    },
    Rule {
        id: "github-token",
        keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})\b",
        min_entropy: 3.5,
    },
    Rule {
        id: "gitlab-token",
        keywords: &[
            "glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glsoat-", "gloas-",
        ],
        pattern: r"\b(?:glpat|gldt|glrt|glptt|glcbt|glft|glsoat|gloas)-(?P<v>[0-9A-Za-z_-]{20,})(?:\.[0-9a-z]{2}\.[0-9a-z]{9})?",
        min_entropy: 3.0,
    },
    Rule {
        id: "slack-token",
        keywords: &["xox", "xapp-"],
        pattern: r"\b(?:xox[abposr]-(?P<v>[0-9]{8,13}-[0-9A-Za-z-]{8,})|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)",
        min_entropy: 3.0,
    },
    Rule {
        id: "slack-webhook",
        keywords: &["hooks.slack.com"],
        pattern: r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/]{20,})",
        min_entropy: 3.5,
    },
    Rule {
        id: "stripe-key",
        keywords: &["sk_", "rk_", "whsec_"],
        pattern: r"\b(?:(?:sk|rk)_(?:live|test|prod)_(?P<v>[0-9A-Za-z]{16,99})|whsec_[A-Za-z0-9]{32,})\b",
        min_entropy: 3.0,
    },
    Rule {
        id: "openai-api-key",
        keywords: &["t3blbkfj", "sk-proj-", "sk-svcacct-", "sk-admin-"],
        // Keys carry `T3BlbkFJ` ("OpenAI" in base64) between two random
        // halves; project and service-account keys have their own prefix.
        pattern: r"\bsk-(?:(?:proj|svcacct|admin)-)?(?:[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}|(?:proj|svcacct|admin)-[A-Za-z0-9_-]{58,})",
        min_entropy: 3.5,
    },
    Rule {
        id: "anthropic-api-key",
        keywords: &["sk-ant-"],
        pattern: r"\bsk-ant-(?:api\d\d|admin\d\d|oat\d\d|ort\d\d)-(?P<v>[A-Za-z0-9_-]{40,})",
        min_entropy: 3.5,
    },
    Rule {
        id: "huggingface-token",
        keywords: &["hf_"],
        pattern: r"\bhf_[A-Za-z]{34}\b",
        min_entropy: 3.5,
    },
    Rule {
        id: "npm-token",
        keywords: &["npm_"],
        pattern: r"\bnpm_[A-Za-z0-9]{36}\b",
        min_entropy: 3.5,
    },
    Rule {
        id: "pypi-token",
        keywords: &["pypi-ageichlwas5vcmc"],
        pattern: r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
        min_entropy: 3.5,
    },
    Rule {
        id: "sendgrid-key",
        keywords: &["sg."],
        pattern: r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b",
        min_entropy: 3.5,
    },
    Rule {
        id: "google-oauth-secret",
        keywords: &["gocspx-"],
        pattern: r"\bGOCSPX-[A-Za-z0-9_-]{28}\b",
        min_entropy: 3.5,
    },
    Rule {
        id: "azure-storage-key",
        keywords: &["accountkey="],
        pattern: r"AccountKey=(?P<s>[A-Za-z0-9+/]{86}==)",
        min_entropy: 4.0,
    },
    Rule {
        id: "digitalocean-token",
        keywords: &["dop_v1_", "doo_v1_", "dor_v1_"],
        pattern: r"\bdo[opr]_v1_[a-f0-9]{64}\b",
        min_entropy: 3.0,
    },
    Rule {
        id: "shopify-token",
        keywords: &["shpat_", "shpca_", "shppa_", "shpss_"],
        pattern: r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        min_entropy: 3.0,
    },
    Rule {
        id: "databricks-token",
        keywords: &["dapi"],
        pattern: r"\bdapi[a-f0-9]{32}(?:-\d)?\b",
        min_entropy: 3.0,
    },
    Rule {
        id: "age-secret-key",
        keywords: &["age-secret-key-1"],
        pattern: r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        min_entropy: 3.0,
    },
    Rule {
        id: "jwt",
        keywords: &["eyj"],
        // A signed JSON web token: base64url header and payload that both
        // decode to a JSON object (`eyJ` is `{"`), and a signature.
        pattern: r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{20,}",
        min_entropy: 3.5,
    },
    Rule {
        id: "authorization-header",
        keywords: &["bearer", "basic", "authorization"],
        // A bearer or basic credential written into a header literal.
        pattern: r#"(?i)authorization["']?\s*[:=,]\s*["']?(?:bearer|basic|token)\s+(?-i)(?P<s>[A-Za-z0-9._~+/=-]{16,})"#,
        min_entropy: 3.5,
    },
];

/// Credentials in a URL: `scheme://user:password@host`. Only the password
/// is redacted, so the reader still sees which service it is.
/// The user and password lengths are bounded in `url_credentials`: counted
/// repetitions of Unicode classes compile into huge automata.
const URL_PATTERN: &str = r#"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://(?P<u>[^\s:/?#@'"`<>\[\]{}]*):(?P<s>[^\s/?#@'"`<>]+)@(?P<h>[A-Za-z0-9.-]*)"#;
const URL_MAX_USER_CHARS: usize = 64;
const URL_MAX_PASSWORD_CHARS: usize = 128;

/// The token rules with their keyword filter. A rule's expression is
/// compiled the first time one of its keywords occurs: most texts name few
/// providers, and compiling all of them cost a quarter of a small dry run.
pub struct Tokens {
    rules: Vec<OnceLock<Regex>>,
    url: Regex,
    keywords: AhoCorasick,
    /// keyword pattern index -> rule index
    keyword_rule: Vec<usize>,
}

impl Tokens {
    pub fn new() -> Tokens {
        let mut keywords = Vec::new();
        let mut keyword_rule = Vec::new();
        let mut rules = Vec::new();
        for (i, rule) in TABLE.iter().enumerate() {
            rules.push(OnceLock::new());
            for k in rule.keywords {
                keywords.push(*k);
                keyword_rule.push(i);
            }
        }
        let keywords = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&keywords)
            .unwrap_or_else(|e| panic!("secret rule keywords: {e}"));
        Tokens {
            rules,
            url: Regex::new(URL_PATTERN).unwrap_or_else(|e| panic!("url rule: {e}")),
            keywords,
            keyword_rule,
        }
    }

    /// Add the spans of `line` (index `index`) that a rule matches and no
    /// kept span overlaps.
    pub fn scan(&self, line: &str, index: usize, kept: &mut Vec<Span>) {
        let mut wanted = vec![false; TABLE.len()];
        for m in self.keywords.find_overlapping_iter(line) {
            wanted[self.keyword_rule[m.pattern().as_usize()]] = true;
        }
        for (i, slot) in self.rules.iter().enumerate() {
            if !wanted[i] {
                continue;
            }
            let rule = &TABLE[i];
            // The patterns are constants covered by tests.
            let re = slot.get_or_init(|| {
                Regex::new(rule.pattern).unwrap_or_else(|e| panic!("secret rule {}: {e}", rule.id))
            });
            for caps in re.captures_iter(line) {
                let Some(whole) = caps.get(0) else { continue };
                let span = caps.name("s").unwrap_or(whole);
                // A match that ran into its delimiter ends before it.
                let text = span.as_str().trim_end_matches(|c: char| {
                    !(c.is_ascii_alphanumeric() || "_-+/=.~".contains(c))
                });
                let end = span.start() + text.len();
                let value = caps.name("v").map_or(text, |v| v.as_str());
                if entropy(value) < rule.min_entropy || is_placeholder(value) {
                    continue;
                }
                if rule.id == "aws-access-key" && text.ends_with("EXAMPLE") {
                    continue;
                }
                if overlaps(kept, span.start(), end) {
                    continue;
                }
                kept.push(Span {
                    line: index,
                    start: span.start(),
                    end,
                    rule: rule.id,
                });
            }
        }
        if line.contains("://") {
            self.url_credentials(line, index, kept);
        }
    }

    fn url_credentials(&self, line: &str, index: usize, kept: &mut Vec<Span>) {
        for caps in self.url.captures_iter(line) {
            let (Some(user), Some(pass)) = (caps.name("u"), caps.name("s")) else {
                continue;
            };
            if user.as_str().chars().count() > URL_MAX_USER_CHARS
                || pass.as_str().chars().count() > URL_MAX_PASSWORD_CHARS
            {
                continue;
            }
            let host = caps.name("h").map_or("", |h| h.as_str());
            if example_host(host) || !real_password(user.as_str(), pass.as_str()) {
                continue;
            }
            if overlaps(kept, pass.start(), pass.end()) {
                continue;
            }
            kept.push(Span {
                line: index,
                start: pass.start(),
                end: pass.end(),
                rule: URL_RULE,
            });
        }
    }
}

/// Parts of a password that mark it as made up for an example.
const FIXTURE_WORDS: &[&str] = &["secre", "passw", "test", "example", "dummy", "fake"];

/// Documentation hosts (RFC 2606 and 6761): a URL to one is an example.
fn example_host(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    ["example.com", "example.org", "example.net"]
        .iter()
        .any(|h| host == *h || host.ends_with(&format!(".{h}")))
        || [".example", ".test", ".invalid"]
            .iter()
            .any(|t| host.ends_with(t))
}

/// Whether a URL's password looks real: documentation writes `user:pass`,
/// `user:password`, `foo:bar`, templates write `${PASS}` or `{password}`.
fn real_password(user: &str, pass: &str) -> bool {
    const STAND_INS: &[&str] = &[
        "pass",
        "password",
        "passwd",
        "pwd",
        "secret",
        "token",
        "user",
        "username",
        "test",
        "admin",
        "root",
        "guest",
        "foo",
        "bar",
        "baz",
        "changeme",
        "xxx",
        "key",
        "apikey",
        "hunter2",
        "letmein",
        "mysecret",
        "mypassword",
        "pa55word",
        "p4ssw0rd",
        "postgres",
        "mysql",
        "redis",
        "demo",
        "none",
        "null",
        "empty",
    ];
    let lower = pass.to_ascii_lowercase();
    if FIXTURE_WORDS.iter().any(|w| lower.contains(w)) || pass.contains('\\') {
        return false;
    }
    if pass.len() < 6
        || STAND_INS.contains(&lower.as_str())
        || is_placeholder(pass)
        || pass.contains(['{', '}', '(', ')', '*', '%'])
        || lower == user.to_ascii_lowercase()
    {
        return false;
    }
    // An all-lowercase word is a doc example more often than a password;
    // a real one has a digit, a capital or a symbol, or length.
    let c = super::value::classes(pass);
    c.digit + c.upper + c.other > 0 || pass.len() >= 12
}

#[cfg(test)]
mod tests {
    use super::super::{CODE, redact};

    /// Rules compile only when first needed, so compile each one here.
    #[test]
    fn every_rule_compiles() {
        for rule in super::TABLE {
            if let Err(e) = regex::Regex::new(rule.pattern) {
                panic!("secret rule {}: {e}", rule.id);
            }
        }
    }

    /// Each rule against samples it must redact and samples it must not.
    fn check(rule: &str, hits: &[&str], misses: &[&str]) {
        for text in hits {
            let out = redact(text, CODE);
            assert_eq!(
                out.found.iter().map(|f| f.1).collect::<Vec<_>>(),
                vec![rule],
                "{rule} should find one secret in {text:?}; got {out:?}"
            );
            assert!(out.text.contains(&format!("[REDACTED:{rule}]")), "{out:?}");
        }
        for text in misses {
            let out = redact(text, CODE);
            assert!(
                out.found.is_empty(),
                "{rule}: {text:?} is not a secret; got {out:?}"
            );
        }
    }

    #[test]
    fn aws_access_key() {
        check(
            "aws-access-key",
            &[
                "AKIAQYLPMN5HHHFPZAM2",
                "aws_access_key_id = ASIAY34FZKBOKMUTVV7A",
                "\"key\": \"AKIA2OGYBAH6QZS7VJ5D\",",
            ],
            &[
                "AKIAIOSFODNN7EXAMPLE",
                "key = AKIAXXXXXXXXXXXXXXXX",
                "AKIAQYLPMN5HHHFPZAM2X",
                "TODAYINASIAASACKOFRICEFELLOVER",
                "akiaqylpmn5hhhfpzam2",
                "AKIA0000111188889999",
            ],
        );
    }

    #[test]
    fn aws_secret_key() {
        check(
            "aws-secret-key",
            &[
                "aws_secret_access_key = sW7pLq2vXk9RmT4nB8cYd1ZfHj3Ga6Ue5Io0Kp/+",
                "AWS_SECRET_ACCESS_KEY: \"sW7pLq2vXk9RmT4nB8cYd1ZfHj3Ga6Ue5Io0Kp/+\"",
            ],
            &[
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_secret_access_key = os.environ['AWS_SECRET_ACCESS_KEY']",
                "aws_secret = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'",
                // 40 hex characters of a commit id are not base64 enough.
                "aws_secret_sha = 0123456789abcdef0123456789abcdef01234567",
            ],
        );
    }

    #[test]
    fn gcp() {
        check(
            "gcp-api-key",
            &["const KEY: &str = \"AIzau8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8\";"],
            &["AIzaSyD4kQ9", "AIzaXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"],
        );
        check(
            "gcp-service-account",
            &[r#"  "private_key_id": "4f1b2c3d5e6f708192a3b4c5d6e7f8091a2b3c4d","#],
            &[
                r#"  "private_key_id": "<key id>","#,
                r#"  "private_key_id": "0000000000000000000000000000000000000000","#,
            ],
        );
    }

    #[test]
    fn github_and_gitlab() {
        check(
            "github-token",
            &[
                "token: ghp_R8fNq2Lx7TbV4mKc9WzPd3HsYe6Ju1Ao5GiQ",
                "gho_R8fNq2Lx7TbV4mKc9WzPd3HsYe6Ju1Ao5GiQ",
                "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",
            ],
            &[
                "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "ghp_short",
                "let ghp_count = 3;",
                "ghp_YOURTOKENHEREYOURTOKENHEREYOURTOKENH",
            ],
        );
        check(
            "gitlab-token",
            &[
                "GITLAB_TOKEN=glpat-Zk3Xq9Lm2Vn8Bc4Wd7Ry",
                "glrt-t1_Zk3Xq9Lm2Vn8Bc4Wd7Ry5H",
            ],
            &["glpat-xxxxxxxxxxxxxxxxxxxx", "glpat-short"],
        );
    }

    #[test]
    fn slack() {
        check(
            "slack-token",
            &[
                "xoxb-1234567890123-1234567890123-Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1a",
                "SLACK=xoxp-4816273910-5928374610-6039485721-a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6",
                "xapp-1-A0123BCDE4F-1234567890123-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
            ],
            &["xoxb-your-token", "xoxb-XXXXXXXXXX-XXXXXXXXXX", "xoxb-"],
        );
        check(
            "slack-webhook",
            &["https://hooks.slack.com/services/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"],
            &["https://hooks.slack.com/services/XXXXXXXXX/XXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX"],
        );
    }

    #[test]
    fn stripe() {
        check(
            "stripe-key",
            &[
                "Stripe.api_key = 'sk_live_51HqZk3Xq9Lm2Vn8Bc4Wd7Ry5H'",
                "rk_test_51HqZk3Xq9Lm2Vn8Bc4Wd7Ry5H",
                "whsec_Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT0uE2iO",
            ],
            &[
                "pk_live_51HqZk3Xq9Lm2Vn8Bc4Wd7Ry5H",
                "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
                "sk_test_",
                "mask_test_value",
            ],
        );
    }

    #[test]
    fn openai_and_anthropic() {
        check(
            "openai-api-key",
            &[
                "OPENAI_API_KEY=sk-Zk3Xq9Lm2Vn8Bc4Wd7RyT3BlbkFJ5H1aQ6sT0uE2iO9pLk",
                "sk-proj-Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT0uE2iO9pLkMj8Nh7Bg6Vf5Cd4Xs3Za2Qw1E",
            ],
            &[
                "sk-proj-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "sk-...",
                "let task-list = 1;",
                "sk-proj-short",
            ],
        );
        check(
            "anthropic-api-key",
            &[
                "ANTHROPIC_API_KEY=sk-ant-api03-Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT0uE2iO9pLkMj8Nh7Bg6Vf5Cd4Xs3Za2Qw1E-AA",
            ],
            &[
                "sk-ant-api03-...",
                "sk-ant-api03-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            ],
        );
    }

    #[test]
    fn other_providers() {
        check(
            "huggingface-token",
            &["HF_TOKEN=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"],
            &["hf_hub_download", "hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"],
        );
        check(
            "npm-token",
            &["//registry.npmjs.org/:_authToken=npm_Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT0uE2iO9p"],
            &[
                "npm_config_cache",
                "npm_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
            ],
        );
        check(
            "pypi-token",
            &[
                "password = pypi-AgEIcHlwaS5vcmcCJDk3Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT0uE2iO9pLkMj8Nh7Bg6",
            ],
            &["pypi-AgEIcHlwaS5vcmc"],
        );
        check(
            "sendgrid-key",
            &["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"],
            &["SG.attribute.call()"],
        );
        check(
            "google-oauth-secret",
            &["client_secret: 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"],
            &["GOCSPX-xxxxxxxxxxxxxxxxxxxxxxxxxxxx"],
        );
        check(
            "azure-storage-key",
            &[
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=DNxril3RavGD5MfvJ7NScUykT8C8UBkkpdhiG37LeXSyYV4g6snRoUYA4fXr6nzrvZcmT4a4Ad5y2FibpBV62h==;",
            ],
            &["AccountKey=<key>;"],
        );
        check(
            "digitalocean-token",
            &["dop_v1_4f1b2c3d5e6f708192a3b4c5d6e7f8091a2b3c4d4f1b2c3d5e6f708192a3b4c5"],
            &["dop_v1_"],
        );
        check(
            "shopify-token",
            &["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"],
            &["shpat_"],
        );
        check(
            "databricks-token",
            &["DATABRICKS_TOKEN=dapi4f1b2c3d5e6f708192a3b4c5d6e7f809"],
            &["dapi_version", "dapiaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"],
        );
        check(
            "age-secret-key",
            &["AGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE6M"],
            &["AGE-SECRET-KEY-1"],
        );
    }

    #[test]
    fn jwt() {
        check(
            "jwt",
            &[
                "Authorization: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MjQyIiwibmFtZSI6IkFkYSJ9.Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT0uE2",
            ],
            &["eyJhbGciOiJIUzI1NiJ9", "eyJ.eyJ.sig"],
        );
    }

    #[test]
    fn authorization_header() {
        check(
            "authorization-header",
            &[
                r#"headers = {"Authorization": "Bearer Zk3Xq9Lm2Vn8Bc4Wd7Ry5H1aQ6sT"}"#,
                "curl -H 'Authorization: Basic dXNlcjpaazNYcTlMbTJWbjhCYzQ='",
            ],
            &[
                r#"headers = {"Authorization": f"Bearer {token}"}"#,
                r#""Authorization": "Bearer <token>""#,
                "Authorization: Bearer ${TOKEN}",
                "authorization = bearer_token_from_env()",
            ],
        );
    }

    #[test]
    fn url_credentials() {
        check(
            "url-credentials",
            &[
                "DATABASE_URL = \"postgres://app:Zk3Xq9Lm2V@db.internal:5432/app\"",
                "git clone https://deploy:R8fNq2Lx7TbV4mKc@git.internal.io/x.git",
                "redis://:s3cr3t-P4ss@cache:6379/0",
            ],
            &[
                "postgres://user:password@localhost/db",
                "http://user:pass@example.com/",
                "amqp://guest:guest@localhost:5672//",
                "https://foo:bar@host/",
                "postgres://${USER}:${PASSWORD}@host/db",
                "mysql://root:{password}@host/db",
                "https://example.com:8080/path",
                "see https://docs.rs/regex/1.0/regex/#syntax",
                "http://[::1]:8080/",
                "postgres://app:hunter2@db/app",
                "ftp://rms:Zk3Xq9Lm2V@example.com",
                "https://deploy:Zk3Xq9Lm2V@git.example.org/x.git",
                "ftp://rms:secret123@host",
                "https://user:pass[\\u007F@foo/bar",
            ],
        );
        // Only the password is replaced: the reader still sees the service.
        let out = redact("postgres://app:Zk3Xq9Lm2V@db/app", CODE);
        assert_eq!(out.text, "postgres://app:[REDACTED:url-credentials]@db/app");
    }
}
