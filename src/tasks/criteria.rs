//! Acceptance criteria in every dialect the orchestrator writes, read into
//! one list with stable ids.
//!
//! A criterion may come as an array item (`{criterion, verify_by}` or a
//! string) or as one line of a string of lines. How to verify it may be a
//! trailing `[verify: X]` or `[verify_by: X]`, a leading `[X]` tag
//! (`- [test] …`), or `verify_by: X` alone on the line after it, which belongs
//! to that criterion and is never a criterion itself. A criterion that
//! carries its own id (`[AC-03] …`) keeps it; the others are numbered AC-1,
//! AC-2, … by position, skipping ids already taken, so every id is unique.
//! This module only reads text: it knows nothing of files or JSON paths.

use std::collections::HashSet;

use serde_json::Value;

/// One acceptance criterion with its stable id (`AC-1`, or its own `AC-03`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Criterion {
    pub id: String,
    pub text: String,
    pub verify_by: Option<String>,
}

impl Criterion {
    /// Criteria from one string of lines: blank lines dropped, leading
    /// bullets, numbers and checkboxes stripped, every verify dialect read.
    /// A string holding a JSON array (an orchestrator that serialised its
    /// array into the field) is read as that array.
    pub fn parse_lines(text: &str) -> Vec<Criterion> {
        if text.trim_start().starts_with('[') {
            if let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text) {
                if let Ok(criteria) = from_array(&items) {
                    return criteria;
                }
            }
        }
        let mut raws: Vec<Raw> = Vec::new();
        let bulleted = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| strip_bullet(l).len() < l.trim().len());
        for line in text.lines() {
            let trimmed = line.trim();
            if trimmed.is_empty() {
                continue;
            }
            if let Some(how) = verify_line(trimmed) {
                attach_verify(&mut raws, how);
                continue;
            }
            // In a bulleted list, an indented line without a bullet continues
            // the criterion above it (a wrapped line), it does not start one.
            let indented = line.starts_with([' ', '\t']);
            let unbulleted = strip_bullet(trimmed).len() == trimmed.len();
            if bulleted && indented && unbulleted {
                if let Some(last) = raws.last_mut() {
                    last.continue_with(trimmed);
                    continue;
                }
            }
            raws.push(Raw::parse(strip_bullet(trimmed)));
        }
        number(raws)
    }
}

/// An item of a criteria array that is neither a string nor an object with a
/// `criterion` string; the caller names the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadItem {
    /// Index in the array, and the key within the item if it is the culprit.
    pub index: usize,
    pub key: Option<&'static str>,
}

/// Criteria from a JSON array of strings and `{criterion, verify_by, id}`
/// objects (an `id` or a `[AC-03]` prefix is the criterion's own id).
pub fn from_array(items: &[Value]) -> Result<Vec<Criterion>, BadItem> {
    let mut raws: Vec<Raw> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        match item {
            Value::String(line) => {
                let trimmed = line.trim();
                match verify_line(trimmed) {
                    Some(how) => attach_verify(&mut raws, how),
                    None => raws.push(Raw::parse(strip_bullet(trimmed))),
                }
            }
            Value::Object(object) => {
                let mut raw = match object.get("criterion") {
                    Some(Value::String(s)) => Raw::parse(s.trim()),
                    _ => {
                        return Err(BadItem {
                            index,
                            key: Some("criterion"),
                        });
                    }
                };
                match object.get("verify_by") {
                    None | Some(Value::Null) => {}
                    Some(Value::String(v)) if v.trim().is_empty() => {}
                    Some(Value::String(v)) => raw.verify_by = Some(v.trim().to_string()),
                    Some(_) => {
                        return Err(BadItem {
                            index,
                            key: Some("verify_by"),
                        });
                    }
                }
                match object.get("id") {
                    Some(Value::String(id)) if !id.trim().is_empty() => {
                        raw.own_id = Some(id.trim().to_string());
                    }
                    _ => {}
                }
                raws.push(raw);
            }
            _ => return Err(BadItem { index, key: None }),
        }
    }
    Ok(number(raws))
}

/// A criterion as read, before ids are given out.
#[derive(Debug)]
struct Raw {
    own_id: Option<String>,
    text: String,
    verify_by: Option<String>,
}

impl Raw {
    /// One criterion's text without its bullet: leading `[AC-03]` ids,
    /// `[test]` tags and `[ ]` checkboxes in any order, then the text, then a
    /// trailing `[verify: X]`. The trailing form wins over a tag.
    fn parse(text: &str) -> Raw {
        let mut rest = text.trim();
        let mut own_id = None;
        let mut tag = None;
        while let Some((inner, after)) = leading_bracket(rest) {
            let inner = inner.trim();
            if own_id.is_none() && is_criterion_id(inner) {
                own_id = Some(inner.to_string());
            } else if is_checkbox(inner) {
            } else if tag.is_none() && is_tag(inner) {
                tag = Some(inner.to_string());
            } else {
                break;
            }
            rest = after.trim_start();
        }
        let (text, trailing) = split_verify(rest);
        Raw {
            own_id,
            text,
            verify_by: trailing.or(tag),
        }
    }

    fn continue_with(&mut self, line: &str) {
        let (more, trailing) = split_verify(line);
        if !more.is_empty() {
            self.text.push(' ');
            self.text.push_str(&more);
        }
        if let Some(how) = trailing {
            self.verify_by = Some(how);
        }
    }
}

/// `verify_by: X` (or `verify: X`) alone on a line: how to verify the
/// criterion above it.
fn verify_line(line: &str) -> Option<String> {
    let (key, value) = line.split_once(':')?;
    let key = key.trim().to_ascii_lowercase().replace(['-', ' '], "_");
    if key != "verify_by" && key != "verify" {
        return None;
    }
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_string())
}

/// A `verify_by` line belongs to the criterion above it; one with nothing
/// above it describes nothing and is dropped.
fn attach_verify(raws: &mut [Raw], how: String) {
    if let Some(last) = raws.last_mut() {
        last.verify_by = Some(match last.verify_by.take() {
            Some(earlier) if earlier != how => format!("{earlier}, {how}"),
            _ => how,
        });
    }
}

/// Gives out ids: a criterion's own id if no earlier one took it (compared
/// ignoring case, as verdicts are matched), else AC-<position>, or the next
/// free AC number. A duplicate own id keeps its `[id]` in the text so nothing
/// the author wrote is lost. Criteria with no text are dropped.
fn number(raws: Vec<Raw>) -> Vec<Criterion> {
    let mut raws: Vec<Raw> = raws.into_iter().filter(|r| !r.text.is_empty()).collect();
    let mut used: HashSet<String> = HashSet::new();
    for raw in &mut raws {
        if let Some(id) = raw.own_id.take() {
            if used.insert(id.to_ascii_uppercase()) {
                raw.own_id = Some(id);
            } else {
                raw.text = format!("[{id}] {}", raw.text);
            }
        }
    }
    // Numbers only grow, so skipping taken ones costs at most one step per
    // criterion overall, however the own ids are spread.
    let mut next = 1;
    raws.into_iter()
        .enumerate()
        .map(|(i, raw)| {
            let id = match raw.own_id {
                Some(id) => id,
                None => {
                    let mut n = next.max(i + 1);
                    while used.contains(&format!("AC-{n}")) {
                        n += 1;
                    }
                    next = n + 1;
                    used.insert(format!("AC-{n}"));
                    format!("AC-{n}")
                }
            };
            Criterion {
                id,
                text: raw.text,
                verify_by: raw.verify_by,
            }
        })
        .collect()
}

/// `[inner] after` at the start of `text`.
fn leading_bracket(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix('[')?;
    let close = rest.find(']')?;
    Some((&rest[..close], &rest[close + 1..]))
}

/// `AC-03`, `REQ-001`, `EDGE-01`, `AC-1a`: letters, then `-`-separated
/// groups, ending in a number (with at most one letter after it).
fn is_criterion_id(text: &str) -> bool {
    let Some((prefix, number)) = text.rsplit_once('-') else {
        return false;
    };
    let digits = number.bytes().take_while(u8::is_ascii_digit).count();
    let tail = &number[digits..];
    let number_ok = digits > 0 && tail.len() <= 1 && tail.bytes().all(|b| b.is_ascii_lowercase());
    let prefix_ok = !prefix.is_empty()
        && prefix.len() <= 24
        && prefix.starts_with(|c: char| c.is_ascii_alphabetic())
        && prefix
            .split('-')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric()));
    number_ok && prefix_ok
}

/// `[ ]`, `[x]`: a markdown checkbox, which says nothing about verification.
fn is_checkbox(text: &str) -> bool {
    matches!(text, "" | "x" | "X")
}

/// `test`, `manual`, `file_exists`: a verification tag. Words only, no digits,
/// so `[P1]` or `[10]` stay part of the text.
fn is_tag(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 32
        && text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '-' | ' '))
}

/// A line without its leading bullet (`- `, `* `, `+ `, `• `) or number
/// (`1. `, `1) `), trimmed.
pub(super) fn strip_bullet(line: &str) -> &str {
    let line = line.trim();
    for bullet in ["- ", "* ", "+ ", "• "] {
        if let Some(rest) = line.strip_prefix(bullet) {
            return rest.trim();
        }
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let rest = &line[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return rest.trim();
        }
    }
    line
}

/// Splits a trailing `[verify: X]` or `[verify_by: X]` off a criterion.
fn split_verify(line: &str) -> (String, Option<String>) {
    let line = line.trim();
    let Some(open) = line.rfind('[') else {
        return (line.to_string(), None);
    };
    let Some(inner) = line[open + 1..].strip_suffix(']') else {
        return (line.to_string(), None);
    };
    match verify_line(inner.trim()) {
        Some(how) => (line[..open].trim_end().to_string(), Some(how)),
        None => (line.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<(String, String, Option<String>)> {
        Criterion::parse_lines(text)
            .into_iter()
            .map(|c| (c.id, c.text, c.verify_by))
            .collect()
    }

    fn c(id: &str, text: &str, verify: Option<&str>) -> (String, String, Option<String>) {
        (id.into(), text.into(), verify.map(str::to_string))
    }

    #[test]
    fn trailing_verify_and_verify_by() {
        assert_eq!(
            read(
                "- Books can be listed [verify: test]\n\n* Search by author\n2. Sorted [Verify_By: review]\n3) Paged [verify-by: lint]"
            ),
            vec![
                c("AC-1", "Books can be listed", Some("test")),
                c("AC-2", "Search by author", None),
                c("AC-3", "Sorted", Some("review")),
                c("AC-4", "Paged", Some("lint")),
            ]
        );
    }

    #[test]
    fn leading_tags_and_checkboxes() {
        assert_eq!(
            read(
                "- [test] Clicking a dot loads that run\n- [manual] Selected dot has a ring\n- [ ] [file_exists] template exists\n- [P1] Fast [verify: bench]"
            ),
            vec![
                c("AC-1", "Clicking a dot loads that run", Some("test")),
                c("AC-2", "Selected dot has a ring", Some("manual")),
                c("AC-3", "template exists", Some("file_exists")),
                c("AC-4", "[P1] Fast", Some("bench")),
            ]
        );
    }

    #[test]
    fn verify_by_on_the_next_line_belongs_to_the_criterion_above() {
        let text = "- RawPattern has fields: type (str), files (list[str])\n  verify_by: schema_check\n- summary() returns counts\n  verify_by: test\n- No verification given";
        assert_eq!(
            read(text),
            vec![
                c(
                    "AC-1",
                    "RawPattern has fields: type (str), files (list[str])",
                    Some("schema_check")
                ),
                c("AC-2", "summary() returns counts", Some("test")),
                c("AC-3", "No verification given", None),
            ]
        );
        // A verify line with nothing above it is not a criterion either.
        assert_eq!(
            read("verify_by: test\n- Only this"),
            vec![c("AC-1", "Only this", None)]
        );
    }

    #[test]
    fn wrapped_lines_of_a_bulleted_list_continue_their_criterion() {
        assert_eq!(
            read("- A long criterion that\n  wraps onto a second line [verify: test]\n- Short"),
            vec![
                c(
                    "AC-1",
                    "A long criterion that wraps onto a second line",
                    Some("test")
                ),
                c("AC-2", "Short", None),
            ]
        );
        // Without bullets every line is a criterion.
        assert_eq!(read("one\n  two").len(), 2);
    }

    #[test]
    fn own_ids_are_kept_and_others_numbered_around_them() {
        assert_eq!(
            read(
                "- [AC-03] Repeated authorisation returns the original\n- Capture posts fee\n- [AC-2] Refunds [verify: test]\n- [test] [REQ-001] Audit log"
            ),
            vec![
                c("AC-03", "Repeated authorisation returns the original", None),
                c("AC-3", "Capture posts fee", None),
                c("AC-2", "Refunds", Some("test")),
                c("REQ-001", "Audit log", Some("test")),
            ]
        );
    }

    #[test]
    fn a_duplicate_own_id_keeps_its_text_and_gets_a_free_id() {
        assert_eq!(
            read("[AC-1] first\n[ac-1] second\nthird"),
            vec![
                c("AC-1", "first", None),
                c("AC-2", "[ac-1] second", None),
                c("AC-3", "third", None),
            ]
        );
    }

    #[test]
    fn brackets_that_are_not_dialect_stay_in_the_text() {
        assert_eq!(
            read("Returns [] for no match\n[10] items per page\nlist[str] is typed"),
            vec![
                c("AC-1", "Returns [] for no match", None),
                c("AC-2", "[10] items per page", None),
                c("AC-3", "list[str] is typed", None),
            ]
        );
    }

    #[test]
    fn arrays_of_objects_and_strings() {
        let items: Vec<Value> = serde_json::from_str(
            r#"[{"criterion": "[AC-03] Repeated authorisation", "verify_by": "test"},
                {"criterion": "Capture posts fee [verify: manual]"},
                {"criterion": "Has own id", "id": "X-1", "verify_by": null},
                "- [lint] Clean",
                "verify_by: strict"]"#,
        )
        .unwrap();
        let got: Vec<_> = from_array(&items)
            .unwrap()
            .into_iter()
            .map(|c| (c.id, c.text, c.verify_by))
            .collect();
        assert_eq!(
            got,
            vec![
                c("AC-03", "Repeated authorisation", Some("test")),
                c("AC-2", "Capture posts fee", Some("manual")),
                c("X-1", "Has own id", None),
                c("AC-4", "Clean", Some("lint, strict")),
            ]
        );
        let bad: Vec<Value> = serde_json::from_str(r#"["a", {"criterion": 3}]"#).unwrap();
        assert_eq!(
            from_array(&bad),
            Err(BadItem {
                index: 1,
                key: Some("criterion")
            })
        );
    }

    #[test]
    fn a_json_array_inside_the_string_is_read_as_an_array() {
        assert_eq!(
            read(r#"[{"criterion": "[AC-04] Capture", "verify_by": "test"}]"#),
            vec![c("AC-04", "Capture", Some("test"))]
        );
        // A line that merely starts with a bracket is still a line.
        assert_eq!(read("[test] Works"), vec![c("AC-1", "Works", Some("test"))]);
    }

    #[test]
    fn numbering_stays_linear_when_own_ids_come_last() {
        let mut text = String::new();
        for _ in 0..20_000 {
            text.push_str("- unlabeled\n");
        }
        for n in 1..=20_000 {
            text.push_str(&format!("- [AC-{n}] labeled\n"));
        }
        let started = std::time::Instant::now();
        let criteria = Criterion::parse_lines(&text);
        assert_eq!(criteria.len(), 40_000);
        assert_eq!(criteria[0].id, "AC-20001");
        assert_eq!(criteria[19_999].id, "AC-40000");
        assert_eq!(criteria[20_000].id, "AC-1");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn criterion_ids() {
        for id in ["AC-03", "AC-1", "REQ-001", "EDGE-01", "AC-1a", "US1-2"] {
            assert!(is_criterion_id(id), "{id}");
        }
        for not in ["AC", "AC-", "-1", "10", "test", "AC-1-", "a b-1", "AC-1ab"] {
            assert!(!is_criterion_id(not), "{not}");
        }
    }
}
