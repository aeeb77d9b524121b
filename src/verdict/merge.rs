//! One verdict from the verdicts of a review done in parts, when the diff
//! does not fit one prompt: every part saw the spec, the criteria and the
//! instructions, and a share of the diff. Every part's findings are kept;
//! the merged verdict approves only when every part does, and a criterion
//! is unmet when any part says so. The one reconciliation: a requirement a
//! part marks satisfied is not also "missing" or "not satisfied" because
//! another part, which did not see that code, could not find it. A quality
//! dimension scores what its lowest part gave it, and a rejection asks for
//! a new plan when any part does; a previous finding is open when any
//! part says so.

use super::schema::{
    CriterionCheck, CriterionStatus, DefectScopeCheck, Kind, Missing, PreviousClaim,
    PreviousStatus, Rejection, RejectionKind, SpecCheck, Verdict,
};

/// The parts' verdicts, in part order, as one. A single part is returned as
/// it is.
pub fn merge(mut parts: Vec<Verdict>) -> Verdict {
    if parts.len() == 1 {
        return parts.remove(0);
    }
    let satisfied: Vec<(usize, String)> = parts
        .iter()
        .enumerate()
        .flat_map(|(n, v)| {
            v.spec_verification
                .iter()
                .filter(|c| c.satisfied)
                .map(move |c| (n, folded(&c.spec_quote)))
        })
        .collect();
    let satisfied_elsewhere = |part: usize, quote: &str| {
        let quote = folded(quote);
        !quote.is_empty() && satisfied.iter().any(|(n, q)| *n != part && *q == quote)
    };

    let mut merged = Verdict {
        verdict: if parts.iter().all(|v| v.verdict == Kind::Approve) {
            Kind::Approve
        } else {
            Kind::RequestChanges
        },
        expectations: String::new(),
        criteria: Vec::new(),
        spec_verification: Vec::new(),
        missing_from_spec: Vec::new(),
        out_of_scope: Vec::new(),
        issues: Vec::new(),
        strengths: Vec::new(),
        defect_scope_check: None,
        scope_violations: Vec::new(),
        dimensions: Default::default(),
        rejection: None,
        previous_findings: Vec::new(),
    };
    let mut expectations: Vec<String> = Vec::new();
    for (n, part) in parts.into_iter().enumerate() {
        let text = part.expectations.trim().to_string();
        if !text.is_empty() && !expectations.contains(&text) {
            expectations.push(text);
        }
        for c in part.criteria {
            merge_criterion(&mut merged.criteria, c);
        }
        for check in part.spec_verification {
            if !check.satisfied && satisfied_elsewhere(n, &check.spec_quote) {
                continue;
            }
            merge_check(&mut merged.spec_verification, check);
        }
        for missing in part.missing_from_spec {
            if satisfied_elsewhere(n, &missing.spec_quote) {
                continue;
            }
            merge_missing(&mut merged.missing_from_spec, missing);
        }
        for item in part.out_of_scope {
            push_new(&mut merged.out_of_scope, item);
        }
        for issue in part.issues {
            push_new(&mut merged.issues, issue);
        }
        for strength in part.strengths {
            push_new(&mut merged.strengths, strength);
        }
        for violation in part.scope_violations {
            push_new(&mut merged.scope_violations, violation);
        }
        for (name, rating) in part.dimensions {
            let lower = merged
                .dimensions
                .get(&name)
                .is_none_or(|have| rating.score < have.score);
            if lower {
                merged.dimensions.insert(name, rating);
            }
        }
        merged.rejection = merge_rejection(merged.rejection.take(), part.rejection);
        for claim in part.previous_findings {
            merge_previous(&mut merged.previous_findings, claim);
        }
        if let Some(check) = part.defect_scope_check {
            let before = merged.defect_scope_check.unwrap_or(DefectScopeCheck {
                scope_ok: true,
                large_diff: false,
            });
            merged.defect_scope_check = Some(DefectScopeCheck {
                scope_ok: before.scope_ok && check.scope_ok,
                large_diff: before.large_diff || check.large_diff,
            });
        }
    }
    merged.expectations = expectations.join("\n\n");
    merged
}

/// One word per previous finding: the least favourable of the parts'
/// (unresolved, then obsolete, then resolved), so one part that still
/// sees it open keeps it open.
fn merge_previous(merged: &mut Vec<PreviousClaim>, claim: PreviousClaim) {
    let rank = |s: PreviousStatus| match s {
        PreviousStatus::Unresolved => 2,
        PreviousStatus::Obsolete => 1,
        PreviousStatus::Resolved => 0,
    };
    match merged
        .iter_mut()
        .find(|c| c.id.eq_ignore_ascii_case(&claim.id))
    {
        None => merged.push(claim),
        Some(have) if rank(claim.status) > rank(have.status) => *have = claim,
        Some(_) => {}
    }
}

/// A plan rejection wins over an implementation one; reasons of the same
/// kind are joined.
fn merge_rejection(have: Option<Rejection>, new: Option<Rejection>) -> Option<Rejection> {
    match (have, new) {
        (None, new) => new,
        (have, None) => have,
        (Some(have), Some(new)) if have.kind == new.kind => {
            let reason = match (have.reason.trim(), new.reason.trim()) {
                (a, b) if b.is_empty() || a.contains(b) => a.to_string(),
                ("", b) => b.to_string(),
                (a, b) => format!("{a}; {b}"),
            };
            Some(Rejection {
                kind: have.kind,
                reason,
            })
        }
        (Some(have), Some(new)) => Some(if have.kind == RejectionKind::Plan {
            have
        } else {
            new
        }),
    }
}

/// Unmet wins over met, met over unverifiable; the evidence of the parts
/// that agree with the result is kept.
fn merge_criterion(criteria: &mut Vec<CriterionCheck>, c: CriterionCheck) {
    let rank = |s: CriterionStatus| match s {
        CriterionStatus::Unmet => 2,
        CriterionStatus::Met => 1,
        CriterionStatus::Unverifiable => 0,
    };
    let Some(have) = criteria
        .iter_mut()
        .find(|have| have.id.trim().eq_ignore_ascii_case(c.id.trim()))
    else {
        criteria.push(c);
        return;
    };
    if rank(c.status) > rank(have.status) {
        *have = c;
    } else if c.status == have.status
        && !c.evidence.trim().is_empty()
        && !have.evidence.contains(c.evidence.trim())
    {
        if have.evidence.trim().is_empty() {
            have.evidence = c.evidence;
        } else {
            have.evidence = format!("{}; {}", have.evidence, c.evidence.trim());
        }
    }
}

/// A quote several parts checked alike is listed once: its evidence and
/// notes are every part's, joined (a quote one part finds satisfied and
/// another not stays twice; `satisfied_elsewhere` already drops the
/// "not satisfied" of a part that did not see the code).
fn merge_check(checks: &mut Vec<SpecCheck>, c: SpecCheck) {
    let quote = folded(&c.spec_quote);
    let Some(have) = checks
        .iter_mut()
        .find(|have| have.satisfied == c.satisfied && folded(&have.spec_quote) == quote)
    else {
        checks.push(c);
        return;
    };
    join(&mut have.evidence, &c.evidence);
    join(&mut have.notes, &c.notes);
}

/// A requirement several parts found missing is listed once, with each
/// part's description.
fn merge_missing(missing: &mut Vec<Missing>, m: Missing) {
    let quote = folded(&m.spec_quote);
    let Some(have) = missing
        .iter_mut()
        .find(|have| !quote.is_empty() && folded(&have.spec_quote) == quote)
    else {
        push_new(missing, m);
        return;
    };
    join(&mut have.description, &m.description);
}

/// `more` after `text` with "; ", unless `text` already says it.
fn join(text: &mut String, more: &str) {
    let more = more.trim();
    if more.is_empty() || text.contains(more) {
        return;
    }
    if text.trim().is_empty() {
        *text = more.to_string();
    } else {
        *text = format!("{}; {more}", text.trim_end());
    }
}

fn push_new<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// A quote as compared across parts: case and spacing aside.
fn folded(quote: &str) -> String {
    quote
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_matches(|c: char| c == '"' || c == '.')
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::schema::{Issue, Missing, Severity, SpecCheck};

    fn part(verdict: Kind) -> Verdict {
        Verdict {
            verdict,
            expectations: "Search returns availability.".into(),
            criteria: vec![],
            spec_verification: vec![],
            missing_from_spec: vec![],
            out_of_scope: vec![],
            issues: vec![],
            strengths: vec![],
            defect_scope_check: None,
            scope_violations: vec![],
            dimensions: Default::default(),
            rejection: None,
            previous_findings: Vec::new(),
        }
    }

    fn criterion(id: &str, status: CriterionStatus, evidence: &str) -> CriterionCheck {
        CriterionCheck {
            id: id.into(),
            status,
            evidence: evidence.into(),
        }
    }

    fn check(quote: &str, satisfied: bool, evidence: &str) -> SpecCheck {
        SpecCheck {
            spec_quote: quote.into(),
            spec_section: "Search".into(),
            satisfied,
            evidence: evidence.into(),
            notes: String::new(),
        }
    }

    fn issue(message: &str) -> Issue {
        Issue {
            severity: Severity::Minor,
            file: Some("src/a.rs".into()),
            line: Some(3),
            end_line: None,
            message: message.into(),
            suggestion: String::new(),
            dimension: None,
        }
    }

    #[test]
    fn a_dimension_scores_its_lowest_part_and_a_plan_rejection_wins() {
        use crate::verdict::schema::DimensionScore;
        let rate = |score: u32, reason: &str| DimensionScore {
            score,
            reason: reason.into(),
        };
        let mut a = part(Kind::RequestChanges);
        a.dimensions
            .insert("code_quality".into(), rate(90, "clean"));
        a.dimensions
            .insert("test_quality".into(), rate(40, "no tests here"));
        a.rejection = Some(Rejection {
            kind: RejectionKind::Implementation,
            reason: "fix the loop".into(),
        });
        let mut b = part(Kind::RequestChanges);
        b.dimensions
            .insert("code_quality".into(), rate(60, "duplicated"));
        b.dimensions.insert("test_quality".into(), rate(80, "good"));
        b.rejection = Some(Rejection {
            kind: RejectionKind::Plan,
            reason: "the criteria contradict the spec".into(),
        });
        let m = merge(vec![a, b]);
        assert_eq!(m.dimensions["code_quality"], rate(60, "duplicated"));
        assert_eq!(m.dimensions["test_quality"], rate(40, "no tests here"));
        let r = m.rejection.unwrap();
        assert_eq!(r.kind, RejectionKind::Plan);
        assert_eq!(r.reason, "the criteria contradict the spec");
    }

    #[test]
    fn one_part_is_itself() {
        let mut p = part(Kind::Approve);
        p.issues.push(issue("x"));
        assert_eq!(merge(vec![p.clone()]), p);
    }

    #[test]
    fn approves_only_when_every_part_does_and_keeps_every_finding() {
        let mut a = part(Kind::Approve);
        a.issues = vec![issue("first"), issue("shared")];
        a.strengths = vec!["tests".into()];
        let mut b = part(Kind::RequestChanges);
        b.expectations = "Errors are reported.".into();
        b.issues = vec![issue("shared"), issue("second")];
        b.strengths = vec!["tests".into()];
        let m = merge(vec![a.clone(), b]);
        assert_eq!(m.verdict, Kind::RequestChanges);
        let messages: Vec<&str> = m.issues.iter().map(|i| i.message.as_str()).collect();
        assert_eq!(messages, ["first", "shared", "second"]);
        assert_eq!(m.strengths, ["tests"]);
        assert_eq!(
            m.expectations,
            "Search returns availability.\n\nErrors are reported."
        );
        let mut c = a.clone();
        c.issues.clear();
        assert_eq!(merge(vec![a, c]).verdict, Kind::Approve);
    }

    #[test]
    fn a_criterion_is_unmet_if_any_part_says_so_met_over_unverifiable() {
        let mut a = part(Kind::Approve);
        a.criteria = vec![
            criterion("AC-1", CriterionStatus::Unverifiable, "in another part"),
            criterion("AC-2", CriterionStatus::Met, "src/a.rs:3"),
        ];
        let mut b = part(Kind::Approve);
        b.criteria = vec![
            criterion("ac-1", CriterionStatus::Met, "tests/a.rs:9"),
            criterion("AC-2", CriterionStatus::Unmet, "no error case"),
            criterion("AC-3", CriterionStatus::Met, "src/b.rs:1"),
        ];
        let mut c = part(Kind::Approve);
        c.criteria = vec![criterion("AC-1", CriterionStatus::Met, "src/c.rs:2")];
        let m = merge(vec![a, b, c]);
        let got: Vec<(&str, CriterionStatus, &str)> = m
            .criteria
            .iter()
            .map(|c| (c.id.as_str(), c.status, c.evidence.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("ac-1", CriterionStatus::Met, "tests/a.rs:9; src/c.rs:2"),
                ("AC-2", CriterionStatus::Unmet, "no error case"),
                ("AC-3", CriterionStatus::Met, "src/b.rs:1"),
            ]
        );
    }

    #[test]
    fn a_part_that_did_not_see_the_code_does_not_undo_one_that_did() {
        let quote = "Search returns at most 20 results.";
        let mut a = part(Kind::Approve);
        a.spec_verification = vec![check(quote, true, "src/search.rs:41")];
        let mut b = part(Kind::RequestChanges);
        b.spec_verification = vec![check("search returns at most 20 results", false, "")];
        b.missing_from_spec = vec![
            Missing {
                spec_quote: quote.into(),
                description: "no cap in this part".into(),
            },
            Missing {
                spec_quote: "Results are paginated.".into(),
                description: "no paging".into(),
            },
        ];
        let m = merge(vec![a, b]);
        assert_eq!(m.spec_verification.len(), 1);
        assert!(m.spec_verification[0].satisfied);
        assert_eq!(m.missing_from_spec.len(), 1);
        assert_eq!(m.missing_from_spec[0].spec_quote, "Results are paginated.");
        // A part's own contradiction stands.
        let mut c = part(Kind::Approve);
        c.spec_verification = vec![check(quote, true, "x"), check(quote, false, "y")];
        let mut d = part(Kind::Approve);
        d.issues.push(issue("z"));
        assert_eq!(merge(vec![c, d]).spec_verification.len(), 2);
    }

    #[test]
    fn a_quote_several_parts_checked_is_listed_once_with_each_parts_evidence() {
        let quote = "Search returns at most 20 results.";
        let mut a = part(Kind::Approve);
        a.spec_verification = vec![check(quote, true, "src/search.rs:41")];
        a.missing_from_spec = vec![Missing {
            spec_quote: "Results are paginated.".into(),
            description: "no paging here".into(),
        }];
        let mut b = part(Kind::Approve);
        b.spec_verification = vec![check(
            " search returns at most 20 results",
            true,
            "tests/search.rs:9",
        )];
        b.missing_from_spec = vec![Missing {
            spec_quote: "results are paginated".into(),
            description: "no paging in the tests".into(),
        }];
        let mut c = part(Kind::Approve);
        c.spec_verification = vec![check(quote, true, "src/search.rs:41")];
        let m = merge(vec![a, b, c]);
        assert_eq!(m.spec_verification.len(), 1, "{:?}", m.spec_verification);
        assert_eq!(m.spec_verification[0].spec_quote, quote);
        assert_eq!(
            m.spec_verification[0].evidence,
            "src/search.rs:41; tests/search.rs:9"
        );
        assert_eq!(m.missing_from_spec.len(), 1);
        assert_eq!(
            m.missing_from_spec[0].description,
            "no paging here; no paging in the tests"
        );
    }
}
