//! `report.md`: the defect as a person reported it, in either template the
//! orchestrator ships (`Severity: P1` or `**Severity:** P1-high` metadata,
//! `## Observed Behavior` sections or `Observed Behavior: …` lines, optional
//! YAML front matter). Parsing never fails: a report is prose, and the
//! whole text goes to the reviewer anyway. What the orchestrator requires of
//! a report and this one lacks is listed in `problems`, for notices.

use std::collections::HashMap;

/// What speed reads out of a report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The first `# ` heading, without a leading `Defect:`.
    pub title: String,
    /// `P0` to `P3`, when the report gives one of those.
    pub severity: Option<String>,
    /// The severity as written (`P1-high`), when given.
    pub severity_label: Option<String>,
    /// Feature names (`Related Feature:`), a link or spec path reduced to the
    /// spec's file stem, in order, without duplicates.
    pub related_features: Vec<String>,
    pub observed: String,
    pub expected: String,
    pub reproduction: String,
    /// What the report lacks, one sentence each.
    pub problems: Vec<String>,
}

/// Section names that hold each required field, lower case.
const OBSERVED: &[&str] = &[
    "observed behavior",
    "observed behaviour",
    "observed",
    "actual behavior",
    "actual behaviour",
];
const EXPECTED: &[&str] = &["expected behavior", "expected behaviour", "expected"];
const REPRODUCTION: &[&str] = &[
    "reproduction steps",
    "steps to reproduce",
    "reproduction",
    "repro",
];

/// Metadata keys read before the first section, lower case.
const META_KEYS: &[&str] = &[
    "severity",
    "related features",
    "related feature",
    "reproducibility",
    "last known working",
];

pub fn parse(text: &str) -> Report {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (front, body) = front_matter(text);
    let mut title = String::new();
    let mut sections: Vec<(String, Vec<&str>)> = Vec::new();
    let mut meta: HashMap<String, String> = front;
    let mut inline: HashMap<String, String> = HashMap::new();
    let mut fence: Option<&str> = None;
    let mut in_comment = false;

    for raw in body.lines() {
        let line = raw.trim();
        if let Some(marker) = fence {
            if line.starts_with(marker) {
                fence = None;
            }
            if let Some((_, lines)) = sections.last_mut() {
                lines.push(raw);
            }
            continue;
        }
        if in_comment {
            in_comment = !line.contains("-->");
            continue;
        }
        if line.starts_with("<!--") {
            in_comment = !line.contains("-->");
            continue;
        }
        if line.starts_with("```") || line.starts_with("~~~") {
            fence = Some(&line[..3]);
            if let Some((_, lines)) = sections.last_mut() {
                lines.push(raw);
            }
            continue;
        }
        if let Some((level, name)) = heading(raw) {
            if level == 1 && title.is_empty() && sections.is_empty() {
                title = strip_label(name, "defect:").to_string();
            } else {
                let name = name.trim_end_matches(':').trim().to_lowercase();
                sections.push((name, Vec::new()));
            }
            continue;
        }
        if let Some((key, value)) = labelled(raw, META_KEYS) {
            if sections.is_empty() {
                meta.entry(key).or_insert(value);
                continue;
            }
        }
        if let Some((key, value)) = labelled(raw, &[OBSERVED, EXPECTED, REPRODUCTION].concat()) {
            inline.entry(key).or_insert(value);
        }
        if let Some((_, lines)) = sections.last_mut() {
            lines.push(raw);
        }
    }

    let section = |names: &[&str]| -> String {
        names
            .iter()
            .find_map(|name| {
                sections
                    .iter()
                    .filter(|(n, _)| n == name)
                    .map(|(_, lines)| clean(&lines.join("\n")))
                    .find(|body| !body.is_empty())
            })
            .or_else(|| {
                names
                    .iter()
                    .find_map(|name| inline.get(*name).cloned().filter(|v| !v.is_empty()))
            })
            .unwrap_or_default()
    };

    let severity_label = meta
        .get("severity")
        .cloned()
        .filter(|v| !v.is_empty())
        .or_else(|| {
            let body = section(&["severity"]);
            body.lines().next().map(clean).filter(|l| !l.is_empty())
        });
    let severity = severity_label.as_deref().and_then(severity_code);
    let related = meta
        .get("related features")
        .or_else(|| meta.get("related feature"))
        .cloned()
        .unwrap_or_default();

    let mut report = Report {
        title,
        severity,
        severity_label,
        related_features: features(&related),
        observed: section(OBSERVED),
        expected: section(EXPECTED),
        reproduction: section(REPRODUCTION),
        problems: Vec::new(),
    };
    report.problems = problems(&report);
    report
}

/// The orchestrator's intake rules: a severity of P0 to P3, and observed
/// behaviour, expected behaviour and reproduction steps.
fn problems(report: &Report) -> Vec<String> {
    let mut out = Vec::new();
    match (&report.severity_label, &report.severity) {
        (None, _) => out.push("it gives no Severity (P0 to P3)".to_string()),
        (Some(label), None) => out.push(format!("its Severity {label:?} is not P0 to P3")),
        _ => {}
    }
    for (value, name) in [
        (&report.observed, "Observed Behavior"),
        (&report.expected, "Expected Behavior"),
        (&report.reproduction, "Reproduction Steps"),
    ] {
        if value.is_empty() {
            out.push(format!("it has no {name}"));
        }
    }
    out
}

/// `P1`, `p1`, `P1-high`, `P1 high` → `P1`.
fn severity_code(label: &str) -> Option<String> {
    let label = label.trim();
    let code = label.get(..2)?;
    let rest = &label[2..];
    let valid = matches!(
        code.to_ascii_uppercase().as_str(),
        "P0" | "P1" | "P2" | "P3"
    );
    let separated = rest.is_empty() || rest.starts_with(['-', ' ', '\t', '(']);
    (valid && separated).then(|| code.to_ascii_uppercase())
}

/// A Markdown ATX heading: its level and text.
fn heading(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_start();
    // More than three spaces of indentation is a code block, not a heading.
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.bytes().take_while(|b| *b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let text = rest.trim().trim_end_matches('#').trim();
    (!text.is_empty()).then_some((level, text))
}

/// `Key: value`, `**Key:** value` or `**Key**: value` for one of `keys`
/// (compared case-insensitively): the key in lower case and the value.
fn labelled(line: &str, keys: &[&str]) -> Option<(String, String)> {
    let line = line.trim().trim_start_matches(['-', '*', ' ']).trim_start();
    let (key, rest) = line.split_once(':')?;
    let key = key.trim().trim_end_matches('*').trim().to_lowercase();
    let known = keys.iter().find(|k| **k == key)?;
    let value = rest.trim().trim_start_matches('*').trim();
    Some((known.to_string(), clean(value)))
}

/// A value with template placeholders (`<title>`, `{Feature}`, `TBD`)
/// counted as absent.
fn clean(value: &str) -> String {
    let value = value.trim();
    let lower = value.to_lowercase();
    let placeholder = (value.starts_with('<') && value.ends_with('>') && !value.contains('\n'))
        || (value.starts_with('{') && value.ends_with('}') && !value.contains('\n'))
        || lower == "tbd"
        || lower == "todo"
        || lower == "n/a";
    if placeholder {
        String::new()
    } else {
        value.to_string()
    }
}

fn strip_label<'a>(text: &'a str, label: &str) -> &'a str {
    let trimmed = text.trim();
    match trimmed.get(..label.len()) {
        Some(head) if head.eq_ignore_ascii_case(label) => trimmed[label.len()..].trim(),
        _ => trimmed,
    }
}

/// Feature names from `a, [b](specs/product/b.md), specs/product/c.md#Flow`.
fn features(value: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in value.split(',') {
        let mut item = item.trim().trim_matches('`').trim();
        if let (Some(open), true) = (item.find("]("), item.ends_with(')')) {
            item = &item[open + 2..item.len() - 1];
        }
        let item = item
            .split('#')
            .next()
            .unwrap_or("")
            .trim()
            .trim_end_matches('/');
        let name = match item.strip_suffix(".md") {
            Some(path) => path.rsplit('/').next().unwrap_or(path),
            None => item,
        };
        let name = clean(name);
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Simple YAML front matter (`key: value` lines) and the text after it.
fn front_matter(text: &str) -> (HashMap<String, String>, &str) {
    let mut meta = HashMap::new();
    let Some(rest) = text.strip_prefix("---\n") else {
        return (meta, text);
    };
    let Some(end) = rest.find("\n---") else {
        return (meta, text);
    };
    for line in rest[..end].lines() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        if let Some((key, value)) = line.split_once(':') {
            let key = key.trim().replace('_', " ").to_lowercase();
            if META_KEYS.contains(&key.as_str()) {
                let value = value.trim().trim_matches(['[', ']']).trim();
                let value: Vec<&str> = value
                    .split(',')
                    .map(|v| v.trim().trim_matches(['\'', '"']))
                    .collect();
                meta.insert(key, value.join(", "));
            }
        }
    }
    let after = &rest[end + 4..];
    let after = after.split_once('\n').map_or("", |(_, body)| body);
    (meta, after)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The orchestrator's `templates/defect-report.md`, filled in.
    const PLAIN: &str = "<!--\nSeverity guide:\n  P0 — System down.\nRelated Feature must match a spec filename.\n-->\n\n# Defect: Search returns loaned books as available\n\nSeverity: P1\nRelated Feature: library-catalog\n\n## Observed Behavior\n\nA book on loan shows `available: true` in search results.\n\n## Expected Behavior\n\nPer the spec, availability is real-time.\n\n## Reproduction Steps\n\n1. Loan book 42.\n2. Search for its title.\n3. It is listed as available.\n\n## Additional Context (optional)\n\nSeen since the loans refactor.\n";

    /// The orchestrator's `templates/defect.md`, bold labels and a suffix.
    const BOLD: &str = "# Defect: Login crash\n\n**Severity:** P0-critical\n**Related Feature:** [auth](specs/product/auth.md#Login), billing\n**Reproducibility:** always\n\n## Observed Behavior\n```\nTypeError: Cannot read property 'name' of undefined\n# not a heading\n```\n\n## Expected Behavior\nThe user is logged in.\n\n## Reproduction Steps\n1. Log in with an empty name\n";

    #[test]
    fn reads_the_plain_template() {
        let r = parse(PLAIN);
        assert_eq!(r.title, "Search returns loaned books as available");
        assert_eq!(r.severity.as_deref(), Some("P1"));
        assert_eq!(r.related_features, ["library-catalog"]);
        assert_eq!(
            r.observed,
            "A book on loan shows `available: true` in search results."
        );
        assert!(r.expected.starts_with("Per the spec"));
        assert!(r.reproduction.starts_with("1. Loan book 42."));
        assert!(r.problems.is_empty(), "{:?}", r.problems);
    }

    #[test]
    fn reads_bold_labels_links_and_fenced_output() {
        let r = parse(BOLD);
        assert_eq!(r.severity.as_deref(), Some("P0"));
        assert_eq!(r.severity_label.as_deref(), Some("P0-critical"));
        assert_eq!(r.related_features, ["auth", "billing"]);
        assert!(r.observed.contains("# not a heading"), "{}", r.observed);
        assert_eq!(r.expected, "The user is logged in.");
        assert!(r.problems.is_empty(), "{:?}", r.problems);
    }

    #[test]
    fn reads_inline_fields_and_front_matter() {
        let text = "---\nseverity: P2\nrelated_features: [catalog, loans]\n---\n# Defect: x\n\nObserved Behavior: it crashes\nExpected: it does not\nRepro: open it\n";
        let r = parse(text);
        assert_eq!(r.severity.as_deref(), Some("P2"));
        assert_eq!(r.related_features, ["catalog", "loans"]);
        assert_eq!(r.observed, "it crashes");
        assert_eq!(r.expected, "it does not");
        assert_eq!(r.reproduction, "open it");
    }

    #[test]
    fn lists_what_the_intake_rules_require() {
        let r = parse(
            "# Defect: <title>\n\nSeverity: urgent\n\n## Observed Behavior\n\n<What actually happens.>\n",
        );
        assert_eq!(r.title, "<title>");
        assert_eq!(
            r.problems,
            [
                "its Severity \"urgent\" is not P0 to P3",
                "it has no Observed Behavior",
                "it has no Expected Behavior",
                "it has no Reproduction Steps"
            ]
        );
        let r = parse("just prose");
        assert_eq!(r.problems[0], "it gives no Severity (P0 to P3)");
    }

    #[test]
    fn severity_codes() {
        for (label, code) in [
            ("P1", Some("P1")),
            ("p3", Some("P3")),
            ("P2-moderate", Some("P2")),
            ("P0 (critical)", Some("P0")),
            ("P4", None),
            ("P12", None),
            ("high", None),
            ("", None),
        ] {
            assert_eq!(severity_code(label).as_deref(), code, "{label}");
        }
    }

    #[test]
    fn hostile_text_does_not_panic() {
        for text in [
            "",
            "#",
            "# ",
            "---\n",
            "---\nseverity: P1\n",
            "**Severity:**",
            "Related Feature: [x](",
            "Related Feature: ](x.md)",
            "```\n# Defect: in a fence",
            "<!-- unterminated",
            "# Défect: ünïcode\nSeverity: P1é",
        ] {
            let _ = parse(text);
        }
        assert_eq!(parse("Severity: Pé").severity, None);
    }
}
