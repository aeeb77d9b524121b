//! A secret-looking value assigned to a secret-looking name:
//! `password = "…"`, `"api_key": "…"`, `SECRET_KEY: &str = "…"`, and in
//! configuration and dotenv files `DB_PASSWORD=…`.
//!
//! The name decides what the variable is: its last word must be a secret
//! noun (`password`, `token`, `secret`, `api_key`, …), so `token_type`,
//! `password_hash` or `api_key_env` are not secrets. The value must look
//! like a credential: not a placeholder, a template, an identifier, a path,
//! a URL or a fixture word, and (outside dotenv files) varied enough.

use aho_corasick::AhoCorasick;
use regex::Regex;

use super::value::{classes, entropy, is_placeholder};
use super::{Context, Kind, Span, overlaps};

pub const RULE: &str = "secret-assignment";

/// Name, optional type annotation, assignment operator, quoted value. The
/// value's length is bounded in `scan`, not here: a counted repetition of a
/// Unicode class compiles into hundreds of copies of its automaton, which
/// cost a third of a small dry run.
const QUOTED: &str = r#"(?P<name>[A-Za-z_$@][A-Za-z0-9_.$-]*)["'\]]{0,2}\s*(?::\s*&?(?:'static\s+)?[A-Za-z_][A-Za-z0-9_<>\[\]:]*\s*)?(?:=|:=|=>|==|!=|:|\?\?=|\|\|=)\s*(?:[rbu]{1,2})?(?:"(?P<d>[^"\s]+)"|'(?P<q>[^'\s]+)'|`(?P<b>[^`\s]+)`)"#;

/// A quoted value longer than this is data (a blob, a certificate), not a
/// credential typed into code.
const MAX_QUOTED_CHARS: usize = 256;

/// Name, `=` or `:`, a bare value (configuration and dotenv files).
const BARE: &str = r#"(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)\s*(?:=|:)\s*(?P<v>[^\s"'`#;,]+)"#;

/// Words that make a name worth a look; cheap to find.
const NAME_WORDS: &[&str] = &[
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "credential",
    "auth",
];

pub struct Assign {
    quoted: Regex,
    bare: Regex,
    words: AhoCorasick,
}

impl Assign {
    pub fn new() -> Assign {
        Assign {
            quoted: Regex::new(QUOTED).unwrap_or_else(|e| panic!("assignment rule: {e}")),
            bare: Regex::new(BARE).unwrap_or_else(|e| panic!("assignment rule: {e}")),
            words: AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(NAME_WORDS)
                .unwrap_or_else(|e| panic!("assignment words: {e}")),
        }
    }

    pub fn scan(&self, line: &str, index: usize, context: Context, kept: &mut Vec<Span>) {
        if context.test || !self.words.is_match(line) {
            return;
        }
        for caps in self.quoted.captures_iter(line) {
            let (Some(name), Some(value)) = (
                caps.name("name"),
                caps.name("d").or(caps.name("q")).or(caps.name("b")),
            ) else {
                continue;
            };
            if value.as_str().chars().count() <= MAX_QUOTED_CHARS
                && secret_name(name.as_str())
                && real_value(value.as_str(), context.kind == Kind::Env)
                && !overlaps(kept, value.start(), value.end())
            {
                kept.push(Span {
                    line: index,
                    start: value.start(),
                    end: value.end(),
                    rule: RULE,
                });
            }
        }
        if !context.kind.unquoted_values() {
            return;
        }
        // `export NAME=value` in dotenv files; YAML keys may be indented.
        let body = line.trim_start();
        let body = body.strip_prefix("export ").unwrap_or(body);
        let offset = line.len() - body.len();
        if let Some(caps) = self.bare.captures(body) {
            let (Some(name), Some(value)) = (caps.name("name"), caps.name("v")) else {
                return;
            };
            // Only a whole line's own key: not `a = b` deep in a sentence.
            if name.start() != 0 {
                return;
            }
            let (start, end) = (offset + value.start(), offset + value.end());
            if secret_name(name.as_str())
                && real_value(value.as_str(), context.kind == Kind::Env)
                && !overlaps(kept, start, end)
            {
                kept.push(Span {
                    line: index,
                    start,
                    end,
                    rule: RULE,
                });
            }
        }
    }
}

/// Split a name into lowercase words at `_ - . $ @`, and at camelCase and
/// letter/digit boundaries: `AWS_SECRET_ACCESS_KEY`, `apiKey`,
/// `self.db_password2`.
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev: Option<char> = None;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev = None;
            continue;
        }
        let boundary = match prev {
            Some(p) => {
                (p.is_ascii_lowercase() && c.is_ascii_uppercase())
                    || (p.is_ascii_alphabetic() != c.is_ascii_alphabetic())
            }
            None => false,
        };
        if boundary && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(c.to_ascii_lowercase());
        prev = Some(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether a name holds a secret: its last word (digits aside) is a secret
/// noun, and no word marks it as a fake.
fn secret_name(name: &str) -> bool {
    const NOUNS: &[&str] = &[
        "password",
        "passwd",
        "passphrase",
        "passcode",
        "pwd",
        "secret",
        "token",
        "apikey",
        "secretkey",
        "accesskey",
        "privatekey",
        "authtoken",
        "accesstoken",
        "credential",
        "credentials",
    ];
    /// Words before `key` that make it a credential (`api_key`, `SECRET_KEY`).
    const KEY_KINDS: &[&str] = &[
        "api",
        "access",
        "secret",
        "private",
        "auth",
        "client",
        "signing",
        "encryption",
        "master",
        "app",
        "service",
        "account",
        "consumer",
        "license",
        "webhook",
    ];
    const FAKE: &[&str] = &[
        "fake",
        "dummy",
        "test",
        "example",
        "sample",
        "mock",
        "invalid",
        "wrong",
        "bad",
        "placeholder",
        "bogus",
        "csrf",
        "xsrf",
        "random",
        "unused",
    ];
    let words: Vec<String> = words(name)
        .into_iter()
        .filter(|w| !w.chars().all(|c| c.is_ascii_digit()))
        .collect();
    let Some(last) = words.last() else {
        return false;
    };
    if words.iter().any(|w| FAKE.contains(&w.as_str())) {
        return false;
    }
    if NOUNS.contains(&last.as_str()) {
        return true;
    }
    last == "key" && words.len() >= 2 && KEY_KINDS.contains(&words[words.len() - 2].as_str())
}

/// Whether a value looks like a real credential. In a dotenv file any real
/// value counts (`DB_PASSWORD=postgres1` is a password); elsewhere the value
/// must also be long and varied enough not to be a word or an identifier.
fn real_value(value: &str, dotenv: bool) -> bool {
    const FIXTURE_WORDS: &[&str] = &[
        "test",
        "passw",
        "secret",
        "token",
        "fake",
        "mock",
        "foobar",
        "qwerty",
        "letmein",
        "hunter",
        "admin",
        "default",
        "none",
        "null",
        "true",
        "false",
        "undefined",
    ];
    if value.len() < 4 || is_placeholder(value) {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    if value.contains("://")
        || value.starts_with(['/', '.', '~', '#', '&', '*', '@'])
        || is_reference(value)
    {
        return false;
    }
    // Format strings, templates and interpolations.
    if value.contains(['{', '}', '(', ')', '%']) {
        return false;
    }
    let c = classes(value);
    if dotenv {
        let numeric = c.digit == value.len();
        let word = matches!(
            lower.as_str(),
            "true" | "false" | "none" | "null" | "yes" | "no"
        );
        let short_number = numeric && value.len() < 8;
        return !(word || short_number);
    }
    if value.len() < 8 || FIXTURE_WORDS.iter().any(|w| lower.contains(w)) {
        return false;
    }
    // Escapes (`b"\x9b\xbe…"`, `"pass\0word"`) are binary test vectors;
    // a stored password hash (`pbkdf2_sha256$…`) is not the password.
    if value.contains('\\') || is_password_hash(&lower) || is_uuid(value) || is_patterned(value) {
        return false;
    }
    // Constant and variable names with digits: `FORBIDDEN_VALUE2`, `user_pw_2`.
    let snake = value.contains('_')
        && (value
            .chars()
            .all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == '_')
            || value
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_'));
    if snake {
        return false;
    }
    // Identifiers and names: `access_token`, `csrftoken`, `refreshToken`,
    // `GITHUB_TOKEN`, `my-app.password` (no digits, no symbols but . _ -).
    let identifier = c.digit == 0
        && value
            .chars()
            .all(|ch| ch.is_alphabetic() || "_.-".contains(ch));
    if identifier && (value.len() < 24 || entropy(value) < 4.0) {
        return false;
    }
    // Pure numbers are ports, ids and counts.
    if c.digit == value.len() {
        return false;
    }
    entropy(value) >= 3.0
}

/// A path to where a secret is kept, made of lowercase words
/// (`yegor256/home#assets/crates-credentials`, `vault:kv/app/db`): random
/// text mixes cases and digits within its segments.
fn is_reference(value: &str) -> bool {
    let word = |segment: &str| {
        let letters = segment.trim_end_matches(|c: char| c.is_ascii_digit());
        !letters.is_empty() && letters.bytes().all(|b| b.is_ascii_lowercase())
    };
    value.contains(['/', '#', ':'])
        && value
            .split(|c: char| "/#:.-_@".contains(c))
            .all(|segment| segment.is_empty() || word(segment))
}

/// A stored password hash in a framework's format.
fn is_password_hash(lower: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "pbkdf2_",
        "pbkdf2$",
        "argon2",
        "bcrypt$",
        "bcrypt_",
        "scrypt$",
        "sha1$",
        "md5$",
        "sha256$",
        "sha512$",
        "crypt$",
        "unsalted_",
    ];
    PREFIXES.iter().any(|p| lower.starts_with(p))
}

/// `8-4-4-4-12` hex digits: an identifier more often than a credential.
fn is_uuid(value: &str) -> bool {
    let parts: Vec<&str> = value.split('-').collect();
    parts.len() == 5
        && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A long value made of a repeated pattern (`1bcdefghij2bcdefghij…`):
/// random text repeats few of its three-character runs.
fn is_patterned(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() < 24 {
        return false;
    }
    let grams: std::collections::HashSet<&[u8]> = bytes.windows(3).collect();
    (grams.len() as f64) < 0.6 * (bytes.len() - 2) as f64
}

#[cfg(test)]
mod tests {
    use super::super::{Context, Kind, redact};
    use super::*;

    fn found(text: &str, kind: Kind) -> bool {
        let context = Context { kind, test: false };
        let out = redact(text, context);
        let hit = out.found.iter().any(|f| f.1 == RULE);
        if hit {
            assert!(out.text.contains("[REDACTED:secret-assignment]"), "{out:?}");
        }
        hit
    }

    #[test]
    fn names_split_into_words() {
        assert_eq!(
            words("AWS_SECRET_ACCESS_KEY"),
            ["aws", "secret", "access", "key"]
        );
        assert_eq!(words("apiKey"), ["api", "key"]);
        assert_eq!(words("self.db_password2"), ["self", "db", "password", "2"]);
        assert_eq!(words("X-Api-Key"), ["x", "api", "key"]);
    }

    #[test]
    fn secret_names() {
        for name in [
            "password",
            "DB_PASSWORD",
            "self.password2",
            "api_key",
            "apiKey",
            "X-Api-Key",
            "SECRET_KEY",
            "client_secret",
            "refresh_token",
            "AWS_SECRET_ACCESS_KEY",
            "githubToken",
            "credentials",
        ] {
            assert!(secret_name(name), "{name}");
        }
        for name in [
            "token_type",
            "password_hash",
            "api_key_env",
            "key",
            "primary_key",
            "tokenizer",
            "max_tokens",
            "fake_password",
            "test_api_key",
            "secret_santa_list",
            "passage",
            "sort_key",
        ] {
            assert!(!secret_name(name), "{name}");
        }
    }

    #[test]
    fn quoted_assignments_in_code() {
        for text in [
            r#"password = "Zk3Xq9Lm2V""#,
            r#"let api_key = "a8f5f167f44f4964e6c998dee827110c";"#,
            r#"const SECRET_KEY: &str = "R8fNq2Lx7TbV4mKc9WzP";"#,
            r#"SECRET_KEY: str = 'R8fNq2Lx7TbV4mKc9WzP'"#,
            r#"{"client_secret": "6da89121079f83b2eb6acccf8219ea98"}"#,
            r#"login(user="ada", password="c0rrect-h0rse-B4ttery")"#,
            r#"apiKey := "R8fNq2Lx7TbV4mKc9WzP""#,
            r#"headers["X-Api-Key"] = 'R8fNq2Lx7TbV4mKc9WzP'"#,
            r#"if password == "S3cr1t!xyz" {"#,
            r#"auth_token => "R8fNq2Lx7TbV4mKc9WzP","#,
        ] {
            assert!(found(text, Kind::Code), "{text}");
        }
    }

    #[test]
    fn not_secrets_in_code() {
        for text in [
            r#"password = "changeme""#,
            r#"password = "password123""#,
            r#"password = "secret""#,
            r#"token_type = "Bearer_R8fNq2Lx7""#,
            r#"api_key_env = "OPENAI_API_KEY""#,
            r#"cookie_name = "csrftoken""#,
            r#"token = "access_token""#,
            r#"refresh_token = "refreshToken""#,
            r#"password = "{password}""#,
            r#"password = "%(password)s""#,
            r#"SECRET_KEY = '{{ secret_key }}'"#,
            r#"token = "${GITHUB_TOKEN}""#,
            r#"token = "<your token>""#,
            r#"api_key = "xxxxxxxxxxxxxxxx""#,
            r#"password = "testpass1234""#,
            r#"secret = "/etc/app/secret.txt""#,
            r#"token_url = "https://auth.example.com/token""#,
            r#"password = os.environ["DB_PASSWORD"]"#,
            r#"let token = self.next_token();"#,
            r#"token = "12345678901""#,
            r#"key = "R8fNq2Lx7TbV4mKc9WzP""#,
            r#"password: str = """#,
            r#"password = "abcdefgh""#,
            r#"fake_password = "R8fNq2Lx7TbV4mKc9WzP""#,
            r#"TOKEN_FORMAT = "abcd""#,
            r#"let secret = b"\x9b\xbe\x43\x6b\xa9\x40\xf0\x17";"#,
            r#""password": "pbkdf2_sha256$10000$LUyhxJjuLwXF$f6Zbpnx1L5dPze8m0itBaHMDyZ/n6Jy=","#,
            r#""password1": "FORBIDDEN_VALUE2","#,
            r#"connection.settings_dict["PASSWORD"] = "françois""#,
            r#"CSRF_TOKEN = "1bcdefghij2bcdefghij3bcdefghij4bcdefghij""#,
            r#"{"SECRET_KEY": "c4d77c62-6196-4f17-a06b-c462cffae87a"}"#,
            r#"API_TOKEN = "ab12ab12ab12ab12ab12ab12ab12ab12""#,
        ] {
            assert!(!found(text, Kind::Code), "{text}");
        }
    }

    #[test]
    fn bare_values_count_only_in_configuration_and_dotenv_files() {
        assert!(found("DB_PASSWORD=postgres1", Kind::Env));
        assert!(found("export API_TOKEN=R8fNq2Lx7TbV4mKc9WzP", Kind::Env));
        assert!(found("  password: Zk3Xq9Lm2V", Kind::Config));
        assert!(found("client_secret = R8fNq2Lx7TbV4mKc9WzP", Kind::Config));
        assert!(!found("DB_PASSWORD=postgres1", Kind::Code));
        assert!(!found("password: Zk3Xq9Lm2V", Kind::Prose));
        for text in [
            "DB_PASSWORD=",
            "DB_PASSWORD=changeme",
            "API_TOKEN=${API_TOKEN}",
            "SECRET_KEY=<generate one>",
            "DEBUG_TOKEN=true",
            "PASSWORD_MIN_LENGTH=8",
            "# password=Zk3Xq9Lm2V",
            "TOKEN_TTL=3600",
            // Where the secret is kept, not the secret (micromap's .rultor.yml).
            "CREDENTIALS=yegor256/home#assets/crates-credentials",
        ] {
            assert!(!found(text, Kind::Env), "{text}");
        }
        assert!(!found(
            "  credentials: yegor256/home#assets/crates-credentials",
            Kind::Config
        ));
        assert!(!found("db_password: vault:kv/app/db2", Kind::Config));
        // A secret with a slash in it is still one.
        assert!(found("client_secret: R8fNq2Lx7TbV/4mKc9WzP", Kind::Config));
    }
}
