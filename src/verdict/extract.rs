//! Finding the JSON object in what a model really returned: bare JSON, JSON in
//! a fence after a fenced diff, prose around it, `<think>` blocks, arrays, or
//! several objects. It only locates and parses; it never repairs invalid JSON
//! (trailing commas, comments) and never judges the object's fields.

use serde_json::Value;

use super::Error;

/// The reviewer's verdict object: see `extract_with_key`, with key `verdict`.
pub fn extract(raw: &str) -> Result<Value, Error> {
    extract_with_key(raw, "verdict")
}

/// Finds the answer object in `raw`.
///
/// Every `{` or `[` outside `<think>` blocks starts a candidate, which is
/// matched to its closing bracket while skipping JSON strings, then parsed.
/// Among the objects found (objects inside a top-level array count too), the
/// last one holding `key` wins, since models that correct themselves put the
/// corrected answer last; failing that, the first object. When no candidate
/// parses, the error names the malformed object most likely meant as the
/// answer.
pub fn extract_with_key(raw: &str, key: &str) -> Result<Value, Error> {
    let text = mask_think_blocks(raw);
    let bytes = text.as_bytes();
    let mut found: Vec<Found> = Vec::new();
    let mut broken: Vec<Broken> = Vec::new();

    let mut pos = 0;
    while let Some(offset) = bytes[pos..].iter().position(|b| *b == b'{' || *b == b'[') {
        let start = pos + offset;
        match closing(bytes, start) {
            Some(end) => match serde_json::from_str::<Value>(&text[start..=end]) {
                Ok(value) => {
                    found.extend(
                        objects_in(value)
                            .into_iter()
                            .map(|value| Found { start, value }),
                    );
                    pos = end + 1;
                }
                Err(_) => {
                    broken.push(Broken {
                        start,
                        end: Some(end),
                    });
                    // Objects nested in a broken one are still found, so a
                    // verdict after a mis-scanned code fence is not lost;
                    // `enclosed` keeps them from standing in for the answer.
                    pos = start + 1;
                }
            },
            None => {
                if bytes[start] == b'{' {
                    broken.push(Broken { start, end: None });
                }
                pos = start + 1;
            }
        }
    }

    let needle = format!("\"{key}\"");
    if let Some(hit) = found.iter().rev().find(|f| f.value.get(key).is_some()) {
        return Ok(hit.value.clone());
    }
    if let Some(first) = found
        .iter()
        .find(|f| !broken.iter().any(|b| b.encloses(f.start)))
    {
        return Ok(first.value.clone());
    }
    let worst = broken
        .iter()
        .filter(|b| bytes[b.start] == b'{')
        .find(|b| text[b.start..b.end.map_or(text.len(), |e| e + 1)].contains(&needle))
        .or_else(|| {
            broken
                .iter()
                .filter(|b| bytes[b.start] == b'{')
                .max_by_key(|b| b.end.map_or(text.len(), |e| e + 1) - b.start)
        });
    match worst {
        Some(b) => Err(Error::Malformed {
            at: raw[..b.start].chars().count() + 1,
            message: serde_message(&text[b.start..]),
        }),
        None => Err(Error::NoObject {
            seen: describe(raw, &text),
        }),
    }
}

struct Found {
    start: usize,
    value: Value,
}

/// A candidate that did not parse: `end` is its matching closer, if any.
struct Broken {
    start: usize,
    end: Option<usize>,
}

impl Broken {
    fn encloses(&self, at: usize) -> bool {
        self.end.is_some_and(|end| self.start < at && at < end)
    }
}

/// The objects a parsed candidate offers: itself, or the objects of a
/// top-level array. Scalars and arrays of scalars (prose like `["a"]`) offer
/// none.
fn objects_in(value: Value) -> Vec<Value> {
    match value {
        Value::Object(_) => vec![value],
        Value::Array(items) => items.into_iter().filter(Value::is_object).collect(),
        _ => Vec::new(),
    }
}

/// Index of the bracket closing the one at `start`, skipping JSON strings
/// (with escapes); None if the brackets do not match or never close.
fn closing(bytes: &[u8], start: usize) -> Option<usize> {
    let mut stack: Vec<u8> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => stack.push(b'}'),
            b'[' => stack.push(b']'),
            b'}' | b']' => {
                if stack.pop() != Some(b) {
                    return None;
                }
                if stack.is_empty() {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// serde's own account of what is wrong, from the object's first character;
/// its line and column count from there.
fn serde_message(from_object: &str) -> String {
    let mut stream = serde_json::Deserializer::from_str(from_object).into_iter::<Value>();
    match stream.next() {
        Some(Err(e)) => e.to_string(),
        // The scan saw a closer that serde did not (or the other way round):
        // say so rather than invent a serde message.
        _ => "its brackets do not match".to_string(),
    }
}

/// Replaces `<think>…</think>` blocks with spaces of the same byte length, so
/// reasoning never yields candidates and offsets still point into `raw`. A
/// closing tag with no opening one (some servers strip the opener) hides
/// everything before it; an opening tag never closed hides the rest.
fn mask_think_blocks(raw: &str) -> String {
    const OPEN: &str = "<think>";
    const CLOSE: &str = "</think>";
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    let first_open = raw.find(OPEN);
    // No let-chains: the crate's rust-version (1.85) predates them.
    if let Some(close) = raw.find(CLOSE) {
        if first_open.is_none_or(|open| close < open) {
            out.push_str(&blank(&raw[..close + CLOSE.len()]));
            rest = &raw[close + CLOSE.len()..];
        }
    }
    while let Some(open) = rest.find(OPEN) {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        match after[OPEN.len()..].find(CLOSE) {
            Some(close) => {
                let len = OPEN.len() + close + CLOSE.len();
                out.push_str(&blank(&after[..len]));
                rest = &after[len..];
            }
            None => {
                out.push_str(&blank(after));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

fn blank(s: &str) -> String {
    " ".repeat(s.len())
}

/// What the answer held, for an error that says what was seen.
fn describe(raw: &str, masked: &str) -> String {
    let visible = masked.trim();
    if raw.trim().is_empty() {
        return "an empty answer".to_string();
    }
    if visible.is_empty() {
        return "only a <think> block, no answer after it".to_string();
    }
    let start: String = visible.chars().take(80).collect();
    let more = if visible.chars().count() > 80 {
        "…"
    } else {
        ""
    };
    format!(
        "{} characters of text beginning {:?}{more}",
        visible.chars().count(),
        start
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const BARE: &str = r#"{"verdict": "approve", "expectations": "e", "criteria": [], "spec_verification": [], "issues": []}"#;

    #[test]
    fn bare_json() {
        let v = extract(BARE).unwrap();
        assert_eq!(v["verdict"], "approve");
    }

    #[test]
    fn json_fence_after_a_fenced_diff() {
        let raw = r#"I reviewed this diff:

```diff
--- a/src/catalog.rs
+++ b/src/catalog.rs
@@ -10,3 +10,6 @@ impl Catalog {
+    pub fn search(&self, q: &str) -> Vec<&Book> {
+        if q == "\"" { return vec![]; }
+        self.books.iter().filter(|b| b.title.contains(q)).collect()
```

```json
{
  "verdict": "request_changes",
  "expectations": "Search by title",
  "criteria": [{"id": "AC-1", "status": "unmet", "evidence": "src/catalog.rs:12"}],
  "spec_verification": [],
  "issues": [{"severity": "major", "file": "src/catalog.rs", "line": 12, "message": "no availability", "suggestion": "add status"}]
}
```
"#;
        let v = extract(raw).unwrap();
        assert_eq!(v["verdict"], "request_changes");
        assert_eq!(v["issues"][0]["line"], 12);
    }

    #[test]
    fn diff_with_an_unpaired_quote_before_the_answer() {
        let raw = r#"```diff
+    if c == '"' {
+        depth += 1;
-    } else if c == '{' {
```
Verdict:
```json
{"verdict": "approve", "expectations": "quotes are tracked", "criteria": [], "spec_verification": [], "issues": []}
```
Done."#;
        assert_eq!(extract(raw).unwrap()["expectations"], "quotes are tracked");
    }

    #[test]
    fn prose_before_and_after() {
        let raw = format!(
            "Here is my review of task 3.\n\n{BARE}\n\nLet me know if you'd like more detail {{or not}}."
        );
        assert_eq!(extract(&raw).unwrap()["verdict"], "approve");
    }

    #[test]
    fn think_block_is_ignored_even_with_json_inside() {
        let raw = format!(
            "<think>\nMaybe {{\"verdict\": \"request_changes\"}} fits? No, the tests pass.\n</think>\n{BARE}"
        );
        assert_eq!(extract(&raw).unwrap()["verdict"], "approve");

        // Some servers drop the opening tag.
        let raw = format!("reasoning {{\"verdict\": \"request_changes\"}}\n</think>\n{BARE}");
        assert_eq!(extract(&raw).unwrap()["verdict"], "approve");
    }

    #[test]
    fn braces_and_fences_inside_strings() {
        let raw = r#"```json
{"verdict": "request_changes", "expectations": "x", "criteria": [], "spec_verification": [],
 "issues": [{"severity": "minor", "message": "use `match` instead: ```rust\nmatch x { _ => {} }\n``` and \"}\" too", "suggestion": "{ brace"}]}
```"#;
        let v = extract(raw).unwrap();
        assert_eq!(v["verdict"], "request_changes");
        assert!(
            v["issues"][0]["message"]
                .as_str()
                .unwrap()
                .contains("match x { _ => {} }")
        );
    }

    #[test]
    fn top_level_array_takes_the_object_with_the_key() {
        let raw = r#"[{"note": "first"}, {"verdict": "approve", "issues": []}]"#;
        assert_eq!(extract(raw).unwrap()["verdict"], "approve");
        let raw = r#"[{"a": 1}, {"b": 2}]"#;
        assert_eq!(extract(raw).unwrap(), json!({"a": 1}));
    }

    #[test]
    fn of_two_objects_the_one_with_the_key_wins() {
        let raw = r#"Context: {"task": 3, "files": 2}
Verdict: {"verdict": "approve", "issues": []}"#;
        assert_eq!(extract(raw).unwrap()["verdict"], "approve");

        let raw = r#"{"status": "aligned", "summary": "fits the vision", "flags": []}
{"note": "done"}"#;
        let v = extract_with_key(raw, "status").unwrap();
        assert_eq!(v["status"], "aligned");
    }

    #[test]
    fn trailing_commas_are_not_repaired() {
        let raw = "Answer:\n{\"verdict\": \"approve\", \"issues\": [{\"severity\": \"nit\", \"message\": \"m\"},],}";
        match extract(raw) {
            Err(Error::Malformed { at, message }) => {
                assert_eq!(at, 9, "the object starts at the 9th character");
                assert!(message.contains("trailing comma"), "{message}");
            }
            other => panic!("expected malformed, got {other:?}"),
        }
    }

    #[test]
    fn comments_are_not_repaired() {
        let raw = "{\n  // it's my verdict\n  \"verdict\": \"approve\"\n}";
        let err = extract(raw).unwrap_err();
        assert!(matches!(err, Error::Malformed { at: 1, .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("JSON object at char 1 is malformed: ")
        );
    }

    #[test]
    fn nothing_json_like() {
        let err = extract("I approve this change, it looks great.").unwrap_err();
        assert_eq!(
            err.to_string(),
            "no JSON object found in the model's answer: saw 38 characters of text beginning \"I approve this change, it looks great.\""
        );
        let err = extract("  \n").unwrap_err();
        assert!(err.to_string().ends_with("saw an empty answer"));
        let err = extract("<think>{\"verdict\": \"approve\"}").unwrap_err();
        assert!(err.to_string().contains("only a <think> block"), "{err}");
    }

    #[test]
    fn char_position_counts_characters_not_bytes() {
        let raw = "Résumé → {\"verdict\": \"approve\",}";
        match extract(raw).unwrap_err() {
            Error::Malformed { at, .. } => assert_eq!(at, 10),
            other => panic!("{other:?}"),
        }
    }
}
