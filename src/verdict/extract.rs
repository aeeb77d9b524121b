//! Finding the JSON object in what a model really returned: bare JSON, JSON in
//! a fence after a fenced diff, prose around it, `<think>` blocks, arrays, or
//! several objects. It only locates and parses; it never repairs invalid JSON
//! (trailing commas, comments) and never judges the object's fields.
//!
//! It must never guess: two answer objects that differ, or an answer that
//! holds a key twice with different values, are ambiguous, not "the last one
//! wins". And it must never hang: its work is linear in the length of the
//! answer, whatever the answer holds.

use memchr::memmem;
use serde_json::Value;

use super::Error;
use super::brackets::Brackets;
use super::strict::Strict;

/// The JSON parser may read this many bytes per byte of answer, plus
/// `PARSE_FLOOR`, before extraction gives up; each attempt also costs
/// `PARSE_ATTEMPT`, what setting up a parse and unwinding its error take. A
/// real answer costs one to three reads (the object, a broken wrapper around
/// it) and an attempt per bracket pair its prose and code close; only an
/// answer that closes a pair every 16 bytes or so, over megabytes, reaches
/// the limit, and it is refused rather than read for seconds.
const PARSE_FACTOR: usize = 8;
const PARSE_FLOOR: usize = 1 << 20;
const PARSE_ATTEMPT: usize = 128;

/// The reviewer's verdict object: see `extract_with_key`, with key `verdict`.
pub fn extract(raw: &str) -> Result<Value, Error> {
    extract_with_key(raw, "verdict")
}

/// Finds the answer object in `raw`.
///
/// Every `{` or `[` outside `<think>` blocks starts a candidate, which is
/// matched to its closing bracket while skipping JSON strings, then parsed;
/// a candidate that parses is not searched further, nor is one nested too
/// deep for the parser. The objects found are the parsed objects and the
/// objects of a parsed top-level array. The answer is the object holding
/// `key`; several that differ, or one that holds a key twice with different
/// values, make the answer ambiguous. Failing an object with `key`, the
/// first object that no broken candidate encloses. When no candidate
/// parses, the error names the malformed object most likely meant as the
/// answer.
pub fn extract_with_key(raw: &str, key: &str) -> Result<Value, Error> {
    if raw.len() >= u32::MAX as usize {
        return Err(Error::Unreadable {
            reason: format!("the answer is {} bytes long", raw.len()),
        });
    }
    let text = mask_think_blocks(raw);
    let bytes = text.as_bytes();
    let needle = format!("\"{key}\"");
    let mut pick = Pick {
        key,
        needles: memmem::find_iter(bytes, needle.as_bytes()).collect(),
        len: bytes.len(),
        ..Pick::default()
    };
    let budget = bytes
        .len()
        .saturating_mul(PARSE_FACTOR)
        .saturating_add(PARSE_FLOOR);
    let mut spent = 0usize;
    let mut resume = 0;
    let brackets = Brackets::scan(bytes);
    for scan in brackets.all() {
        let start = scan.open();
        if start < resume {
            continue;
        }
        let Some(end) = scan.close() else {
            if !pick.settled_unclosed {
                pick.broken(bytes, start, None);
            }
            continue;
        };
        let candidate = &text[start..=end];
        // Parsed into plain values: duplicate keys are looked for only in
        // the objects that may be the answer, when the choice is made.
        match serde_json::from_str::<Value>(candidate) {
            Ok(value) => {
                spent += candidate.len() + PARSE_ATTEMPT;
                pick.found(start, end, value);
                resume = end + 1;
            }
            Err(err) => {
                spent += consumed(candidate, &err) + PARSE_ATTEMPT;
                pick.broken(bytes, start, Some(end));
                if err.to_string().starts_with("recursion limit exceeded") {
                    // Nothing nested this deep is an answer; the brackets
                    // inside would each fail the same way, at great cost.
                    resume = end + 1;
                }
            }
        }
        if spent > budget {
            return Err(Error::Unreadable {
                reason: format!(
                    "{} bytes of candidate JSON parsed in a {}-byte answer, and it is still not clear which object is the answer",
                    spent,
                    bytes.len()
                ),
            });
        }
    }
    pick.finish(raw, &text)
}

/// How far the parser read into `candidate` before `err`: the error's line
/// and column, as an offset.
fn consumed(candidate: &str, err: &serde_json::Error) -> usize {
    let line_start = match err.line() {
        0 => return candidate.len(),
        1 => 0,
        line => match memchr::memchr_iter(b'\n', candidate.as_bytes()).nth(line - 2) {
            Some(newline) => newline + 1,
            None => return candidate.len(),
        },
    };
    (line_start + err.column()).min(candidate.len())
}

/// The choice among candidates, made as they are met, so no list of values
/// is kept: a hostile answer may hold millions.
#[derive(Default)]
struct Pick<'k> {
    key: &'k str,
    /// Offsets of `"key"` in the text, ascending, and the first one not
    /// before the last broken candidate (candidates come in order).
    needles: Vec<usize>,
    next_needle: usize,
    len: usize,
    /// The first object holding the key, and how many there are.
    holder: Option<Value>,
    holders: usize,
    /// The text of every candidate that gave a holder, `(start, end)`
    /// inclusive, for the duplicate-key check.
    holder_spans: Vec<(usize, usize)>,
    /// The first holder that differs from the first one.
    differs: Option<usize>,
    /// The first object without the key that no broken candidate encloses,
    /// and the text it came from.
    plain: Option<(Value, (usize, usize))>,
    /// The furthest closer of a broken candidate: objects starting before
    /// it are enclosed by one.
    broken_reach: usize,
    /// The first broken `{` candidate whose text holds `"key"`, and the
    /// longest one: `(start, end)` with `end` exclusive.
    broken_with_key: Option<(usize, usize)>,
    broken_longest: Option<(usize, usize)>,
    /// Set once no later unclosed candidate can change the two above: an
    /// unclosed `{` reaches the end of the text, so the first one is the
    /// longest of them, and holds the key if any later one does.
    settled_unclosed: bool,
}

impl Pick<'_> {
    fn found(&mut self, start: usize, end: usize, value: Value) {
        for object in objects_in(value) {
            if object.get(self.key).is_some() {
                self.holders += 1;
                if self.holder_spans.last() != Some(&(start, end)) {
                    self.holder_spans.push((start, end));
                }
                match &self.holder {
                    None => self.holder = Some(object),
                    Some(first) => {
                        if *first != object && self.differs.is_none() {
                            self.differs = Some(start);
                        }
                    }
                }
            } else if self.plain.is_none() && start >= self.broken_reach {
                self.plain = Some((object, (start, end)));
            }
        }
    }

    fn broken(&mut self, bytes: &[u8], start: usize, end: Option<usize>) {
        if let Some(end) = end {
            self.broken_reach = self.broken_reach.max(end + 1);
        }
        if bytes[start] != b'{' {
            return;
        }
        let stop = end.map_or(self.len, |e| e + 1);
        if self.broken_with_key.is_none() {
            while self
                .needles
                .get(self.next_needle)
                .is_some_and(|&n| n < start)
            {
                self.next_needle += 1;
            }
            let holds_key = self
                .needles
                .get(self.next_needle)
                .is_some_and(|&n| n + self.key.len() + 2 <= stop);
            if holds_key {
                self.broken_with_key = Some((start, stop));
            }
        }
        if self
            .broken_longest
            .is_none_or(|(s, e)| stop - start > e - s)
        {
            self.broken_longest = Some((start, stop));
        }
        if end.is_none()
            && (self.broken_with_key.is_some() || self.next_needle >= self.needles.len())
        {
            self.settled_unclosed = true;
        }
    }

    fn finish(self, raw: &str, text: &str) -> Result<Value, Error> {
        let at = |offset: usize| raw[..offset].chars().count() + 1;
        if let Some(value) = self.holder {
            let first = self.holder_spans[0].0;
            if let Some(other) = self.differs {
                return Err(Error::Ambiguous {
                    reason: format!(
                        "it holds {} objects with a \"{}\" key that differ (at chars {} and {}): give exactly one",
                        self.holders,
                        self.key,
                        at(first),
                        at(other)
                    ),
                });
            }
            // Equal values may still come from texts that hold a key twice
            // (the last value wins in a plain parse): each distinct text is
            // read again, strictly.
            let mut checked: Option<&str> = None;
            for &(start, end) in &self.holder_spans {
                let candidate = &text[start..=end];
                if checked == Some(candidate) {
                    continue;
                }
                no_duplicate_keys(candidate, at(start))?;
                checked = Some(candidate);
            }
            return Ok(value);
        }
        if let Some((value, (start, end))) = self.plain {
            no_duplicate_keys(&text[start..=end], at(start))?;
            return Ok(value);
        }
        match self.broken_with_key.or(self.broken_longest) {
            Some((start, _)) => Err(Error::Malformed {
                at: at(start),
                message: serde_message(&text[start..]),
            }),
            None => Err(Error::NoObject {
                seen: describe(raw, text),
            }),
        }
    }
}

/// A candidate that parsed as a value, read again strictly: a key held
/// twice with different values makes the answer ambiguous.
fn no_duplicate_keys(candidate: &str, at: usize) -> Result<(), Error> {
    let strict: Strict = serde_json::from_str(candidate).map_err(|e| Error::Malformed {
        at,
        message: e.to_string(),
    })?;
    if strict.conflicts.is_empty() {
        return Ok(());
    }
    Err(Error::Ambiguous {
        reason: format!(
            "the object at char {at} holds a key twice with different values: {}",
            strict.describe_conflicts().join("; ")
        ),
    })
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

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// Replaces `<think>…</think>` blocks with spaces of the same byte length, so
/// reasoning never yields candidates and offsets still point into `raw`.
///
/// An opening tag counts only at the start of a line (after blanks): a JSON
/// string cannot hold a line break, so a tag inside one is never taken for
/// reasoning. A block ends at the next closing tag, wherever it is; one
/// never closed hides the rest. A closing tag before any opening one (some
/// servers strip the opener) hides everything before it, when nothing but
/// blanks follows it on its line.
fn mask_think_blocks(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut hide: Vec<(usize, usize)> = Vec::new();
    let openers = memmem::find_iter(bytes, OPEN.as_bytes()).filter(|&p| starts_line(bytes, p));
    let mut from = 0;
    let mut openers = openers.peekable();
    if let Some(close) = memmem::find(bytes, CLOSE.as_bytes()) {
        let end = close + CLOSE.len();
        if openers.peek().is_none_or(|&open| close < open) && ends_line(bytes, end) {
            hide.push((0, end));
            from = end;
        }
    }
    for open in openers {
        if open < from {
            continue;
        }
        let after = open + OPEN.len();
        let end = memmem::find(&bytes[after..], CLOSE.as_bytes())
            .map_or(bytes.len(), |c| after + c + CLOSE.len());
        hide.push((open, end));
        from = end;
        if end == bytes.len() {
            break;
        }
    }
    let mut out = String::with_capacity(raw.len());
    let mut kept = 0;
    for (start, end) in hide {
        out.push_str(&raw[kept..start]);
        out.push_str(&" ".repeat(end - start));
        kept = end;
    }
    out.push_str(&raw[kept..]);
    out
}

/// Only blanks between the start of the line and `at`. The blanks scanned
/// back over end at the previous tag or text, so calls for successive tags
/// scan each byte once in all.
fn starts_line(bytes: &[u8], at: usize) -> bool {
    bytes[..at]
        .iter()
        .rev()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r'))
        .is_none_or(|&b| b == b'\n')
}

/// Only blanks between `at` and the end of the line.
fn ends_line(bytes: &[u8], at: usize) -> bool {
    bytes[at..]
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\r'))
        .is_none_or(|&b| b == b'\n')
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
    let more = if visible.chars().nth(80).is_some() {
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

    #[test]
    fn a_think_tag_inside_a_json_string_is_text() {
        let raw = r#"{"verdict": "approve", "expectations": "e", "criteria": [], "spec_verification": [], "issues": [{"severity": "nit", "message": "the model printed <think> in a log line, and </think> too"}]}"#;
        let v = extract(raw).unwrap();
        assert!(
            v["issues"][0]["message"]
                .as_str()
                .unwrap()
                .contains("<think> in a log line")
        );
        // Indented under a line of its own, it is reasoning again.
        let raw = format!("  <think>\n{{\"verdict\": \"request_changes\"}}\n  </think>\n{BARE}");
        assert_eq!(extract(&raw).unwrap()["verdict"], "approve");
    }

    #[test]
    fn two_answer_objects_that_differ_are_ambiguous() {
        let raw = r#"First draft: {"verdict": "request_changes", "issues": []}
On reflection: {"verdict": "approve", "issues": []}"#;
        let err = extract(raw).unwrap_err();
        assert!(matches!(err, Error::Ambiguous { .. }), "{err:?}");
        let text = err.to_string();
        assert!(
            text.contains("2 objects with a \"verdict\" key that differ (at chars 14 and 74)"),
            "{text}"
        );
        // In a top-level array too.
        let raw = r#"[{"verdict": "approve"}, {"verdict": "request_changes"}]"#;
        assert!(matches!(extract(raw), Err(Error::Ambiguous { .. })));
        // The same object twice is one answer.
        let raw = format!("{BARE}\n\nAgain, in a fence:\n```json\n{BARE}\n```");
        assert_eq!(extract(&raw).unwrap()["verdict"], "approve");
    }

    #[test]
    fn a_key_held_twice_with_different_values_is_ambiguous() {
        let raw = r#"{"verdict": "request_changes", "expectations": "e", "criteria": [], "spec_verification": [], "issues": [], "verdict": "approve"}"#;
        let err = extract(raw).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the model's answer is ambiguous: the object at char 1 holds a key twice with different values: verdict: the key appears twice with different values (\"request_changes\" and \"approve\")"
        );
        let guardian = r#"{"status": "rejected", "summary": "s", "status": "aligned"}"#;
        assert!(matches!(
            extract_with_key(guardian, "status"),
            Err(Error::Ambiguous { .. })
        ));
        let same = r#"{"status": "aligned", "summary": "s", "status": "aligned"}"#;
        assert_eq!(
            extract_with_key(same, "status").unwrap()["status"],
            "aligned"
        );
    }

    /// A linear pass over `text` doing per byte about what a scan does:
    /// the yardstick extraction is measured against, built and run the same
    /// way (unoptimised in a test build, on a machine however loaded).
    fn yardstick(text: &str) -> usize {
        let bytes = text.as_bytes();
        let mut opens: Vec<u32> = Vec::new();
        let mut quotes = 0;
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'{' | b'[' => opens.push(i as u32),
                b'"' | b'\\' => quotes += 1,
                b'}' | b']' => {
                    opens.pop();
                }
                _ => {}
            }
            i += 1;
        }
        opens.len() + quotes
    }

    /// Hostile answers of several megabytes: extraction stays linear (a scan
    /// per bracket took 25 s on 80,000 `{` and never finished on 5 MB). In
    /// an optimised build (`cargo test --release --lib hostile`) the slowest
    /// shape, 5 MB of `{`, takes 0.3 s and the others under 0.2 s; measured
    /// against one linear pass over the same answer, run the same way, the
    /// bound holds on a loaded machine and in an unoptimised build alike,
    /// where a quadratic scan would take a million passes.
    #[test]
    fn hostile_answers_are_read_in_linear_time() {
        const MB5: usize = 5 << 20;
        let answers: Vec<(&str, String)> = vec![
            ("80,000 {", "{".repeat(80_000)),
            ("5 MB of {", "{".repeat(MB5)),
            (
                "5 MB of [ then ]",
                format!("{}{}", "[".repeat(MB5 / 2), "]".repeat(MB5 / 2)),
            ),
            ("5 MB of nested keys", "{\"a\":".repeat(MB5 / 5)),
            (
                "5 MB of escaped quotes",
                format!("{{\"{}", "{\\\"".repeat(MB5 / 3)),
            ),
            ("5 MB of empty objects", "{}".repeat(MB5 / 2)),
            (
                "5 MB of answer objects",
                format!("{} ", r#"{"verdict": "approve"}"#).repeat(MB5 / 23),
            ),
            ("5 MB of think tags", "<think>\n".repeat(MB5 / 8)),
            ("5 MB of closing think tags", "</think> {".repeat(MB5 / 10)),
            (
                "an answer after 5 MB of prose braces",
                format!(
                    "{}{BARE}",
                    "Use { and } and \" with care. ".repeat(MB5 / 30)
                ),
            ),
        ];
        for (name, raw) in &answers {
            let started = std::time::Instant::now();
            std::hint::black_box(yardstick(std::hint::black_box(raw)));
            let pass = started.elapsed();
            let started = std::time::Instant::now();
            let result = extract(raw);
            let took = started.elapsed();
            eprintln!(
                "{name}: {took:?}, {:.1} linear passes",
                took.as_secs_f64() / pass.as_secs_f64()
            );
            let limit = pass * 100 + std::time::Duration::from_millis(100);
            assert!(
                took < limit,
                "{name}: {took:?}, {:.0} times one linear pass ({pass:?}): {result:?}",
                took.as_secs_f64() / pass.as_secs_f64(),
                result = result.as_ref().map(|_| "ok").map_err(ToString::to_string)
            );
        }
        assert!(
            extract(&answers[9].1).is_ok(),
            "the real answer is still found"
        );
    }
}
