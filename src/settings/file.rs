//! `.speed/config.toml`, read strictly: every key is known, every value has
//! the expected type and lies in its range, or the file is an error naming
//! the file, the line, the key and what was expected (with the closest known
//! key when an unknown one looks like a typo). All problems of a file are
//! reported at once.
//!
//! This module only turns text into plain optional values (`File`); it does
//! not know defaults, flags or the environment (see `settings`).

mod dimensions;
mod tool;

use std::ops::{Range, RangeInclusive};

use toml::de::{DeTable, DeValue};

use super::limits;
use crate::checks::Check;
use crate::hook::AllowOrBlock;
use crate::llm::Choice;
use crate::severity::Severity;

mod spec_review;
pub use spec_review::SpecReview;

/// One thing wrong with a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line of the key or value, when known.
    pub line: Option<usize>,
    /// The dotted key (`llm.timeout_secs`), or the table (`[llm]`).
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// The problems of one file, displayed one per line after the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problems(pub Vec<Problem>);

impl std::fmt::Display for Problems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_slice() {
            [one] => write!(f, "{one}"),
            many => {
                write!(f, "{} problems", many.len())?;
                for p in many {
                    write!(f, "\n  {p}")?;
                }
                Ok(())
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{file} is not valid TOML: {message}")]
    Toml { file: String, message: String },
    #[error("{file}: {problems}")]
    Invalid { file: String, problems: Problems },
}

/// The file as written: every value optional, every present one checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct File {
    pub git: Git,
    pub llm: Llm,
    pub review: Review,
    pub guardian: Guardian,
    pub checks: Checks,
    pub defect: Defect,
    pub hook: Hook,
    pub spec_review: SpecReview,
    /// `[dimensions.<name>]`, in the file's order.
    pub dimensions: Vec<Dimension>,
}

/// One `[dimensions.<name>]` table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dimension {
    pub name: String,
    pub weight: Option<u32>,
    pub min_score: Option<u32>,
    pub description: Option<String>,
    pub enabled: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Git {
    pub main_branch: Option<String>,
}

/// `[llm]`, read straight into the part's own type over its defaults
/// (`llm::Config::default()`), so the keys are named once, there. `set`
/// names the keys the file wrote: `settings` says where each value came
/// from, and knows whether the file configures a model at all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Llm {
    pub config: crate::llm::Config,
    pub set: Vec<&'static str>,
}

impl Llm {
    /// Whether the file wrote `[llm] key`.
    pub fn has(&self, key: &str) -> bool {
        self.set.contains(&key)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Review {
    pub token_budget: Option<usize>,
    pub max_revisions: Option<u32>,
    pub max_parts: Option<usize>,
    pub actor: Option<String>,
    pub tokenizer: Option<String>,
    pub concurrency: Option<usize>,
    pub pass_score: Option<u32>,
    pub human: Option<crate::review::Human>,
    pub reconcile: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Guardian {
    pub enabled: Option<bool>,
    pub vision_file: Option<String>,
    pub model: Option<String>,
    pub token_budget: Option<usize>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checks {
    /// The built-in checks the file sets: None turns one off.
    pub levels: Vec<(Check, Option<Severity>)>,
    pub large_diff_lines: Option<usize>,
    pub large_diff_files: Option<usize>,
    /// `[[checks.command]]`, when the file has any.
    pub commands: Option<Vec<CommandCheck>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CommandCheck {
    pub name: String,
    pub run: Vec<String>,
    pub severity: Option<Severity>,
    pub timeout_secs: Option<f64>,
    /// parser, pattern, report, category, blocking, fix_priority.
    pub tool: crate::checks::Tool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Defect {
    pub max_lines: Option<usize>,
    pub max_files: Option<usize>,
    pub exempt: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hook {
    pub review_on_miss: Option<bool>,
    pub unknown: Option<AllowOrBlock>,
    pub on_error: Option<AllowOrBlock>,
    pub timeout_secs: Option<f64>,
    pub local_timeout_secs: Option<f64>,
}

/// Every table and its keys, for unknown-key errors and their suggestions.
pub const KEYS: &[(&str, &[&str])] = &[
    ("git", &["main_branch"]),
    (
        "llm",
        &[
            "provider",
            "base_url",
            "model",
            "api_key_env",
            "command",
            "timeout_secs",
            "connect_timeout_secs",
            "max_retries",
            "retry_base_ms",
            "temperature",
            "seed",
            "max_output_tokens",
            "structured_output",
            "cache_read_discount",
            "batch_discount",
            "rpm",
            "tpm",
            "max_answer_bytes",
            "price_input_per_mtok",
            "price_output_per_mtok",
        ],
    ),
    (
        "review",
        &[
            "token_budget",
            "max_revisions",
            "max_parts",
            "actor",
            "tokenizer",
            "concurrency",
            "pass_score",
            "human",
            "reconcile",
        ],
    ),
    (
        "guardian",
        &["enabled", "vision_file", "model", "token_budget"],
    ),
    (
        "checks",
        &[
            "empty_diff",
            "scope",
            "breaking_change",
            "secret",
            "placeholder",
            "debug_leftover",
            "test_weakened",
            "untested_criterion",
            "large_diff",
            "coordination",
            "error_discarded",
            "command",
        ],
    ),
    ("defect", &["max_lines", "max_files", "exempt"]),
    // Its tables are named by the dimensions (see `dimensions`).
    ("dimensions", &[]),
    (
        "hook",
        &[
            "review_on_miss",
            "unknown",
            "on_error",
            "timeout_secs",
            "local_timeout_secs",
        ],
    ),
    (
        "spec_review",
        &[
            "criteria",
            "min_score",
            "max_iterations",
            "reviser",
            "reviser_timeout_secs",
        ],
    ),
];

const LARGE_DIFF_KEYS: &[&str] = &["lines", "files", "severity"];
const COMMAND_KEYS: &[&str] = &["name", "run", "severity", "timeout_secs"];
const SEVERITY_WORDS: &[&str] = &["critical", "major", "minor", "nit", "off"];

/// Parses and checks a config file; `file` names it in every message.
pub fn parse(text: &str, file: &str) -> Result<File, Error> {
    let doc = DeTable::parse(text).map_err(|err| Error::Toml {
        file: file.to_string(),
        message: err.to_string().trim_end().to_string(),
    })?;
    let mut reader = Reader {
        text,
        problems: Vec::new(),
    };
    let config = reader.document(doc.get_ref());
    // Tables are walked in key order; report in the order of the file.
    reader.problems.sort_by_key(|p| p.line);
    if reader.problems.is_empty() {
        Ok(config)
    } else {
        Err(Error::Invalid {
            file: file.to_string(),
            problems: Problems(reader.problems),
        })
    }
}

type Value<'i> = toml::Spanned<DeValue<'i>>;

/// Walks the document, collecting problems instead of stopping at the first.
struct Reader<'t> {
    text: &'t str,
    problems: Vec<Problem>,
}

/// One table being read: its dotted name and entries.
struct Table<'a, 'i> {
    name: String,
    entries: &'a DeTable<'i>,
}

impl<'a, 'i> Table<'a, 'i> {
    fn get(&self, key: &str) -> Option<&'a Value<'i>> {
        self.entries
            .iter()
            .find(|(k, _)| k.get_ref().as_ref() == key)
            .map(|(_, v)| v)
    }

    fn path(&self, key: &str) -> String {
        format!("{}.{key}", self.name)
    }
}

impl Reader<'_> {
    fn line(&self, span: Range<usize>) -> Option<usize> {
        let start = span.start.min(self.text.len());
        Some(
            self.text.as_bytes()[..start]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1,
        )
    }

    fn problem(&mut self, span: Range<usize>, key: String, message: String) {
        let line = self.line(span);
        self.problems.push(Problem { line, key, message });
    }

    /// How a value was written, for "found …" (clipped, so a long value
    /// cannot flood the terminal).
    fn found(&self, value: &Value<'_>) -> String {
        match value.get_ref() {
            DeValue::String(s) => format!("the string {:?}", clip(s)),
            DeValue::Integer(_) | DeValue::Float(_) | DeValue::Boolean(_) => {
                let written = self.text.get(value.span()).unwrap_or("").trim();
                format!("{} {}", value.get_ref().type_str(), clip(written))
            }
            DeValue::Datetime(_) => "a date".to_string(),
            DeValue::Array(_) => "an array".to_string(),
            DeValue::Table(_) => "a table".to_string(),
        }
    }

    fn expected(&mut self, table: &Table, key: &str, value: &Value<'_>, what: &str) {
        let found = self.found(value);
        self.problem(
            value.span(),
            table.path(key),
            format!("expected {what}, found {found}"),
        );
    }

    fn document(&mut self, doc: &DeTable<'_>) -> File {
        let mut file = File::default();
        for (key, value) in doc {
            let name = key.get_ref().as_ref();
            let Some(table) = value.get_ref().as_table() else {
                if KEYS.iter().any(|(t, _)| *t == name) {
                    let found = self.found(value);
                    self.problem(
                        value.span(),
                        name.to_string(),
                        format!("expected a table ([{name}]), found {found}"),
                    );
                } else {
                    self.unknown(key.span(), None, name);
                }
                continue;
            };
            let table = Table {
                name: name.to_string(),
                entries: table,
            };
            match name {
                "git" => file.git = self.git(&table),
                "llm" => file.llm = self.llm(&table),
                "review" => file.review = self.review(&table),
                "guardian" => file.guardian = self.guardian(&table),
                "checks" => file.checks = self.checks(&table),
                "defect" => file.defect = self.defect(&table),
                "hook" => file.hook = self.hook(&table),
                "spec_review" => file.spec_review = self.spec_review(&table),
                "dimensions" => file.dimensions = self.dimensions(&table),
                _ => self.unknown(key.span(), None, name),
            }
        }
        file
    }

    /// Reports the keys of `table` not in `known`.
    fn check_keys(&mut self, table: &Table, known: &[&str]) {
        for (key, _) in table.entries {
            let name = key.get_ref().as_ref();
            if !known.contains(&name) {
                self.unknown(key.span(), Some((&table.name, known)), name);
            }
        }
    }

    /// An unknown key (or table, when `table` is None), with a suggestion:
    /// a close key of the same table, or the same key in another table.
    fn unknown(&mut self, span: Range<usize>, table: Option<(&str, &[&str])>, key: &str) {
        let (path, hint) = match table {
            Some((name, known)) => {
                let hint = closest(key, known.iter().copied())
                    .map(|k| format!("did you mean `{k}`?"))
                    .or_else(|| {
                        elsewhere(key, name)
                            .map(|t| format!("did you mean `{t}.{key}` (in [{t}])?"))
                    });
                (format!("{name}.{key}"), hint)
            }
            None => {
                let hint = closest(key, KEYS.iter().map(|(t, _)| *t))
                    .map(|t| format!("did you mean [{t}]?"))
                    .or_else(|| {
                        elsewhere(key, "").map(|t| format!("did you mean `{t}.{key}` (in [{t}])?"))
                    });
                (key.to_string(), hint)
            }
        };
        let what = if table.is_some() {
            "key"
        } else {
            "key or table"
        };
        let message = match hint {
            Some(hint) => format!("unknown {what}; {hint}"),
            None => match table {
                Some((_, known)) => format!("unknown {what}; known keys: {}", known.join(", ")),
                None => format!(
                    "unknown {what}; known tables: {}",
                    KEYS.iter().map(|(t, _)| *t).collect::<Vec<_>>().join(", ")
                ),
            },
        };
        self.problem(span, path, message);
    }

    fn string(&mut self, table: &Table, key: &str) -> Option<String> {
        let value = table.get(key)?;
        match value.get_ref().as_str() {
            Some(s) if !s.trim().is_empty() => Some(s.to_string()),
            Some(_) => {
                self.expected(table, key, value, "a non-empty string");
                None
            }
            None => {
                self.expected(table, key, value, "a string");
                None
            }
        }
    }

    fn bool(&mut self, table: &Table, key: &str) -> Option<bool> {
        let value = table.get(key)?;
        let b = value.get_ref().as_bool();
        if b.is_none() {
            self.expected(table, key, value, "true or false");
        }
        b
    }

    /// An integer within `range`.
    fn int(&mut self, table: &Table, key: &str, range: RangeInclusive<i64>) -> Option<i64> {
        let value = table.get(key)?;
        let parsed = value
            .get_ref()
            .as_integer()
            .and_then(|i| i64::from_str_radix(i.as_str(), i.radix()).ok());
        match parsed {
            Some(n) if range.contains(&n) => Some(n),
            _ => {
                let what = format!("an integer from {} to {}", range.start(), range.end());
                self.expected(table, key, value, &what);
                None
            }
        }
    }

    fn usize(&mut self, table: &Table, key: &str, range: RangeInclusive<i64>) -> Option<usize> {
        self.int(table, key, range)
            .and_then(|n| usize::try_from(n).ok())
    }

    fn u32(&mut self, table: &Table, key: &str, range: RangeInclusive<i64>) -> Option<u32> {
        self.int(table, key, range)
            .and_then(|n| u32::try_from(n).ok())
    }

    fn u64(&mut self, table: &Table, key: &str, range: RangeInclusive<i64>) -> Option<u64> {
        self.int(table, key, range)
            .and_then(|n| u64::try_from(n).ok())
    }

    /// A number (integer or float) within `range`; NaN and infinities are
    /// never in range.
    fn number(
        &mut self,
        table: &Table,
        key: &str,
        range: RangeInclusive<f64>,
        unit: &str,
    ) -> Option<f64> {
        let value = table.get(key)?;
        let parsed = number(value);
        match parsed {
            Some(n) if range.contains(&n) => Some(n),
            _ => {
                let what = format!("{unit} from {} to {}", range.start(), range.end());
                self.expected(table, key, value, &what);
                None
            }
        }
    }

    /// Seconds: more than zero, at most `max`.
    fn seconds(&mut self, table: &Table, key: &str, max: f64) -> Option<f64> {
        let value = table.get(key)?;
        match number(value) {
            Some(n) if n > 0.0 && n <= max => Some(n),
            _ => {
                let what = format!("a number of seconds above 0 and at most {max}");
                self.expected(table, key, value, &what);
                None
            }
        }
    }

    /// An array of non-empty strings (possibly empty when `allow_empty`).
    fn strings(&mut self, table: &Table, key: &str, allow_empty: bool) -> Option<Vec<String>> {
        let value = table.get(key)?;
        let what = if allow_empty {
            "an array of strings"
        } else {
            "a non-empty array of strings"
        };
        let Some(items) = value.get_ref().as_array() else {
            self.expected(table, key, value, what);
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items.iter() {
            match item.get_ref().as_str() {
                Some(s) if !s.is_empty() => out.push(s.to_string()),
                _ => {
                    let found = self.found(item);
                    self.problem(
                        item.span(),
                        table.path(key),
                        format!("expected {what}, found an element that is {found}"),
                    );
                    return None;
                }
            }
        }
        if out.is_empty() && !allow_empty {
            self.expected(table, key, value, what);
            return None;
        }
        Some(out)
    }

    /// One word of `words`, with a suggestion when it is close to one.
    fn word(&mut self, table: &Table, key: &str, words: &[&str]) -> Option<String> {
        let value = table.get(key)?;
        let Some(s) = value.get_ref().as_str() else {
            let what = format!("one of {}", quoted(words));
            self.expected(table, key, value, &what);
            return None;
        };
        if words.contains(&s) {
            return Some(s.to_string());
        }
        let hint = closest(s, words.iter().copied())
            .map(|w| format!(" (did you mean \"{w}\"?)"))
            .unwrap_or_default();
        let what = format!("one of {}", quoted(words));
        let found = self.found(value);
        self.problem(
            value.span(),
            table.path(key),
            format!("expected {what}, found {found}{hint}"),
        );
        None
    }

    fn sub_table<'a, 'i>(&mut self, table: &Table<'a, 'i>, key: &str) -> Option<Table<'a, 'i>> {
        let value = table.get(key)?;
        match value.get_ref().as_table() {
            Some(entries) => Some(Table {
                name: table.path(key),
                entries,
            }),
            None => {
                self.expected(table, key, value, "a table");
                None
            }
        }
    }

    fn git(&mut self, t: &Table) -> Git {
        self.check_keys(t, keys("git"));
        Git {
            main_branch: self.branch_name(t, "main_branch"),
        }
    }

    fn branch_name(&mut self, t: &Table, key: &str) -> Option<String> {
        let name = self.string(t, key)?;
        if name.trim() != name || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            let value = t.get(key)?;
            self.expected(t, key, value, "a branch name without spaces");
            return None;
        }
        Some(name)
    }

    fn llm(&mut self, t: &Table) -> Llm {
        self.check_keys(t, keys("llm"));
        let mut c = crate::llm::Config::default();
        // Each value read replaces the part's default; one that is absent
        // or wrong leaves it (a wrong one makes the file an error anyway).
        fn put<T>(slot: &mut T, value: Option<T>) {
            if let Some(value) = value {
                *slot = value;
            }
        }
        let secs = |s: Option<f64>| s.map(std::time::Duration::from_secs_f64);
        put(
            &mut c.provider,
            self.word(t, "provider", Choice::WORDS)
                .and_then(|w| Choice::parse(&w)),
        );
        put(&mut c.base_url, self.url(t, "base_url").map(Some));
        put(&mut c.model, self.string(t, "model").map(Some));
        put(
            &mut c.api_key_env,
            self.variable_name(t, "api_key_env").map(Some),
        );
        put(&mut c.command, self.strings(t, "command", false));
        // In range (checked here), so the durations cannot panic.
        put(
            &mut c.timeout,
            secs(self.seconds(t, "timeout_secs", limits::MAX_TIMEOUT_SECS)),
        );
        put(
            &mut c.connect_timeout,
            secs(self.seconds(t, "connect_timeout_secs", limits::MAX_CONNECT_TIMEOUT_SECS)),
        );
        put(
            &mut c.max_retries,
            self.u32(t, "max_retries", limits::MAX_RETRIES),
        );
        put(
            &mut c.retry_base,
            self.u64(t, "retry_base_ms", limits::RETRY_BASE_MS)
                .map(std::time::Duration::from_millis),
        );
        put(
            &mut c.temperature,
            self.number(t, "temperature", limits::TEMPERATURE, "a number"),
        );
        put(&mut c.seed, self.u64(t, "seed", 0..=i64::MAX));
        put(
            &mut c.max_output_tokens,
            self.u32(t, "max_output_tokens", limits::MAX_OUTPUT_TOKENS),
        );
        put(&mut c.structured_output, self.bool(t, "structured_output"));
        put(
            &mut c.cache_read_discount,
            self.discount(t, "cache_read_discount").map(Some),
        );
        put(
            &mut c.batch_discount,
            self.discount(t, "batch_discount").map(Some),
        );
        put(&mut c.rpm, self.u32(t, "rpm", limits::RPM).map(Some));
        put(&mut c.tpm, self.u32(t, "tpm", limits::TPM).map(Some));
        put(
            &mut c.max_answer_bytes,
            self.usize(t, "max_answer_bytes", limits::MAX_ANSWER_BYTES),
        );
        put(
            &mut c.price_input_per_mtok,
            self.price(t, "price_input_per_mtok").map(Some),
        );
        put(
            &mut c.price_output_per_mtok,
            self.price(t, "price_output_per_mtok").map(Some),
        );
        let set = keys("llm")
            .iter()
            .copied()
            .filter(|key| t.get(key).is_some())
            .collect();
        Llm { config: c, set }
    }

    fn price(&mut self, t: &Table, key: &str) -> Option<f64> {
        self.number(t, key, limits::PRICE_PER_MTOK, "a price per million tokens")
    }

    fn discount(&mut self, t: &Table, key: &str) -> Option<f64> {
        self.number(t, key, limits::DISCOUNT, "a fraction of the price")
    }

    fn url(&mut self, t: &Table, key: &str) -> Option<String> {
        let url = self.string(t, key)?;
        let lower = url.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            return Some(url);
        }
        let value = t.get(key)?;
        self.expected(t, key, value, "an http:// or https:// URL");
        None
    }

    /// The name of an environment variable. A value that is not a name is
    /// probably the secret itself, so it is never echoed.
    fn variable_name(&mut self, t: &Table, key: &str) -> Option<String> {
        let value = t.get(key)?;
        let Some(name) = value.get_ref().as_str() else {
            self.expected(t, key, value, "the name of an environment variable");
            return None;
        };
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if valid {
            return Some(name.to_string());
        }
        self.problem(
            value.span(),
            t.path(key),
            "expected the name of an environment variable (letters, digits and _), \
             not the key itself (the value is not shown)"
                .to_string(),
        );
        None
    }

    fn review(&mut self, t: &Table) -> Review {
        self.check_keys(t, keys("review"));
        Review {
            token_budget: self.usize(t, "token_budget", limits::TOKEN_BUDGET),
            max_revisions: self.u32(t, "max_revisions", limits::MAX_REVISIONS),
            max_parts: self.usize(t, "max_parts", limits::MAX_PARTS),
            actor: self.actor(t, "actor"),
            tokenizer: self.word(t, "tokenizer", &crate::prompt::Counter::KNOWN),
            concurrency: self.usize(t, "concurrency", limits::CONCURRENCY),
            pass_score: self.u32(t, "pass_score", limits::SCORE),
            human: self
                .word(t, "human", crate::review::Human::WORDS)
                .and_then(|w| crate::review::Human::parse(&w)),
            reconcile: self.bool(t, "reconcile"),
        }
    }

    /// The actor names event files, so it must be a plain file-name word.
    fn actor(&mut self, t: &Table, key: &str) -> Option<String> {
        let actor = self.string(t, key)?;
        if super::valid_actor(&actor) {
            return Some(actor);
        }
        let value = t.get(key)?;
        self.expected(
            t,
            key,
            value,
            "a name of letters, digits, '.', '-' and '_' (at most 64, not starting with '.')",
        );
        None
    }

    fn guardian(&mut self, t: &Table) -> Guardian {
        self.check_keys(t, keys("guardian"));
        Guardian {
            enabled: self.bool(t, "enabled"),
            vision_file: self.repo_path(t, "vision_file"),
            model: self.string(t, "model"),
            token_budget: self.usize(t, "token_budget", limits::TOKEN_BUDGET),
        }
    }

    /// A path inside the repository, relative to its root.
    fn repo_path(&mut self, t: &Table, key: &str) -> Option<String> {
        let path = self.string(t, key)?;
        let inside = !path.starts_with('/')
            && !path.starts_with('\\')
            && !path.split(['/', '\\']).any(|part| part == "..");
        if inside {
            return Some(path);
        }
        let value = t.get(key)?;
        self.expected(t, key, value, "a path relative to the repository root");
        None
    }

    fn severity(&mut self, t: &Table, key: &str) -> Option<Option<Severity>> {
        let word = self.word(t, key, SEVERITY_WORDS)?;
        Some(Severity::ALL.into_iter().find(|s| s.as_str() == word))
    }

    fn checks(&mut self, t: &Table) -> Checks {
        self.check_keys(t, keys("checks"));
        let mut checks = Checks::default();
        for check in Check::ALL {
            if check == Check::LargeDiff {
                continue;
            }
            if let Some(level) = self.severity(t, check.name()) {
                checks.levels.push((check, level));
            }
        }
        if let Some(value) = t.get("large_diff") {
            if value.get_ref().is_str() {
                if let Some(level) = self.severity(t, "large_diff") {
                    checks.levels.push((Check::LargeDiff, level));
                }
            } else if let Some(inner) = self.sub_table(t, "large_diff") {
                self.check_keys(&inner, LARGE_DIFF_KEYS);
                checks.large_diff_lines = self.usize(&inner, "lines", limits::DIFF_LINES);
                checks.large_diff_files = self.usize(&inner, "files", limits::DIFF_FILES);
                if let Some(level) = self.severity(&inner, "severity") {
                    checks.levels.push((Check::LargeDiff, level));
                }
            }
        }
        checks.commands = self.command_checks(t);
        checks
    }

    fn command_checks(&mut self, t: &Table) -> Option<Vec<CommandCheck>> {
        let value = t.get("command")?;
        let what = "an array of tables ([[checks.command]] with name, run, severity, timeout_secs, parser, …)";
        let Some(items) = value.get_ref().as_array() else {
            self.expected(t, "command", value, what);
            return None;
        };
        let mut out: Vec<CommandCheck> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let Some(entries) = item.get_ref().as_table() else {
                let found = self.found(item);
                self.problem(
                    item.span(),
                    t.path("command"),
                    format!("expected {what}, found an element that is {found}"),
                );
                continue;
            };
            let entry = Table {
                name: format!("checks.command[{i}]"),
                entries,
            };
            let known: Vec<&str> = COMMAND_KEYS.iter().chain(tool::KEYS).copied().collect();
            self.check_keys(&entry, &known);
            let tool = self.command_tool(&entry);
            let name = self.string(&entry, "name");
            let run = self.strings(&entry, "run", false);
            let severity = self.severity(&entry, "severity");
            let timeout_secs = self.seconds(&entry, "timeout_secs", limits::MAX_TIMEOUT_SECS);
            let missing: Vec<&str> = [("name", entry.get("name")), ("run", entry.get("run"))]
                .into_iter()
                .filter(|(_, v)| v.is_none())
                .map(|(k, _)| k)
                .collect();
            if !missing.is_empty() {
                self.problem(
                    item.span(),
                    entry.name.clone(),
                    format!("missing {}", missing.join(" and ")),
                );
            }
            let (Some(name), Some(run)) = (name, run) else {
                continue;
            };
            if out.iter().any(|c| c.name == name) {
                let span = entry.get("name").map_or(item.span(), |v| v.span());
                self.problem(
                    span,
                    entry.path("name"),
                    format!("a second check is named \"{}\"", clip(&name)),
                );
                continue;
            }
            out.push(CommandCheck {
                name,
                run,
                // An unknown word is already a problem; `off` is not a
                // severity for a check that runs only when configured.
                severity: severity.flatten(),
                timeout_secs,
                tool,
            });
            if let Some(None) = severity {
                let span = entry.get("severity").map_or(item.span(), |v| v.span());
                self.problem(
                    span,
                    entry.path("severity"),
                    "expected one of \"critical\", \"major\", \"minor\", \"nit\" \
                     (remove the entry to turn the check off)"
                        .to_string(),
                );
            }
        }
        Some(out)
    }

    fn defect(&mut self, t: &Table) -> Defect {
        self.check_keys(t, keys("defect"));
        Defect {
            max_lines: self.usize(t, "max_lines", limits::DIFF_LINES),
            max_files: self.usize(t, "max_files", limits::DIFF_FILES),
            exempt: self.globs(t, "exempt"),
        }
    }

    fn globs(&mut self, t: &Table, key: &str) -> Option<Vec<String>> {
        let globs = self.strings(t, key, true)?;
        for glob in &globs {
            if let Err(err) = globset::Glob::new(glob) {
                let span = t.get(key).map_or(0..0, |v| v.span());
                self.problem(
                    span,
                    t.path(key),
                    format!("\"{}\" is not a valid glob: {}", clip(glob), err.kind()),
                );
                return None;
            }
        }
        Some(globs)
    }

    fn hook(&mut self, t: &Table) -> Hook {
        self.check_keys(t, keys("hook"));
        Hook {
            review_on_miss: self.bool(t, "review_on_miss"),
            unknown: self.policy(t, "unknown"),
            on_error: self.policy(t, "on_error"),
            timeout_secs: self.seconds(t, "timeout_secs", limits::MAX_TIMEOUT_SECS),
            local_timeout_secs: self.seconds(t, "local_timeout_secs", limits::MAX_TIMEOUT_SECS),
        }
    }

    fn policy(&mut self, t: &Table, key: &str) -> Option<AllowOrBlock> {
        self.word(t, key, &["allow", "block"]).map(|w| {
            if w == "block" {
                AllowOrBlock::Block
            } else {
                AllowOrBlock::Allow
            }
        })
    }
}

fn keys(table: &str) -> &'static [&'static str] {
    KEYS.iter()
        .find(|(t, _)| *t == table)
        .map(|(_, k)| *k)
        .unwrap_or(&[])
}

/// The known word closest to `word`, when it is close enough to be a typo:
/// at most 2 edits and fewer than a third of the word, or the word without
/// its unit (`timeout` for `timeout_secs`).
pub fn closest<'k>(word: &str, known: impl Iterator<Item = &'k str>) -> Option<&'k str> {
    let word = word.to_ascii_lowercase();
    known
        .filter_map(|k| {
            let d = strsim::damerau_levenshtein(&word, k);
            if d <= 2 && d * 3 <= word.len().max(k.len()) {
                Some((d, k))
            } else if k.starts_with(&format!("{word}_")) {
                Some((3, k))
            } else {
                None
            }
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// The table other than `except` that has `key`.
fn elsewhere(key: &str, except: &str) -> Option<&'static str> {
    KEYS.iter()
        .find(|(t, keys)| *t != except && keys.contains(&key))
        .map(|(t, _)| *t)
}

fn quoted(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

fn clip(text: &str) -> String {
    const MAX: usize = 60;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// An integer or float value as a number.
fn number(value: &Value<'_>) -> Option<f64> {
    match value.get_ref() {
        DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .ok()
            .map(|n| n as f64),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
