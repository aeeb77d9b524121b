//! cargo's `--message-format=json`: one JSON object per line; the
//! `compiler-message` ones carry rustc's and clippy's diagnostics. The
//! primary span is the place (then, for a span inside a macro, the places
//! that expanded it), the diagnostic's code the rule (`E0308`,
//! `clippy::needless_return`), its level the level, and a `help` child
//! with a replacement the suggested fix. Summaries without a span
//! ("aborting due to …", "N warnings emitted") are not findings.

use serde_json::Value;

use super::{Collect, Level, Message, Parsed, Place, Unreadable, clip, number, string};

/// How many macro expansions are followed back to a call site.
const MAX_EXPANSIONS: usize = 16;

pub fn parse(text: &str) -> Result<Parsed, Unreadable> {
    let mut collect = Collect::default();
    let (mut objects, mut other) = (0usize, None);
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        // `cargo test --message-format=json` interleaves the tests' own
        // output: only JSON objects are cargo's.
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            other.get_or_insert_with(|| clip(line, 80));
            continue;
        };
        if !value.is_object() {
            other.get_or_insert_with(|| clip(line, 80));
            continue;
        }
        objects += 1;
        if value["reason"] != "compiler-message" {
            continue;
        }
        if let Some(message) = diagnostic(&value["message"]) {
            collect.push(message);
        }
    }
    if objects == 0 {
        if let Some(line) = other {
            return Err(Unreadable(format!(
                "expected cargo's JSON messages (run it with --message-format=json), found \"{line}\""
            )));
        }
    }
    Ok(collect.done())
}

fn diagnostic(message: &Value) -> Option<Message> {
    let text = string(&message["message"])?;
    let level = message["level"].as_str().unwrap_or("error");
    let spans = message["spans"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    if level == "failure-note" {
        return None;
    }
    if spans.is_empty() && summary(&text) {
        return None;
    }
    let level = match level {
        "warning" => Level::Warning,
        "note" | "help" => Level::Note,
        // error, and "error: internal compiler error"
        _ => Level::Error,
    };
    let primary = spans
        .iter()
        .find(|s| s["is_primary"] == true)
        .or(spans.first());
    let mut places = Vec::new();
    if let Some(span) = primary {
        places.extend(span_place(span));
        // A lint inside a macro points into the macro; its call sites, out
        // to the one the code wrote, follow.
        let mut expansion = &span["expansion"];
        for _ in 0..MAX_EXPANSIONS {
            if !expansion.is_object() {
                break;
            }
            places.extend(span_place(&expansion["span"]));
            expansion = &expansion["span"]["expansion"];
        }
    }
    Some(Message {
        level,
        places,
        rule: string(&message["code"]["code"]),
        text,
        suggestion: suggestion(message),
    })
}

fn span_place(span: &Value) -> Option<Place> {
    super::place(
        string(&span["file_name"]),
        number(&span["line_start"]),
        number(&span["column_start"]),
    )
}

/// rustc's closing counts, which repeat what the messages say.
fn summary(text: &str) -> bool {
    text.starts_with("aborting due to")
        || text.ends_with("warnings emitted")
        || text.ends_with("warning emitted")
        || text.contains("generated ") && text.contains(" warning")
}

/// The `help` child that proposes a replacement, else the first that is
/// not a link to the lint's documentation: its words, and the replacement.
fn suggestion(message: &Value) -> Option<String> {
    let children = message["children"].as_array()?;
    let helps = || children.iter().filter(|c| c["level"] == "help");
    let replacement_of = |help: &Value| {
        help["spans"]
            .as_array()
            .and_then(|spans| {
                spans
                    .iter()
                    .find_map(|s| s["suggested_replacement"].as_str())
            })
            .map(str::to_string)
    };
    let help = helps().find(|h| replacement_of(h).is_some()).or_else(|| {
        helps().find(|h| {
            h["message"]
                .as_str()
                .is_some_and(|m| !m.starts_with("for further information"))
        })
    })?;
    let mut out = string(&help["message"])?;
    if let Some(replacement) = replacement_of(help).filter(|r| r.len() <= 200 && !r.contains('\n'))
    {
        if replacement.is_empty() {
            out.push_str(" (remove it)");
        } else {
            out.push_str(&format!(": `{replacement}`"));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!("{}/fixtures/tools/rust/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap()
    }

    fn summary_of(parsed: &Parsed) -> Vec<String> {
        parsed
            .messages
            .iter()
            .map(|m| {
                let p = &m.places[0];
                format!(
                    "{:?} {}:{}:{} {} {}",
                    m.level,
                    p.file,
                    p.line.unwrap(),
                    p.column.unwrap(),
                    m.rule.as_deref().unwrap_or("-"),
                    m.text
                )
            })
            .collect()
    }

    #[test]
    fn real_clippy_warnings_once_each_with_their_lint_and_place() {
        let parsed = parse(&fixture("clippy.jsonl")).unwrap();
        assert_eq!(
            summary_of(&parsed),
            [
                "Warning src/lib.rs:15:9 unused_variables unused variable: `grace`",
                "Warning src/lib.rs:10:5 clippy::len_zero length comparison to zero",
                "Warning src/lib.rs:20:5 clippy::needless_return unneeded `return` statement",
            ]
        );
        assert_eq!(
            parsed.messages[1].suggestion.as_deref(),
            Some("using `!is_empty` is clearer and more explicit: `!fines.is_empty()`")
        );
    }

    #[test]
    fn real_clippy_with_deny_warnings_gives_errors() {
        let parsed = parse(&fixture("clippy-deny-warnings.jsonl")).unwrap();
        assert_eq!(parsed.messages.len(), 3);
        assert!(parsed.messages.iter().all(|m| m.level == Level::Error));
    }

    #[test]
    fn a_real_build_error_and_no_failure_note() {
        let parsed = parse(&fixture("build-error.jsonl")).unwrap();
        let found = summary_of(&parsed);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0].starts_with("Error src/lib.rs:5:10 E0277 cannot multiply"),
            "{found:?}"
        );
    }

    #[test]
    fn hostile_lines_are_skipped_and_garbage_is_unreadable() {
        let text = "not json\n{\"reason\":\"compiler-message\",\"message\":{\"message\":\"x\",\"level\":\"error\",\"spans\":[{\"is_primary\":true,\"file_name\":\"../../etc/passwd\",\"line_start\":-3,\"column_start\":1e99}]}}\n[1,2]\n{\"reason\":\"compiler-message\",\"message\":7}\n";
        let parsed = parse(text).unwrap();
        assert_eq!(parsed.messages.len(), 1);
        let place = &parsed.messages[0].places[0];
        // Unchecked here: `messages` refuses the path; numbers that are not
        // lines are no lines.
        assert_eq!(
            (place.file.as_str(), place.line, place.column),
            ("../../etc/passwd", None, None)
        );
        let err = parse("error: could not find `Cargo.toml`\n").unwrap_err();
        assert!(err.0.contains("--message-format=json"), "{err}");
        assert_eq!(parse("").unwrap(), Parsed::default());
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&deep).is_err());
    }

    #[test]
    fn a_lint_inside_a_macro_also_points_at_its_call_site() {
        let text = r#"{"reason":"compiler-message","message":{"message":"m","level":"warning","code":{"code":"clippy::x"},"children":[],"spans":[{"is_primary":true,"file_name":"/home/u/.cargo/registry/src/m.rs","line_start":3,"column_start":1,"expansion":{"span":{"file_name":"src/main.rs","line_start":12,"column_start":5,"expansion":null}}}]}}"#;
        let parsed = parse(text).unwrap();
        let files: Vec<&str> = parsed.messages[0]
            .places
            .iter()
            .map(|p| p.file.as_str())
            .collect();
        assert_eq!(files, ["/home/u/.cargo/registry/src/m.rs", "src/main.rs"]);
    }
}
