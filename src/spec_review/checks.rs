//! speed's own findings about a spec, established before any model is
//! asked: each PRD requirement traced to the spec sections that cover it
//! (the untraced ones listed), a spec without headings, duplicated
//! headings, empty sections, `TODO`/`TBD`/`FIXME`/`???` markers,
//! requirement lists with no testable statement, and the credentials that
//! were redacted. The model sees them as facts; `--offline` reports them
//! alone. Pure: parsed documents in, findings out.
//!
//! Tracing uses the relevance index speed ranks spec sections by for a
//! review (`specs::relevance::Index`, BM25) to pick the candidate sections,
//! then asks how much of the requirement's weight their words carry: each
//! word counts by how rare it is in the spec, so a requirement whose
//! distinctive words ("kiosk") appear nowhere is not traced by the words
//! every section shares ("fine", "member"). It is a heuristic, and the
//! prompt says so: the model is asked to judge coverage in other words.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::requirements::{self, Requirement};
use crate::secrets::Redaction;
use crate::severity::Severity;
use crate::specs::relevance::{Index, terms};
use crate::specs::{Document, Section};

/// A requirement is traced to a section that carries at least this share of
/// its words' weight.
const TRACED_SHARE: f64 = 0.4;
/// Words that say nothing about what a requirement is about.
const FILLER: &[&str] = &["each", "every", "per", "via", "etc"];
/// Candidates: sections scoring at least this share of the best score, at
/// most `MAX_TRACED` of them.
const CANDIDATE_SHARE: f64 = 0.5;
const MAX_TRACED: usize = 3;
/// Marker findings past this many lines are counted in one finding.
const MAX_MARKER_LINES: usize = 30;

/// One finding about the spec (or the PRD).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub severity: Severity,
    /// The spec section it is about (its heading path), when there is one.
    pub section: Option<String>,
    /// 1-based line in the spec (or, for a requirement, the PRD).
    pub line: Option<usize>,
    pub message: String,
    /// The document it is in when that is not the spec: the PRD's path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl Finding {
    /// One line for the prompt and the terminal.
    pub fn line(&self) -> String {
        // A line of another document is in the message, which names it.
        let line = self.line.filter(|_| self.file.is_none());
        let at = match (&self.section, line) {
            (Some(section), Some(line)) => format!(" ({section}, line {line})"),
            (Some(section), None) => format!(" ({section})"),
            (None, Some(line)) => format!(" (line {line})"),
            (None, None) => String::new(),
        };
        format!(
            "- {} [{}]{at}: {}",
            self.check,
            self.severity.as_str(),
            self.message
        )
    }
}

/// Where a PRD requirement is specified.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trace {
    #[serde(flatten)]
    pub requirement: Requirement,
    /// Heading paths of the spec sections that cover it; empty: untraced.
    pub sections: Vec<String>,
}

/// What the checks established.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Facts {
    pub findings: Vec<Finding>,
    /// Every PRD requirement and where it is traced; empty without a PRD.
    pub requirements: Vec<Trace>,
    /// Requirements past `requirements::MAX_REQUIREMENTS`, not traced.
    pub requirements_not_traced: usize,
    /// The spec's headings: (heading path, 1-based line), to place what
    /// the model says of a section.
    #[serde(skip)]
    pub headings: Vec<(String, usize)>,
}

impl Facts {
    /// Whether a finding is critical or major (the offline outcome).
    pub fn blocking(&self) -> bool {
        self.findings.iter().any(|f| f.severity.is_blocking())
    }

    /// Whether a finding is critical: a model's pass is not enough then.
    pub fn critical(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.severity == Severity::Critical)
    }
}

/// Runs every check. `spec_path` names the spec in the redactions.
pub fn run(
    spec: &Document,
    prd: Option<&Document>,
    redactions: &[Redaction],
    spec_path: &str,
) -> Facts {
    let mut facts = Facts {
        headings: spec
            .sections
            .iter()
            .filter(|s| s.level > 0)
            .map(|s| (s.heading_path(), s.start_line))
            .collect(),
        ..Facts::default()
    };
    for r in redactions {
        let (section, file) = if r.file == spec_path {
            (section_at(spec, r.line as usize), "the spec")
        } else {
            (None, "the PRD")
        };
        facts.findings.push(Finding {
            check: "secret",
            severity: Severity::Critical,
            section,
            line: (r.line > 0).then_some(r.line as usize),
            message: format!(
                "{file} ({}) holds a credential ({}); it was replaced by [REDACTED:{}] in \
                 everything speed sends and writes: remove it from the document",
                r.file, r.rule, r.rule
            ),
            file: (r.file != spec_path).then(|| r.file.clone()),
        });
    }
    if !spec.sections.iter().any(|s| s.level > 0) {
        facts.findings.push(Finding {
            check: "no_headings",
            severity: Severity::Major,
            section: None,
            line: None,
            message: "the spec has no headings, so no feedback or reference can name a part of it"
                .to_string(),
            file: None,
        });
    }
    if let Some(prd) = prd {
        trace_all(spec, prd, &mut facts);
    }
    duplicate_headings(spec, &mut facts.findings);
    empty_sections(spec, &mut facts.findings);
    markers(spec, &mut facts.findings);
    untestable_lists(spec, &mut facts.findings);
    facts
}

fn trace_all(spec: &Document, prd: &Document, facts: &mut Facts) {
    let (found, over) = requirements::extract(prd);
    facts.requirements_not_traced = over;
    if found.is_empty() {
        facts.findings.push(Finding {
            check: "no_requirements",
            severity: Severity::Minor,
            section: None,
            line: None,
            message: format!(
                "the PRD ({}) has no numbered or bulleted requirement to trace",
                prd.path
            ),
            file: None,
        });
        return;
    }
    let tracer = Tracer::new(spec);
    for requirement in found {
        let sections = tracer.trace(&requirement);
        if sections.is_empty() {
            facts.findings.push(Finding {
                check: "untraced_requirement",
                severity: Severity::Major,
                section: None,
                line: Some(requirement.line),
                message: format!(
                    "{} is traced to no section of the spec: \"{}\"",
                    match &requirement.id {
                        Some(id) => format!("{id} (PRD line {})", requirement.line),
                        None => format!("PRD line {}", requirement.line),
                    },
                    clip(&requirement.text, 160)
                ),
                file: Some(prd.path.clone()),
            });
        }
        facts.requirements.push(Trace {
            requirement,
            sections,
        });
    }
    if over > 0 {
        facts.findings.push(Finding {
            check: "untraced_requirement",
            severity: Severity::Minor,
            section: None,
            line: None,
            message: format!(
                "the PRD has {over} more requirements than the {} speed traces; they were not traced",
                requirements::MAX_REQUIREMENTS
            ),
                    file: None,
});
    }
}

/// The spec's sections as the tracer weighs them.
struct Tracer<'d> {
    spec: &'d Document,
    index: Index,
    /// Per section: its terms, ancestors' titles included.
    terms: Vec<HashSet<String>>,
    /// How many sections hold each term.
    frequency: HashMap<String, usize>,
}

impl<'d> Tracer<'d> {
    fn new(spec: &'d Document) -> Tracer<'d> {
        let terms: Vec<HashSet<String>> = spec
            .sections
            .iter()
            .map(|s| {
                s.titles
                    .iter()
                    .map(String::as_str)
                    .chain([s.text.as_str()])
                    .flat_map(stems)
                    .collect()
            })
            .collect();
        let mut frequency: HashMap<String, usize> = HashMap::new();
        for set in &terms {
            for term in set {
                *frequency.entry(term.clone()).or_default() += 1;
            }
        }
        Tracer {
            spec,
            index: Index::new(std::slice::from_ref(spec)),
            terms,
            frequency,
        }
    }

    /// How much a word says: rare in the spec, much; absent, most.
    fn weight(&self, term: &str) -> f64 {
        let n = self.terms.len() as f64;
        let df = self.frequency.get(term).copied().unwrap_or(0) as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// Heading paths of the sections covering `requirement`: those naming
    /// its id, else the best-ranked ones carrying enough of its weight.
    fn trace(&self, requirement: &Requirement) -> Vec<String> {
        if let Some(id) = &requirement.id {
            let naming: Vec<String> = self
                .spec
                .sections
                .iter()
                .filter(|s| names_id(&s.text, id))
                .take(MAX_TRACED)
                .map(Section::heading_path)
                .collect();
            if !naming.is_empty() {
                return naming;
            }
        }
        let wanted: HashSet<String> = stems(&requirement.text).collect();
        let total: f64 = wanted.iter().map(|t| self.weight(t)).sum();
        if total <= 0.0 {
            return Vec::new();
        }
        let scores = self.index.scores(&requirement.text);
        let Some(scores) = scores.first() else {
            return Vec::new();
        };
        let mut ranked: Vec<(usize, f64)> = scores
            .iter()
            .enumerate()
            .map(|(i, (score, _))| (i, *score))
            .filter(|(_, score)| *score > 0.0)
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        let best = ranked.first().map_or(0.0, |r| r.1);
        ranked
            .into_iter()
            .take_while(|(_, score)| *score >= best * CANDIDATE_SHARE)
            .take(MAX_TRACED)
            .filter(|(i, _)| {
                let carried: f64 = wanted
                    .iter()
                    .filter(|t| self.terms[*i].contains(*t))
                    .map(|t| self.weight(t))
                    .sum();
                carried / total >= TRACED_SHARE
            })
            .map(|(i, _)| self.spec.sections[i].heading_path())
            .collect()
    }
}

/// The terms of `text` as the tracer compares them: the ranking's terms,
/// without filler, cut to a rough stem so that "charge", "charged" and
/// "charging" meet.
fn stems(text: &str) -> impl Iterator<Item = String> + '_ {
    terms(text)
        .filter(|t| !FILLER.contains(&t.as_str()))
        .map(|t| stem(&t))
}

fn stem(term: &str) -> String {
    for suffix in ["ing", "ed", "es", "e", "s"] {
        if let Some(base) = term.strip_suffix(suffix) {
            if base.chars().count() >= 3 {
                return base.to_string();
            }
        }
    }
    term.to_string()
}

/// Whether `text` names `id` as a whole word (`FR-1` but not `FR-12`).
fn names_id(text: &str, id: &str) -> bool {
    text.match_indices(id).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + id.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-');
        !part(before)
            && !part(after)
            && !after.is_some_and(|c| c == '.' && next_is_digit(text, at + id.len()))
    })
}

fn next_is_digit(text: &str, dot: usize) -> bool {
    text[dot + 1..]
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit())
}

fn section_at(doc: &Document, line: usize) -> Option<String> {
    doc.sections
        .iter()
        .find(|s| s.level > 0 && s.start_line <= line && line <= s.end_line)
        .map(Section::heading_path)
}

/// A heading path used twice: feedback and quotes naming it are ambiguous.
fn duplicate_headings(spec: &Document, out: &mut Vec<Finding>) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for section in spec.sections.iter().filter(|s| s.level > 0) {
        let key = section.heading_path().to_lowercase();
        match seen.get(&key) {
            Some(first) => out.push(Finding {
                check: "duplicate_heading",
                severity: Severity::Major,
                section: Some(section.heading_path()),
                line: Some(section.start_line),
                message: format!(
                    "this heading path is used at line {first} too: feedback and references naming it are ambiguous"
                ),
                            file: None,
}),
            None => {
                seen.insert(key, section.start_line);
            }
        }
    }
}

/// A heading with nothing under it: no text and no subsection.
fn empty_sections(spec: &Document, out: &mut Vec<Finding>) {
    let sections = &spec.sections;
    for (i, section) in sections.iter().enumerate() {
        if section.level == 0 {
            continue;
        }
        let has_children = sections
            .get(i + 1)
            .is_some_and(|next| next.level > section.level);
        if has_children || !without_comments(section.body()).trim().is_empty() {
            continue;
        }
        out.push(Finding {
            check: "empty_section",
            severity: Severity::Minor,
            section: Some(section.heading_path()),
            line: Some(section.start_line),
            message: "the section has a heading and nothing under it".to_string(),
            file: None,
        });
    }
}

/// Text without HTML comments (`<!-- fill in -->` is not content).
fn without_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("<!--") {
        out.push_str(&rest[..open]);
        match rest[open..].find("-->") {
            Some(close) => rest = &rest[open + close + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// The lines of `text` outside fenced code blocks, with their 1-based
/// numbers; inline code spans are blanked (a spec may name a marker in
/// backticks without being unfinished).
fn prose_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<char> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let opener = ['`', '~']
            .into_iter()
            .find(|c| trimmed.starts_with(&c.to_string().repeat(3)));
        match (fence, opener) {
            (None, Some(c)) => {
                fence = Some(c);
                continue;
            }
            (Some(open), Some(c)) if open == c => {
                fence = None;
                continue;
            }
            (Some(_), _) => continue,
            (None, None) => {}
        }
        out.push((i + 1, without_code_spans(line)));
    }
    out
}

fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut inside = false;
    for c in line.chars() {
        if c == '`' {
            inside = !inside;
            out.push(' ');
        } else {
            out.push(if inside { ' ' } else { c });
        }
    }
    out
}

/// `TODO`, `TBD`, `FIXME` as words, and `???`, outside code.
fn markers(spec: &Document, out: &mut Vec<Finding>) {
    let mut lines = 0;
    for (number, line) in prose_lines(&spec.text) {
        let mut found: Vec<&str> = ["TODO", "TBD", "FIXME"]
            .into_iter()
            .filter(|m| has_word(&line, m))
            .collect();
        if line.contains("???") {
            found.push("???");
        }
        if found.is_empty() {
            continue;
        }
        lines += 1;
        if lines > MAX_MARKER_LINES {
            continue;
        }
        out.push(Finding {
            check: "marker",
            severity: Severity::Major,
            section: section_at(spec, number),
            line: Some(number),
            message: format!(
                "{} marks this part of the spec as unfinished: \"{}\"",
                found.join(", "),
                clip(line.trim(), 120)
            ),
            file: None,
        });
    }
    if lines > MAX_MARKER_LINES {
        out.push(Finding {
            check: "marker",
            severity: Severity::Major,
            section: None,
            line: None,
            message: format!("…and {} more lines with markers", lines - MAX_MARKER_LINES),
            file: None,
        });
    }
}

fn has_word(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Words that make a statement checkable: an obligation, a bound, a
/// condition, an observable result.
const TESTABLE_WORDS: &[&str] = &[
    "must", "shall", "should", "will", "never", "always", "only", "exactly", "once", "twice",
    "within", "least", "most", "returns", "return", "rejects", "reject", "refuses", "refuse",
    "fails", "fail", "error", "errors", "exits", "exit", "default", "maximum", "minimum", "limit",
    "when", "if", "unless", "before", "after",
];

/// Whether a requirement can be checked by a test or a reviewer.
fn testable(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_ascii_digit() || matches!(c, '<' | '>' | '≤' | '≥' | '=' | '%'))
        || text
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| TESTABLE_WORDS.contains(&w.to_lowercase().as_str()))
}

/// A section named for requirements or criteria whose list states nothing
/// a test could check.
fn untestable_lists(spec: &Document, out: &mut Vec<Finding>) {
    for section in spec.sections.iter().filter(|s| s.level > 0) {
        let title = section.title().to_lowercase();
        let named = ["requirement", "acceptance", "criteria", "constraint"]
            .iter()
            .any(|w| title.contains(w));
        if !named {
            continue;
        }
        let items: Vec<String> = prose_lines(section.body())
            .into_iter()
            .filter_map(|(_, line)| requirements::bullet_text(&line).map(str::to_string))
            .collect();
        if items.is_empty() || items.iter().any(|i| testable(i)) {
            continue;
        }
        out.push(Finding {
            check: "untestable_requirements",
            severity: Severity::Minor,
            section: Some(section.heading_path()),
            line: Some(section.start_line),
            message: format!(
                "none of its {} items states something a test could check (an obligation such as \
                 must or never, a number or limit, a condition, an observable result)",
                items.len()
            ),
            file: None,
        });
    }
}

/// At most `max` characters of `text`, with `…` when cut.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::specs::parse;

    const SPEC: &str = "# Late fines\n\nFines for books returned late.\n\n\
        ## Charging\n\nA fine of 25 cents is charged per day late, from the day after the due date.\n\n\
        ## Cap\n\nThe fine for one loan never exceeds the replacement price of the book.\n\n\
        ## Waivers\n\n## Notes\nTODO: decide on holidays. Use `TODO` markers sparingly ???\n\n\
        ```\n// TODO in code is an example\n```\n\n\
        ## Requirements\n- Fines are friendly\n- Staff are happy\n";

    fn checks(spec: &str, prd: Option<&str>) -> Facts {
        let spec = parse("specs/fines.md", spec);
        let prd = prd.map(|p| parse("prd.md", p));
        run(&spec, prd.as_ref(), &[], "specs/fines.md")
    }

    fn of(facts: &Facts, check: &str) -> Vec<String> {
        facts
            .findings
            .iter()
            .filter(|f| f.check == check)
            .map(Finding::line)
            .collect()
    }

    #[test]
    fn requirements_are_traced_by_their_distinctive_words_or_their_id() {
        let prd = "# PRD\n- FR-1: Charge a fine for each day a book is returned late\n\
                   - FR-2: The fine never exceeds the book's replacement price\n\
                   - FR-3: Members see their fines at the self-service kiosk\n\
                   - FR-4: Fines are waived for holidays\n";
        let spec = format!("{SPEC}\n## Holidays\nSee FR-4.\n");
        let facts = checks(&spec, Some(prd));
        let traced: Vec<(&str, Vec<&str>)> = facts
            .requirements
            .iter()
            .map(|t| {
                (
                    t.requirement.id.as_deref().unwrap(),
                    t.sections.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            traced,
            [
                // The introduction speaks of books returned late too.
                ("FR-1", vec!["Late fines", "Late fines > Charging"]),
                ("FR-2", vec!["Late fines > Cap"]),
                ("FR-3", vec![]),
                ("FR-4", vec!["Late fines > Holidays"]),
            ]
        );
        let untraced = of(&facts, "untraced_requirement");
        assert_eq!(untraced.len(), 1, "{untraced:?}");
        assert!(untraced[0].contains("FR-3 (PRD line 4)"), "{untraced:?}");
    }

    #[test]
    fn japanese_requirements_are_traced_to_japanese_sections() {
        let prd = "# 製品要求\n\n- 返金はカード決済の場合、5営業日以内に処理する\n\
                   - 部分返金は管理者のみが実行できる\n\
                   - 領収書をPDFでダウンロードできる\n";
        let spec = "# 決済仕様\n\n## 返金処理\n\nカード決済の返金は、申請から5営業日以内に処理する。\n\n\
                    ## 権限\n\n部分返金を実行できるのは管理者のみとする。一般ユーザーは全額返金の申請のみ行える。\n\n\
                    ## 通知\n\n処理が完了したら、メールで利用者に通知する。\n";
        let facts = checks(spec, Some(prd));
        let traced: Vec<Vec<&str>> = facts
            .requirements
            .iter()
            .map(|t| t.sections.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            traced,
            [
                vec!["決済仕様 > 返金処理"],
                vec!["決済仕様 > 権限"],
                // No section speaks of receipts.
                vec![],
            ]
        );
        let untraced = of(&facts, "untraced_requirement");
        assert_eq!(untraced.len(), 1, "{untraced:?}");
        assert!(untraced[0].contains("PRD line 5"), "{untraced:?}");
    }

    #[test]
    fn structure_and_markers() {
        let facts = checks(SPEC, None);
        assert_eq!(
            of(&facts, "empty_section"),
            [
                "- empty_section [minor] (Late fines > Waivers, line 13): the section has a heading and nothing under it"
            ]
        );
        let markers = of(&facts, "marker");
        assert_eq!(markers.len(), 1, "{markers:?}");
        assert!(
            markers[0].contains("TODO, ???") && markers[0].contains("line 16"),
            "{markers:?}"
        );
        let lists = of(&facts, "untestable_requirements");
        assert_eq!(lists.len(), 1, "{lists:?}");
        assert!(lists[0].contains("none of its 2 items"), "{lists:?}");
        assert!(facts.blocking() && !facts.critical());
        assert!(of(&facts, "duplicate_heading").is_empty());
    }

    #[test]
    fn duplicated_headings_and_a_spec_without_any() {
        let facts = checks("# A\n## B\nx\n## B\ny\n", None);
        assert_eq!(
            of(&facts, "duplicate_heading"),
            [
                "- duplicate_heading [major] (A > B, line 4): this heading path is used at line 2 too: feedback and references naming it are ambiguous"
            ]
        );
        let facts = checks("just prose\n", None);
        assert_eq!(of(&facts, "no_headings").len(), 1);
    }

    #[test]
    fn a_testable_list_and_a_parent_heading_are_fine() {
        let facts = checks(
            "# S\n## Requirements\n### Fines\n- A fine must be charged per day\n- Friendly\n",
            None,
        );
        assert!(facts.findings.is_empty(), "{:?}", facts.findings);
    }

    #[test]
    fn stems_meet_across_forms() {
        assert_eq!(stem("charged"), stem("charging"));
        assert_eq!(stem("charge"), stem("charges"));
        assert_eq!(stem("day"), "day");
        assert_eq!(stem("use"), "use");
    }

    #[test]
    fn ids_are_named_as_whole_words() {
        assert!(names_id("see FR-1.", "FR-1"));
        assert!(names_id("(FR-1)", "FR-1"));
        assert!(!names_id("FR-12", "FR-1"));
        assert!(!names_id("FR-1.2", "FR-1"));
        assert!(!names_id("NFR-1", "FR-1"));
    }

    #[test]
    fn a_redacted_credential_is_critical() {
        let spec = parse("s.md", "# S\n## Deploy\nkey\n");
        let facts = run(
            &spec,
            None,
            &[Redaction {
                rule: "aws-access-key".into(),
                file: "s.md".into(),
                line: 3,
            }],
            "s.md",
        );
        assert!(facts.critical());
        assert_eq!(facts.findings[0].section.as_deref(), Some("S > Deploy"));
    }
}
