//! The safety net: the same rules, run once more over the bytes that leave
//! speed or are written (every prompt, the corrective retry, the model's
//! answer, reports, log lines, task fields, the terminal), because
//! redaction where a text is read only protects the paths someone thought
//! of. Whatever the net finds is replaced before the bytes go anywhere; the
//! caller turns each `Leak` into a critical `secret` finding, since it means
//! a source escaped redaction.
//!
//! The net reads every text as prose (quoted assignments, provider formats,
//! private keys, credentials in URLs). Where a text is read, its own context
//! may judge more leniently: an assignment in test code is a fixture. Those
//! values are remembered here (`allow`) so the net does not contradict the
//! scan that knew the file; nothing else is exempt.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use super::{Context, Redacted};

/// At most this many fixture values are remembered: a diff with more
/// test-code assignments than this has the rest judged as prose.
const MAX_ALLOWED: usize = 10_000;

/// A secret the net found: its rule, and where, as the caller names it
/// ("the review prompt, line 40", "the report's `notices[2]`").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leak {
    pub rule: &'static str,
    pub place: String,
}

fn allowed() -> &'static Mutex<HashSet<String>> {
    static ALLOWED: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    ALLOWED.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Remember values the scan of their own file judged not secret (test
/// fixtures), so the net leaves them alone wherever they are quoted.
pub fn allow<I: IntoIterator<Item = String>>(values: I) {
    // A poisoned lock only loses the allowance: the net then redacts more.
    if let Ok(mut set) = allowed().lock() {
        for v in values {
            if set.len() >= MAX_ALLOWED {
                break;
            }
            set.insert(v);
        }
    }
}

/// Scan `text` and replace what is found; `found` holds 1-based lines.
pub fn text(text: &str) -> Redacted {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut scan = super::scan(&lines, Context::PROSE);
    if scan.spans.is_empty() {
        return Redacted {
            text: text.to_string(),
            found: Vec::new(),
        };
    }
    if let Ok(set) = allowed().lock() {
        if !set.is_empty() {
            let fixture = |line: usize, start: usize, end: usize, rule: &str| {
                rule == super::assign::RULE
                    && lines
                        .get(line)
                        .and_then(|l| l.get(start..end))
                        .is_some_and(|v| set.contains(v))
            };
            let kept: Vec<(usize, &str)> = scan
                .spans
                .iter()
                .filter(|s| fixture(s.line, s.start, s.end, s.rule))
                .map(|s| (s.line, s.rule))
                .collect();
            scan.spans
                .retain(|s| !fixture(s.line, s.start, s.end, s.rule));
            for (line, rule) in kept {
                if let Some(i) = scan
                    .found
                    .iter()
                    .position(|f| f.line == line && f.rule == rule)
                {
                    scan.found.remove(i);
                }
            }
        }
    }
    if scan.spans.is_empty() {
        return Redacted {
            text: text.to_string(),
            found: Vec::new(),
        };
    }
    let mut owned: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    super::apply(&mut owned, &scan);
    Redacted {
        text: owned.join("\n"),
        found: scan
            .found
            .iter()
            .map(|f| (f.line as u32 + 1, f.rule))
            .collect(),
    }
}

/// `text`, redacted in place; each secret found is a leak at `place`,
/// with its line when the text has several.
pub fn redact_in_place(value: &mut String, place: &str) -> Vec<Leak> {
    let out = text(value);
    if out.found.is_empty() {
        return Vec::new();
    }
    let several = value.contains('\n');
    *value = out.text;
    out.found
        .into_iter()
        .map(|(line, rule)| Leak {
            rule,
            place: if several {
                format!("{place}, line {line}")
            } else {
                place.to_string()
            },
        })
        .collect()
}

/// Every string of a JSON value (keys included), redacted in place; each
/// leak names its path (`review.issues[2].message`) under `place`.
pub fn json(value: &mut Value, place: &str) -> Vec<Leak> {
    let mut leaks = Vec::new();
    walk(value, &mut String::new(), place, &mut leaks);
    leaks
}

fn walk(value: &mut Value, path: &mut String, place: &str, leaks: &mut Vec<Leak>) {
    let here = |path: &str| {
        if path.is_empty() {
            place.to_string()
        } else {
            format!("{place} `{path}`")
        }
    };
    match value {
        Value::String(s) => leaks.extend(redact_in_place(s, &here(path))),
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(item, path, place, leaks);
                path.truncate(len);
            }
        }
        Value::Object(map) => {
            // Keys are text too; one holding a secret is renamed. The map
            // is rebuilt in its order (removing a key from an ordered map
            // moves its last key into the gap).
            for (mut name, mut item) in std::mem::take(map) {
                let found = redact_in_place(&mut name, &here(path));
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&name);
                walk(&mut item, path, place, leaks);
                path.truncate(len);
                map.insert(name, item);
                leaks.extend(found);
            }
        }
        _ => {}
    }
}

/// Text about to be printed: JSON is redacted string by string (its
/// escapes hide quotes and line breaks from a plain scan) and printed
/// again only when something changed; anything else line by line.
pub fn printed(out: &str) -> std::borrow::Cow<'_, str> {
    let trimmed = out.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        if let Ok(mut value) = serde_json::from_str::<Value>(out) {
            if json(&mut value, "output").is_empty() {
                return std::borrow::Cow::Borrowed(out);
            }
            let pretty = out.trim_end().contains('\n');
            let mut again = if pretty {
                serde_json::to_string_pretty(&value)
            } else {
                serde_json::to_string(&value)
            }
            .unwrap_or_default();
            if out.ends_with('\n') {
                again.push('\n');
            }
            return std::borrow::Cow::Owned(again);
        }
    }
    let out_text = text(out);
    if out_text.found.is_empty() {
        std::borrow::Cow::Borrowed(out)
    } else {
        std::borrow::Cow::Owned(out_text.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_clean(s: &str) -> bool {
        text(s).found.is_empty()
    }

    const AWS: &str = "AKIAQYLPMN5HHHFPZAM2";

    #[test]
    fn a_text_is_redacted_and_each_leak_located() {
        let mut s = format!("line one\nkey {AWS}\n");
        let leaks = redact_in_place(&mut s, "the review prompt");
        assert_eq!(s, "line one\nkey [REDACTED:aws-access-key]\n");
        assert_eq!(
            leaks,
            vec![Leak {
                rule: "aws-access-key",
                place: "the review prompt, line 2".to_string()
            }]
        );
    }

    #[test]
    fn a_json_object_keeps_its_keys_in_order() {
        let mut v = serde_json::json!({"d": 1, "c": {"z": 1, "a": 2, "m": 3}, "b": format!("{AWS}"), "a": 4});
        json(&mut v, "the report");
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&v), ["d", "c", "b", "a"]);
        assert_eq!(keys(&v["c"]), ["z", "a", "m"]);
        assert_eq!(v["b"], "[REDACTED:aws-access-key]");
    }

    #[test]
    fn every_string_of_a_json_value_is_redacted_with_its_path() {
        let mut v = serde_json::json!({
            "notices": ["fine", format!("the key is {AWS}")],
            "review": {"issues": [{"message": "password = \"Zk3Xq9Lm2Vw8\""}]},
            AWS: 1,
            "n": 3
        });
        let leaks = json(&mut v, "the report");
        let places: Vec<&str> = leaks.iter().map(|l| l.place.as_str()).collect();
        assert_eq!(
            places,
            [
                "the report `notices[1]`",
                "the report `review.issues[0].message`",
                "the report",
            ]
        );
        let text = v.to_string();
        assert!(
            !text.contains(AWS) && !text.contains("Zk3Xq9Lm2Vw8"),
            "{text}"
        );
        assert_eq!(v["[REDACTED:aws-access-key]"], 1);
    }

    #[test]
    fn printed_json_keeps_its_shape_and_plain_text_its_lines() {
        let clean = "{\n  \"a\": 1\n}\n";
        assert!(matches!(printed(clean), std::borrow::Cow::Borrowed(_)));
        let out = printed(&format!("{{\n  \"a\": \"{AWS}\"\n}}\n")).into_owned();
        assert_eq!(out, "{\n  \"a\": \"[REDACTED:aws-access-key]\"\n}\n");
        // Escaped quotes hide an assignment from a plain scan, not from this.
        let escaped = serde_json::to_string(&serde_json::json!({
            "diff": "token = \"R8fNq2Lx7TbV4mKc9WzP\""
        }))
        .unwrap();
        assert!(!printed(&escaped).contains("R8fNq2Lx7TbV4mKc9WzP"));
        let line = printed(&format!("error: {AWS} is not a branch\n")).into_owned();
        assert_eq!(line, "error: [REDACTED:aws-access-key] is not a branch\n");
    }

    #[test]
    fn fixtures_judged_where_they_were_read_are_left_alone() {
        let fixture = "u7Qm2Zr9Kx4Lw1";
        let quoted = format!("password = \"{fixture}\"");
        assert!(!is_clean(&quoted));
        allow([fixture.to_string()]);
        assert!(is_clean(&quoted));
        // Only as an assignment's value: a token format is never a fixture.
        allow([AWS.to_string()]);
        assert!(!is_clean(&format!("key = \"{AWS}\"")));
    }
}
