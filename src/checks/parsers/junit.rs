//! JUnit XML, as pytest (`--junitxml`), cargo-nextest, jest-junit, Maven
//! and most test runners write it: each `<testcase>` holding a `<failure>`
//! or an `<error>` is a message whose rule is the test's name. Its place is
//! the case's `file` and `line` attributes when the report has them
//! (pytest's `line` counts from 0), then every `path:line` its failure
//! names (a panic's `src/lib.rs:34:9`, pytest's `tests/test_x.py:12:`):
//! `messages` keeps the first that is a file of the checkout.
//!
//! The XML comes from the branch under review: it is read with no DTD (so
//! no entity can expand, no external file be fetched) and a node limit;
//! the tree is walked without recursion.

use super::{Collect, Level, Message, Parsed, Place, Unreadable, places_in};

/// Nodes a report may hold (elements, attributes' text, text runs).
const MAX_NODES: u32 = 2_000_000;

/// Lines of a failure's body kept in the message.
const BODY_LINES: usize = 12;

/// Elements nested deeper are refused before parsing: the XML reader
/// recurses per element (a JUnit report nests four or five deep).
const MAX_DEPTH: usize = 256;

pub fn parse(text: &str) -> Result<Parsed, Unreadable> {
    if text.trim().is_empty() {
        return Err(Unreadable("no JUnit XML: the report is empty".to_string()));
    }
    if too_deep(text, MAX_DEPTH) {
        return Err(Unreadable(format!(
            "the report nests elements more than {MAX_DEPTH} deep"
        )));
    }
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        nodes_limit: MAX_NODES,
    };
    let doc = roxmltree::Document::parse_with_options(text, options).map_err(|e| {
        Unreadable(match e {
            roxmltree::Error::DtdDetected => {
                "the report declares a DTD, which speed does not read (entities could expand without bound)".to_string()
            }
            roxmltree::Error::NodesLimitReached => {
                format!("the report has more than {MAX_NODES} XML nodes")
            }
            e => format!("not well-formed XML: {e}"),
        })
    })?;
    let root = doc.root_element();
    let name = root.tag_name().name();
    if name != "testsuites" && name != "testsuite" {
        return Err(Unreadable(format!(
            "expected <testsuites> or <testsuite> at the root, found <{}>",
            super::clip(name, 40)
        )));
    }
    // pytest numbers `line` from 0; everyone else who writes it, from 1.
    let pytest = root
        .attribute("name")
        .is_some_and(|n| n.starts_with("pytest"))
        || root
            .children()
            .any(|c| c.has_tag_name("testsuite") && c.attribute("name") == Some("pytest"));
    let mut collect = Collect::default();
    for case in root.descendants().filter(|n| n.has_tag_name("testcase")) {
        let Some(outcome) = case
            .children()
            .find(|c| c.has_tag_name("failure") || c.has_tag_name("error"))
        else {
            continue;
        };
        collect.push(message(case, outcome, pytest));
    }
    Ok(collect.done())
}

/// Whether elements nest deeper than `limit`: a linear scan of the tags
/// (comments, CDATA, processing instructions and quoted attribute values
/// skipped), with no judgement of well-formedness, which the parser makes.
fn too_deep(text: &str, limit: usize) -> bool {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    let skip_to = |from: usize, end: &[u8]| {
        memchr::memmem::find(&bytes[from..], end).map_or(bytes.len(), |at| from + at + end.len())
    };
    while let Some(at) = memchr::memchr(b'<', &bytes[i..]) {
        i += at;
        let rest = &bytes[i..];
        if rest.starts_with(b"<!--") {
            i = skip_to(i + 4, b"-->");
        } else if rest.starts_with(b"<![CDATA[") {
            i = skip_to(i + 9, b"]]>");
        } else if rest.starts_with(b"<?") {
            i = skip_to(i + 2, b"?>");
        } else if rest.starts_with(b"</") {
            depth = depth.saturating_sub(1);
            i = skip_to(i + 2, b">");
        } else {
            // A start tag (or a declaration): to its `>`, quotes apart.
            let mut j = i + 1;
            let mut quote = None;
            while j < bytes.len() {
                match (quote, bytes[j]) {
                    (None, b'"' | b'\'') => quote = Some(bytes[j]),
                    (Some(q), c) if c == q => quote = None,
                    (None, b'>') => break,
                    _ => {}
                }
                j += 1;
            }
            let closed = j > i + 1 && bytes.get(j - 1) == Some(&b'/');
            if !closed && !rest.starts_with(b"<!") {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            i = j.saturating_add(1).min(bytes.len());
        }
        if i >= bytes.len() {
            break;
        }
    }
    false
}

fn message(case: roxmltree::Node, outcome: roxmltree::Node, pytest: bool) -> Message {
    let name = case.attribute("name").unwrap_or("").trim();
    let class = case.attribute("classname").unwrap_or("").trim();
    let test = match (class.is_empty(), name.is_empty()) {
        (false, false) => format!("{class}::{name}"),
        (true, false) => name.to_string(),
        (false, true) => class.to_string(),
        (true, true) => "a test case without a name".to_string(),
    };
    let said = outcome.attribute("message").unwrap_or("").trim();
    let body: String = outcome
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect();
    let kind = if outcome.has_tag_name("error") {
        "errored"
    } else {
        "failed"
    };
    let mut text = format!("{test} {kind}");
    let first = said
        .lines()
        .chain(body.lines())
        .map(str::trim)
        .find(|l| !l.is_empty());
    if let Some(first) = first {
        text.push_str(": ");
        text.push_str(first);
    }
    let detail: Vec<&str> = body
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(BODY_LINES)
        .collect();
    // The body, unless it is only the line already said.
    let said_already = detail.len() == 1 && Some(detail[0].trim()) == first;
    if !detail.is_empty() && !said_already {
        text.push('\n');
        text.push_str(&detail.join("\n"));
    }
    let mut places = Vec::new();
    if let Some(file) = case
        .attribute("file")
        .map(str::trim)
        .filter(|f| !f.is_empty())
    {
        let line = case
            .attribute("line")
            .and_then(|l| l.trim().parse::<u64>().ok())
            .map(|l| if pytest { l + 1 } else { l });
        places.push(Place {
            file: file.to_string(),
            line,
            column: None,
        });
    }
    places.extend(places_in(said));
    places.extend(places_in(&body));
    Message {
        level: Level::Error,
        places,
        rule: Some(test),
        text,
        suggestion: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(path: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/fixtures/tools/{path}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn real_pytest_failures_with_their_test_and_place() {
        let parsed = parse(&fixture("python/pytest-junit.xml")).unwrap();
        let found: Vec<(String, String, Option<u64>)> = parsed
            .messages
            .iter()
            .map(|m| {
                (
                    m.rule.clone().unwrap(),
                    m.places[0].file.clone(),
                    m.places[0].line,
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                (
                    "tests.test_calc::test_the_cap_is_the_price".to_string(),
                    "tests/test_calc.py".to_string(),
                    Some(9)
                ),
                (
                    "tests.test_calc::test_a_negative_price_is_refused".to_string(),
                    "tests/test_calc.py".to_string(),
                    Some(13)
                ),
            ]
        );
        assert!(
            parsed.messages[0].text.starts_with(
                "tests.test_calc::test_the_cap_is_the_price failed: assert 250 == 300"
            ),
            "{}",
            parsed.messages[0].text
        );
    }

    #[test]
    fn pytest_xunit1_lines_count_from_zero() {
        let parsed = parse(&fixture("python/pytest-junit-xunit1.xml")).unwrap();
        let first = &parsed.messages[0].places[0];
        // `def test_the_cap_is_the_price():` is line 8 of the file.
        assert_eq!(
            (first.file.as_str(), first.line),
            ("tests/test_calc.py", Some(8))
        );
    }

    #[test]
    fn real_nextest_failure_points_at_the_panic() {
        let parsed = parse(&fixture("rust/nextest-junit.xml")).unwrap();
        assert_eq!(parsed.messages.len(), 1);
        let m = &parsed.messages[0];
        assert_eq!(
            m.rule.as_deref(),
            Some("fines::tests::the_cap_is_the_price")
        );
        let p = &m.places[0];
        assert_eq!(
            (p.file.as_str(), p.line, p.column),
            ("src/lib.rs", Some(34), Some(9))
        );
        assert!(
            m.text.contains("assertion `left == right` failed"),
            "{}",
            m.text
        );
    }

    #[test]
    fn entities_dtds_and_garbage_are_refused() {
        let bomb = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<testsuites><testsuite><testcase name="x"><failure message="&lol2;"/></testcase></testsuite></testsuites>"#;
        assert!(parse(bomb).unwrap_err().0.contains("DTD"));
        let external =
            r#"<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><testsuite>&e;</testsuite>"#;
        assert!(parse(external).unwrap_err().0.contains("DTD"));
        assert!(
            parse("<testsuite><testcase>")
                .unwrap_err()
                .0
                .contains("XML")
        );
        assert!(parse("<html/>").unwrap_err().0.contains("<html>"));
        assert!(parse("   ").is_err());
        // A valid report of passing tests has no messages.
        assert_eq!(
            parse(
                "<testsuites><testsuite name=\"s\"><testcase name=\"ok\"/></testsuite></testsuites>"
            )
            .unwrap()
            .messages,
            []
        );
    }

    #[test]
    fn deep_nesting_and_many_nodes_end_cleanly() {
        let deep = format!(
            "<testsuites>{}{}</testsuites>",
            "<a>".repeat(200_000),
            "</a>".repeat(200_000)
        );
        assert!(parse(&deep).unwrap_err().0.contains("deep"));
        // Self-closing tags, comments and quoted `>` do not nest.
        let flat = format!(
            "<testsuites><!-- <a> --><s n=\"x>y\"/>{}<![CDATA[<b>]]></testsuites>",
            "<t/>".repeat(10_000)
        );
        assert!(!too_deep(&flat, 3));
        assert!(too_deep("<a><b><c><d>", 3));
        let many = format!("<testsuite>{}</testsuite>", "<a/>".repeat(2_100_000));
        assert!(parse(&many).unwrap_err().0.contains("XML nodes"));
    }
}
