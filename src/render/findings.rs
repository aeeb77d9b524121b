//! Findings: every point of a report that someone acts on, flattened into one
//! list with a rule id, a level and a place, so the CI printers (SARIF, JUnit,
//! GitHub annotations) and the terminal's counts agree on what a review found.
//! The report stays the source; this is a view of it, computed on demand.
//!
//! Rule ids name where a finding comes from: `overrule/<rule>` for each
//! reason speed turned an approval down, `check/<name>` for speed's own
//! checks (secrets found and redacted among them), `review/<severity>` for
//! the model's issues, `review/<kind>` for its other findings,
//! `guardian/<severity>` for the guardian's flags, `review/unseen-file` and
//! `review/file-by-name` for changed files the model did not see, and
//! `review/evidence-not-found` for a location the verdict cites that is not
//! there, and `defect/<kind>` for what speed established about a defect fix
//! (and the scope violations its review listed).

use crate::ledger::Report;
use crate::verdict::{CriterionStatus, Kind, Severity};

/// How serious a finding is, in SARIF's words (GitHub's `::notice` is `Note`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }

    /// critical and major block (error), minor warns, a nit is a note.
    pub fn of(severity: Severity) -> Level {
        match severity {
            Severity::Critical | Severity::Major => Level::Error,
            Severity::Minor => Level::Warning,
            Severity::Nit => Level::Note,
        }
    }
}

/// One finding of one review.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// A stable id: `review/major`, `overrule/fabricated_quote`, ...
    pub rule: String,
    pub level: Level,
    /// Repository-relative path, when the finding has a place.
    pub file: Option<String>,
    pub line: Option<u64>,
    pub end_line: Option<u64>,
    /// The column a tool gave, kept only beside a line.
    pub column: Option<u64>,
    pub message: String,
    /// What to do about it, when the finding says.
    pub suggestion: Option<String>,
    /// Which part of the message says what the finding is, for an identity
    /// that lasts across runs (SARIF fingerprints).
    pub words: Words,
}

/// What of a finding's message identifies it across runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Words {
    /// speed wrote it: its first line, numbers aside, is the same each run.
    Speed,
    /// A model wrote it, and words it anew each run: it identifies the
    /// finding only when nothing else does (no content to point at).
    Model,
    /// These words, whatever the message says around them (a criterion's
    /// id, a spec quote).
    Key(String),
}

impl Words {
    /// The stable part of `message`; `pointed` says whether the finding
    /// points at content that identifies it on its own.
    pub fn stable(&self, message: &str, pointed: bool) -> String {
        match self {
            // A key is identity as it stands: AC-1 is not AC-2.
            Words::Key(key) => key.split_whitespace().collect::<Vec<_>>().join(" "),
            Words::Model if pointed => String::new(),
            Words::Speed | Words::Model => {
                normalize(message.lines().find(|l| !l.trim().is_empty()).unwrap_or(""))
            }
        }
    }
}

/// Words without what changes from run to run while the finding stays:
/// spacing, numbers (line numbers, counts, durations) and commit ids.
fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        let hexish = word.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        if hexish.len() >= 7
            && hexish.bytes().all(|b| b.is_ascii_hexdigit())
            && hexish.bytes().any(|b| b.is_ascii_digit())
        {
            out.push_str(&word.replace(hexish, "#"));
            continue;
        }
        let mut digits = false;
        for c in word.chars() {
            if c.is_ascii_digit() {
                if !digits {
                    out.push('0');
                }
                digits = true;
            } else {
                digits = false;
                out.push(c);
            }
        }
    }
    out
}

impl Finding {
    pub(super) fn new(rule: String, level: Level, message: String) -> Finding {
        Finding {
            rule,
            level,
            file: None,
            line: None,
            end_line: None,
            column: None,
            message,
            suggestion: None,
            words: Words::Speed,
        }
    }

    /// Written by a model (see `Words::Model`).
    pub(super) fn by_model(mut self) -> Finding {
        self.words = Words::Model;
        self
    }

    /// Known across runs by these words.
    pub(super) fn known_by(mut self, key: &str) -> Finding {
        self.words = Words::Key(key.trim().to_string());
        self
    }

    pub(super) fn at(mut self, file: Option<&str>, line: Option<u64>) -> Finding {
        self.file = file
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(str::to_string);
        self.line = line.filter(|l| *l > 0 && self.file.is_some());
        self
    }

    /// The column, kept only beside a line.
    fn column(mut self, column: Option<u64>) -> Finding {
        self.column = column.filter(|c| *c > 0 && self.line.is_some());
        self
    }

    /// The last line of a range, kept only after a first line.
    fn until(mut self, end_line: Option<u64>) -> Finding {
        self.end_line = end_line.filter(|end| self.line.is_some_and(|start| *end > start));
        self
    }

    pub(super) fn suggest(mut self, suggestion: &str) -> Finding {
        let suggestion = suggestion.trim();
        self.suggestion = (!suggestion.is_empty()).then(|| suggestion.to_string());
        self
    }

    /// `path:line:column`, `path:line`, `path`, or None.
    pub fn place(&self) -> Option<String> {
        match (&self.file, self.line, self.column) {
            (Some(file), Some(line), Some(column)) => Some(format!("{file}:{line}:{column}")),
            (Some(file), Some(line), None) => Some(format!("{file}:{line}")),
            (Some(file), None, _) => Some(file.clone()),
            _ => None,
        }
    }
}

/// Every finding of a report, in the order a developer reads them: speed's
/// overrules and checks, the model's issues, criteria, spec requirements,
/// out-of-scope code, the guardian's flags, then what the review could not
/// see or check (files left out of the prompt, citations not found).
pub fn of(report: &Report) -> Vec<Finding> {
    let mut out = Vec::new();
    for o in &report.overrules {
        out.push(Finding::new(
            format!("overrule/{}", o.rule.as_str()),
            Level::Error,
            format!("speed overruled the approval: {}", o.reason),
        ));
    }
    for check in &report.checks {
        // What does not block (preexisting, or a check that never blocks)
        // is at most a warning.
        let level = match Level::of(check.severity) {
            Level::Error if !check.blocking() => Level::Warning,
            level => level,
        };
        out.push(
            Finding::new(format!("check/{}", check.check), level, check.text())
                .at(check.file.as_deref(), check.line.map(u64::from))
                .column(check.column.map(u64::from)),
        );
    }
    if let Some(defect) = &report.defect {
        out.extend(defect_findings(defect));
    }
    if let Some(review) = &report.review {
        out.extend(review_findings(report, review));
    }
    for flag in &report.guardian.flags {
        let message = if flag.spec_reference.trim().is_empty() {
            format!("Guardian: {}", flag.description.trim())
        } else {
            format!(
                "Guardian: {} ({})",
                flag.description.trim(),
                flag.spec_reference.trim()
            )
        };
        out.push(
            Finding::new(
                format!("guardian/{}", flag.severity.as_str()),
                Level::of(flag.severity),
                message,
            )
            .by_model(),
        );
    }
    for file in &report.coverage.diff.files_omitted {
        // Left out for budget: unseen code, a warning. By name only
        // (lockfiles, generated, binary): by design, a note.
        let (rule, level) = if file.reason.contains("budget") {
            ("review/unseen-file", Level::Warning)
        } else {
            ("review/file-by-name", Level::Note)
        };
        out.push(
            Finding::new(
                rule.to_string(),
                level,
                format!("Not shown to the reviewer: {}", file.reason),
            )
            .at(Some(&file.path), None),
        );
    }
    for c in report.evidence.iter().filter(|c| !c.found) {
        out.push(
            Finding::new(
                "review/evidence-not-found".to_string(),
                Level::Note,
                format!(
                    "The review cites {} ({}), which is not in the diff or the files at the head commit",
                    c.reference, c.from
                ),
            )
            .known_by(&c.reference),
        );
    }
    // A request for changes always shows as an error, even when the model
    // gave no blocking finding to say why.
    if report.verdict == Some(Kind::RequestChanges) && !out.iter().any(|f| f.level == Level::Error)
    {
        let why = report
            .feedback
            .as_deref()
            .and_then(|f| f.lines().map(str::trim).find(|l| !l.is_empty()))
            .unwrap_or("no finding was given");
        out.push(
            Finding::new(
                "review/request-changes".to_string(),
                Level::Error,
                format!("The review requested changes: {why}"),
            )
            .known_by(""),
        );
    }
    out
}

/// The model's own findings: its issues, the criteria it could not
/// confirm, requirements unsatisfied or missing, code out of scope.
fn review_findings(report: &Report, review: &crate::verdict::Verdict) -> Vec<Finding> {
    let mut out = Vec::new();
    for issue in &review.issues {
        out.push(
            Finding::new(
                format!("review/{}", issue.severity.as_str()),
                Level::of(issue.severity),
                issue.message.clone(),
            )
            .at(issue.file.as_deref(), issue.line)
            .until(issue.end_line)
            .suggest(&issue.suggestion)
            .by_model(),
        );
    }
    for c in &review.criteria {
        let (rule, level) = match c.status {
            CriterionStatus::Met => continue,
            CriterionStatus::Unmet => ("review/unmet-criterion", Level::Error),
            CriterionStatus::Unverifiable => ("review/unverifiable-criterion", Level::Warning),
        };
        let why = if c.evidence.trim().is_empty() {
            String::new()
        } else {
            format!(": {}", c.evidence.trim())
        };
        out.push(
            Finding::new(
                rule.to_string(),
                level,
                format!("{} is {}{why}", c.id, c.status.as_str()),
            )
            .known_by(&c.id),
        );
    }
    for check in review.spec_verification.iter().filter(|c| !c.satisfied) {
        let (file, line) = spec_place(report, &check.spec_quote);
        let notes = [check.notes.trim(), check.evidence.trim()]
            .into_iter()
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        let message = if notes.is_empty() {
            format!("Not satisfied: \"{}\"", check.spec_quote.trim())
        } else {
            format!("Not satisfied: \"{}\" ({notes})", check.spec_quote.trim())
        };
        out.push(
            Finding::new(
                "review/unsatisfied-requirement".to_string(),
                Level::Warning,
                message,
            )
            .at(file, line)
            .known_by(&check.spec_quote),
        );
    }
    for m in &review.missing_from_spec {
        let (file, line) = spec_place(report, &m.spec_quote);
        let message = if m.spec_quote.trim().is_empty() {
            format!("Missing: {}", m.description.trim())
        } else {
            format!(
                "Missing: \"{}\": {}",
                m.spec_quote.trim(),
                m.description.trim()
            )
        };
        out.push(
            Finding::new(
                "review/missing-from-spec".to_string(),
                Level::Warning,
                message,
            )
            .at(file, line)
            .known_by(if m.spec_quote.trim().is_empty() {
                &m.description
            } else {
                &m.spec_quote
            }),
        );
    }
    for o in &review.out_of_scope {
        out.push(
            Finding::new(
                "review/out-of-scope".to_string(),
                Level::Warning,
                format!("Out of scope: {}", o.description.trim()),
            )
            .at(Some(&o.file), o.line)
            .until(o.end_line)
            .by_model(),
        );
    }
    out
}

/// Where a quote was found in the spec, so a finding about a requirement
/// points at it.
fn spec_place<'a>(report: &'a Report, quote: &str) -> (Option<&'a str>, Option<u64>) {
    let quote = quote.trim();
    if quote.is_empty() {
        return (None, None);
    }
    report
        .quotes
        .iter()
        .find(|q| q.found && q.spec_quote.trim() == quote)
        .map_or((None, None), |q| {
            (q.doc_path.as_deref(), q.line.map(|l| l as u64))
        })
}

/// What a rule id means, for SARIF's rule descriptors and summaries.
/// What speed established about a defect fix, and the scope violations
/// the review itself listed, each at its file.
fn defect_findings(defect: &crate::ledger::report::DefectBlock) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(found) = &defect.speed {
        for v in &found.scope_violations {
            out.push(
                Finding::new(
                    "defect/outside-affected-files".to_string(),
                    Level::Error,
                    v.description.clone(),
                )
                .at(Some(&v.file), None),
            );
        }
        for c in &found.test_changes {
            out.push(
                Finding::new(
                    "defect/reproducing-test-changed".to_string(),
                    Level::Error,
                    c.description.clone(),
                )
                .at(Some(&c.path), None),
            );
        }
        if found.size.large {
            out.push(Finding::new(
                "defect/large-fix".to_string(),
                Level::Warning,
                format!(
                    "The fix is large for a defect fix: {}",
                    found.size.describe()
                ),
            ));
        }
    }
    for v in defect.model.iter().flat_map(|m| &m.scope_violations) {
        out.push(
            Finding::new(
                "defect/scope-violation".to_string(),
                Level::Error,
                format!("Out of the defect's scope: {}", v.description.trim()),
            )
            .at(Some(&v.file), None)
            .by_model(),
        );
    }
    out
}

pub fn describe(rule: &str) -> String {
    let known = match rule {
        "defect/outside-affected-files" => {
            "A defect fix changes a file its triage's affected_files does not list"
        }
        "defect/reproducing-test-changed" => {
            "A later commit changed the test that reproduced the defect"
        }
        "defect/large-fix" => "A defect fix larger than defect.max_lines or defect.max_files",
        "defect/scope-violation" => "The review found a change beyond the defect's scope",
        "overrule/outside_affected_files" => {
            "An approval of a defect fix that changes files outside its triage's affected_files"
        }
        "overrule/scope_not_ok" => {
            "An approval of a defect fix whose review says its scope is not ok"
        }
        "overrule/reproducing_test_changed" => {
            "An approval of a defect fix whose reproducing test was changed"
        }
        "review/critical" => "The reviewer found a critical issue",
        "review/major" => "The reviewer found a major issue",
        "review/minor" => "The reviewer found a minor issue",
        "review/nit" => "The reviewer found a nit",
        "review/unmet-criterion" => "An acceptance criterion is not met",
        "review/unverifiable-criterion" => {
            "An acceptance criterion cannot be verified from the diff"
        }
        "review/unsatisfied-requirement" => "A spec requirement is not satisfied",
        "review/missing-from-spec" => "The spec asks for something the change does not implement",
        "review/out-of-scope" => "Code no spec line asks for",
        "review/request-changes" => "The review requested changes",
        "review/unseen-file" => "A changed file the model did not see (left out for budget)",
        "review/file-by-name" => {
            "A changed file shown by name only (lockfile, generated, vendored, binary)"
        }
        "review/evidence-not-found" => "The review cites a location that does not exist",
        "overrule/fabricated_quote" => {
            "An approval rests on a spec quote the spec does not contain"
        }
        "overrule/quote_too_short" => {
            "An approval rests on a spec quote too short to identify a requirement"
        }
        "overrule/quote_in_comment" => {
            "An approval rests on text inside an HTML comment of the spec, which is not spec text"
        }
        "overrule/blocking_issue" => "An approval came with a critical or major issue",
        "overrule/unmet_criterion" => "An approval left an acceptance criterion unmet",
        "overrule/unchecked_criterion" => "An approval did not report on an acceptance criterion",
        "overrule/spec_edited" => "The task's diff edits its own spec",
        "overrule/guardian_rejected" => "The guardian gate rejected the approval",
        "overrule/check_failed" => "An approval came with a blocking finding of speed's checks",
        "overrule/dimension_below_minimum" => {
            "An approval with a quality dimension scored under its minimum"
        }
        "overrule/overall_below_threshold" => {
            "An approval whose overall quality score is under review.pass_score"
        }
        _ => "",
    };
    if !known.is_empty() {
        return known.to_string();
    }
    match rule.split_once('/') {
        Some(("overrule", name)) => {
            format!("speed overruled an approval ({})", name.replace('_', " "))
        }
        Some(("guardian", severity)) => format!("The guardian flagged a {severity} concern"),
        Some(("check", name)) => check_description(name),
        Some((_, name)) => name.replace(['_', '-'], " "),
        None => rule.to_string(),
    }
}

/// speed's built-in checks, as docs/checks.md's table names them; a command
/// check is named by its configuration.
fn check_description(name: &str) -> String {
    let known = match name {
        "empty_diff" => "Nothing changed",
        "scope" => "A changed file outside the task's declared scope",
        "breaking_change" => {
            "A removed symbol that is still referenced where the diff does not update it"
        }
        "secret" => "A secret in the change (redacted everywhere speed sends or writes it)",
        "placeholder" => {
            "A placeholder body (todo!(), unimplemented!(), NotImplementedError, pass) in non-test code"
        }
        "debug_leftover" => "A debugging leftover (dbg!, breakpoint(), pdb.set_trace())",
        "test_weakened" => {
            "A test deleted, newly skipped or ignored, left asserting less, or added skipped"
        }
        "untested_criterion" => "Criteria to be verified by test while the diff changes no test",
        "large_diff" => "More changed lines or files than configured",
        "coordination" => {
            "A coordination requirement broken: a function profile, a shared interface or the directory structure"
        }
        "error_discarded" => {
            "An error the change discards: an Err(_) arm that carries on, let _ = on a Result, .ok(); or a broad except that passes"
        }
        _ => return format!("The configured check `{name}` failed"),
    };
    known.to_string()
}

/// Where a finding shows in CI: its own file (and line), else the first
/// line of the spec the review was judged against, so code scanning and
/// annotations put every finding somewhere, and in the same place.
pub fn anchor<'a>(report: &'a Report, finding: &'a Finding) -> Option<(&'a str, Option<u64>)> {
    match &finding.file {
        Some(file) => Some((file.as_str(), finding.line)),
        None => report.specs.first().map(|spec| (spec.as_str(), Some(1))),
    }
}

/// "3 errors, 1 warning, 0 notes".
pub fn count_words(findings: &[Finding]) -> String {
    let (errors, warnings, notes) = counts(findings);
    format!(
        "{}, {}, {}",
        super::plural(errors, "error"),
        super::plural(warnings, "warning"),
        super::plural(notes, "note")
    )
}

/// How many findings of each level: (errors, warnings, notes).
pub fn counts(findings: &[Finding]) -> (usize, usize, usize) {
    let n = |level| findings.iter().filter(|f| f.level == level).count();
    (n(Level::Error), n(Level::Warning), n(Level::Note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::work::Subject;

    use crate::verdict::{Issue, Overrule, Rule};

    fn report() -> Report {
        crate::ledger::Report::new(&Subject::Branch {
            branch: "feature/x".into(),
            specs: Vec::new(),
            criteria: Vec::new(),
            criteria_file: None,
        })
    }

    #[test]
    fn overrules_and_checks_come_first_with_their_levels_and_places() {
        let mut r = report();
        r.overrules.push(Overrule {
            rule: Rule::FabricatedQuote,
            reason: "the quote is not in the spec".into(),
        });
        r.checks.push(crate::checks::Finding {
            check: "debug_leftover".into(),
            severity: Severity::Minor,
            file: Some("src/a.rs".into()),
            line: Some(3),
            message: "dbg! added".into(),
            ..Default::default()
        });
        let found = of(&r);
        let rules: Vec<&str> = found.iter().map(|f| f.rule.as_str()).collect();
        assert_eq!(rules, ["overrule/fabricated_quote", "check/debug_leftover"]);
        assert_eq!(found[0].level, Level::Error);
        assert_eq!(found[0].place(), None);
        assert_eq!(found[1].level, Level::Warning);
        assert_eq!(found[1].place().as_deref(), Some("src/a.rs:3"));
        assert!(describe("check/debug_leftover").contains("dbg!"));
        assert!(describe("check/clippy").contains("`clippy`"));
        assert!(describe("overrule/some_new_rule").contains("some new rule"));
    }

    #[test]
    fn a_tools_finding_keeps_its_column_rule_and_weight() {
        let mut r = report();
        r.checks.push(crate::checks::Finding {
            check: "clippy".into(),
            category: Some(crate::checks::Category::Lint),
            severity: Severity::Major,
            file: Some("src/lib.rs".into()),
            line: Some(20),
            column: Some(5),
            rule: Some("clippy::needless_return".into()),
            message: "unneeded `return` statement".into(),
            ..Default::default()
        });
        r.checks.push(crate::checks::Finding {
            check: "clippy".into(),
            severity: Severity::Major,
            file: Some("src/lib.rs".into()),
            line: Some(10),
            column: Some(5),
            rule: Some("clippy::len_zero".into()),
            message: "length comparison to zero".into(),
            preexisting: true,
            advisory: true,
            ..Default::default()
        });
        let found = of(&r);
        assert_eq!(found[0].place().as_deref(), Some("src/lib.rs:20:5"));
        assert_eq!(found[0].level, Level::Error);
        assert_eq!(
            found[0].message,
            "[clippy::needless_return] unneeded `return` statement"
        );
        assert_eq!(found[1].level, Level::Warning);
        assert!(
            found[1].message.contains("preexisting"),
            "{}",
            found[1].message
        );
    }

    #[test]
    fn a_request_for_changes_without_a_blocking_finding_is_still_an_error() {
        let mut r = report();
        r.verdict = Some(Kind::RequestChanges);
        r.feedback = Some("\n  Rename the module.\nMore.".into());
        let found = of(&r);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule, "review/request-changes");
        assert_eq!(found[0].level, Level::Error);
        assert!(
            found[0].message.ends_with("Rename the module."),
            "{found:?}"
        );

        // With an error-level finding, nothing is added.
        r.checks.push(crate::checks::Finding {
            check: "scope".into(),
            severity: Severity::Major,
            file: Some("src/b.rs".into()),
            line: None,
            message: "outside the scope".into(),
            ..Default::default()
        });
        assert_eq!(of(&r).len(), 1);
    }

    #[test]
    fn the_stable_words_leave_out_numbers_commits_and_model_prose() {
        assert_eq!(
            normalize("dbg!  added at line 12 of 3f9a2c1d4e"),
            "dbg! added at line 0 of #"
        );
        assert_eq!(normalize("u32 and AC-12"), "u0 and AC-0");
        // Words of letters only are not commit ids.
        assert_eq!(normalize("deadbeefcafe"), "deadbeefcafe");
        let model = Words::Model;
        assert_eq!(model.stable("Off by one\nmore", true), "");
        assert_eq!(model.stable("Off by  one\nmore", false), "Off by one");
        assert_eq!(
            Words::Key(" AC-1 ".into()).stable("AC-1 is unmet: x", true),
            "AC-1"
        );
        assert_eq!(
            Words::Speed.stable("\n512 changed lines\ndetail", false),
            "0 changed lines"
        );
    }

    #[test]
    fn a_range_ends_after_it_starts() {
        let at = |line, end| {
            Finding::new("review/minor".into(), Level::Warning, "m".into())
                .at(Some("src/a.rs"), line)
                .until(end)
                .end_line
        };
        assert_eq!(at(Some(42), Some(50)), Some(50));
        assert_eq!(at(Some(42), Some(42)), None);
        assert_eq!(at(Some(42), Some(7)), None);
        assert_eq!(at(None, Some(50)), None);
    }

    #[test]
    fn a_line_without_a_file_is_dropped_and_blank_files_are_none() {
        let f =
            Finding::new("review/minor".into(), Level::Warning, "m".into()).at(Some("  "), Some(4));
        assert_eq!((f.file, f.line), (None, None));
        let issue = Issue {
            severity: Severity::Nit,
            file: Some("src/c.rs".into()),
            line: Some(0),
            end_line: None,
            message: "zero is no line".into(),
            suggestion: String::new(),
            dimension: None,
        };
        let mut r = report();
        r.review = Some(crate::verdict::Verdict {
            verdict: Kind::Approve,
            expectations: String::new(),
            criteria: Vec::new(),
            spec_verification: Vec::new(),
            missing_from_spec: Vec::new(),
            out_of_scope: Vec::new(),
            issues: vec![issue],
            strengths: Vec::new(),
            defect_scope_check: None,
            scope_violations: Vec::new(),
            dimensions: Default::default(),
            rejection: None,
            previous_findings: Vec::new(),
        });
        let found = of(&r);
        assert_eq!(found[0].place().as_deref(), Some("src/c.rs"));
        assert_eq!(found[0].suggestion, None);
        assert_eq!(found[0].level, Level::Note);
    }
}
