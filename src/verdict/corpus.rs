//! The corpus of model answers in `fixtures/answers/`, each with the outcome
//! a correct gate must reach, run through extraction, validation and the
//! decision against one context (`context.json`, `spec.md`, and the product
//! vision `vision.md`, whose quotes are checked but are no spec basis). One
//! file per answer:
//!
//! ```text
//! about: what the answer tries
//! answer: review | guardian          (optional; review by default)
//! dimensions: default | name, name    (optional: the quality dimensions asked;
//!                                      none by default; `default` is the
//!                                      contract's five, held to their minimums
//!                                      and the pass score as speed holds them)
//! previous: PF-1, PF-2                (optional: a re-review, these previous
//!                                      findings listed; `previous` in
//!                                      context.json says what they were)
//! touched: PF-1                        (optional: which of them the changes
//!                                      since the last review touched, instead
//!                                      of context.json's word)
//! expect: approve | request_changes | overruled: rule, rule | invalid: text | <guardian status>
//! nowhere: ref, ref                  (optional: citations that must be marked not found)
//! turn: approval_under_minimum | nothing_blocking | none
//!                                     (optional: the reconcile turn the answer
//!                                      calls for; see `reconcile`)
//! ---
//! the answer, verbatim
//! --- second ---                      (optional: the answer to the reconcile
//! the second answer, verbatim          turn, which decides when usable)
//! ```
//!
//! Every answer is also played as the second answer of a conversation whose
//! first answer contradicted itself: the turn may change which answer
//! decides, never what an answer earns, so no answer the corpus does not
//! approve ends in an approval that way.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::git::diff::{Diff, FileDiff, FileStatus, Hunk, Line, LineKind};
use crate::specs::{self, QuoteIndex, Section};

use super::dimensions::{self, Scoring};
use super::{
    DecisionInput, Expect, Kind, QuoteHit, Sources, decide, parse_expecting, parse_guardian,
};

const VISION_PATH: &str = "specs/product/overview.md";

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/answers")
}

struct Case {
    name: String,
    guardian: bool,
    /// The dimensions asked, by name.
    dimensions: Vec<String>,
    expect: String,
    nowhere: Vec<String>,
    /// A re-review: the previous findings listed, and those touched when
    /// the case says.
    previous: Vec<String>,
    touched: Option<Vec<String>>,
    answer: String,
    /// The answer to the reconcile turn.
    second: Option<String>,
    /// The turn the first answer calls for, when the case says.
    turn: Option<String>,
}

fn read_case(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).expect("readable case");
    let (head, answer) = text
        .split_once("\n---\n")
        .unwrap_or_else(|| panic!("{}: no --- line", path.display()));
    let (answer, second) = match answer.split_once("\n--- second ---\n") {
        Some((first, second)) => (first, Some(second.to_string())),
        None => (answer, None),
    };
    let mut case = Case {
        name: path.file_stem().unwrap().to_string_lossy().into_owned(),
        guardian: false,
        dimensions: Vec::new(),
        expect: String::new(),
        nowhere: Vec::new(),
        previous: Vec::new(),
        touched: None,
        answer: answer.to_string(),
        second,
        turn: None,
    };
    for line in head.lines() {
        let (key, value) = line.split_once(": ").expect("key: value");
        match key {
            "about" => {}
            "answer" => case.guardian = value == "guardian",
            "dimensions" if value == "default" => {
                case.dimensions = dimensions::names(&Scoring::default().asked(false))
                    .into_iter()
                    .map(str::to_string)
                    .collect()
            }
            "dimensions" => case.dimensions = value.split(", ").map(str::to_string).collect(),
            "expect" => case.expect = value.to_string(),
            "nowhere" => case.nowhere = value.split(", ").map(str::to_string).collect(),
            "previous" => case.previous = value.split(", ").map(str::to_string).collect(),
            "touched" => case.touched = Some(value.split(", ").map(str::to_string).collect()),
            "turn" => case.turn = Some(value.to_string()),
            other => panic!("{}: unknown key {other}", path.display()),
        }
    }
    assert!(!case.expect.is_empty(), "{}: no expect", case.name);
    case
}

/// The diff of `context.json`: hunks from their ranges and line numbers.
fn diff(context: &Value) -> Diff {
    let files = context["diff"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let n = |v: &Value| v.as_u64().unwrap() as u32;
            let hunks: Vec<Hunk> = f["hunks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| {
                    let r: Vec<u32> = h["range"].as_array().unwrap().iter().map(n).collect();
                    let mut lines: Vec<Line> = h["removed"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|o| Line {
                            kind: LineKind::Removed,
                            old_lineno: Some(n(o)),
                            new_lineno: None,
                            text: "old".into(),
                            no_newline: false,
                        })
                        .collect();
                    lines.extend(h["added"].as_array().unwrap().iter().map(|a| Line {
                        kind: LineKind::Added,
                        old_lineno: None,
                        new_lineno: Some(n(a)),
                        text: "new".into(),
                        no_newline: false,
                    }));
                    Hunk {
                        old_start: r[0],
                        old_lines: r[1],
                        new_start: r[2],
                        new_lines: r[3],
                        context: String::new(),
                        lines,
                    }
                })
                .collect();
            let count = |kind| {
                hunks
                    .iter()
                    .flat_map(|h| &h.lines)
                    .filter(|l| l.kind == kind)
                    .count()
            };
            FileDiff {
                path: f["path"].as_str().unwrap().to_string(),
                old_path: None,
                similarity: None,
                status: match f["status"].as_str().unwrap() {
                    "added" => FileStatus::Added,
                    "deleted" => FileStatus::Deleted,
                    _ => FileStatus::Modified,
                },
                binary: false,
                old_mode: None,
                new_mode: None,
                old_blob: None,
                new_blob: None,
                additions: count(LineKind::Added),
                deletions: count(LineKind::Removed),
                not_utf8: false,
                hunks,
            }
        })
        .collect();
    Diff {
        base_commit: "base".into(),
        head_commit: "head".into(),
        files,
        sha256: String::new(),
    }
}

/// The previous findings of `context.json` the case lists, touched as
/// the case (or the context) says.
fn previous_facts(case: &Case, context: &Value) -> Vec<super::previous::Fact> {
    context["previous"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| case.previous.iter().any(|id| p["id"] == id.as_str()))
        .map(|p| {
            let id = p["id"].as_str().unwrap().to_string();
            let touched = match &case.touched {
                Some(touched) => touched.contains(&id),
                None => p["touched"].as_bool().unwrap(),
            };
            super::previous::Fact {
                id,
                blocking: p["blocking"].as_bool().unwrap(),
                file: p["file"].as_str().map(str::to_string),
                line: p["line"].as_u64(),
                message: p["message"].as_str().unwrap().to_string(),
                touched,
                person: None,
            }
        })
        .collect()
}

/// The context every answer is judged in.
struct Judge {
    context: Value,
    index: QuoteIndex,
    diff: Diff,
}

/// The dimensions a case asks, as speed holds them.
fn asked(case: &Case) -> Vec<dimensions::Dimension> {
    Scoring::default()
        .dimensions
        .into_iter()
        .filter(|d| case.dimensions.contains(&d.name))
        .collect()
}

/// An answer as the case's review reads it.
fn parse(case: &Case, text: &str) -> Result<super::Verdict, super::Error> {
    let names: Vec<&str> = case.dimensions.iter().map(String::as_str).collect();
    let previous: Vec<&str> = case.previous.iter().map(String::as_str).collect();
    let expect = Expect {
        defect: false,
        dimensions: &names,
        previous: &previous,
    };
    parse_expecting(text, &expect)
}

/// The reconcile turn `first` calls for, by its reason's name or "none".
fn turn_of(case: &Case, first: &super::Verdict) -> Option<super::reconcile::Turn> {
    let asked = asked(case);
    let asked: Vec<&dimensions::Dimension> = asked.iter().collect();
    super::reconcile::turn(first, &asked, Scoring::default().pass_score, false)
}

/// The conversation as the review pipeline plays it: the first answer;
/// when it contradicts itself, the second, which decides when usable.
/// Returns what the gate decided, and the turn's reason ("none" without).
fn play(
    case: &Case,
    judge: &Judge,
    first: &str,
    second: Option<&str>,
) -> (String, Vec<String>, String) {
    let first = match parse(case, first) {
        Ok(v) => v,
        Err(e) => return (format!("invalid: {e}"), Vec::new(), "none".to_string()),
    };
    let Some(turn) = turn_of(case, &first) else {
        let (said, nowhere) = decided(case, judge, &first);
        return (said, nowhere, "none".to_string());
    };
    let answer = match second.map(|text| parse(case, text)) {
        Some(Ok(second)) => second,
        // No second answer, or one that cannot be used: the first decides.
        Some(Err(_)) | None => first,
    };
    let (said, nowhere) = decided(case, judge, &answer);
    (said, nowhere, turn.reason.as_str().to_string())
}

/// What the gate decided, in the words of `expect:`.
fn outcome(case: &Case, judge: &Judge) -> (String, Vec<String>, String) {
    if case.guardian {
        return match parse_guardian(&case.answer) {
            Ok(g) => (
                g.status.as_str().to_string(),
                Vec::new(),
                "none".to_string(),
            ),
            Err(e) => (format!("invalid: {e}"), Vec::new(), "none".to_string()),
        };
    }
    play(case, judge, &case.answer, case.second.as_deref())
}

/// speed's decision on one usable answer.
fn decided(case: &Case, judge: &Judge, verdict: &super::Verdict) -> (String, Vec<String>) {
    let (context, index, diff) = (&judge.context, &judge.index, &judge.diff);
    let verdict = verdict.clone();
    let head = context["head"].as_object().unwrap();
    let paths: Vec<String> = head.keys().cloned().collect();
    let lines = |p: &str| Ok(head.get(p).and_then(Value::as_u64).map(|n| n as usize));
    let sources = Sources {
        diff,
        lines_at_head: &lines,
        head_paths: &paths,
    };
    let find = |quote: &str| {
        index
            .look_up(quote)
            .map(|h| QuoteHit {
                vision: h.doc_path == VISION_PATH,
                doc_path: h.doc_path,
                section: h.section,
                line: h.line,
            })
            .map_err(|miss| match miss {
                specs::quote::Miss::NotFound => crate::verdict::QuoteMiss::NotInSpec,
                specs::quote::Miss::TooShort => crate::verdict::QuoteMiss::TooShort,
            })
    };
    let d = decide(
        &verdict,
        &DecisionInput {
            find_quote: &find,
            spec_sent: true,
            spec_edits: Vec::new(),
            criteria_ids: context["criteria"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect(),
            sources: Some(&sources),
            unseen: None,
        },
    );
    // A re-review's previous findings, as the review pipeline checks them.
    let mut d = d;
    if !case.previous.is_empty() {
        super::previous::apply(&mut d, &verdict, &previous_facts(case, context));
    }
    // The score rules as the review pipeline applies them after these.
    let scoring = Scoring::default();
    let asked = asked(case);
    let asked: Vec<&dimensions::Dimension> = asked.iter().collect();
    if let Some(scores) = dimensions::score(&verdict, &asked, scoring.pass_score) {
        if d.model == Kind::Approve {
            d.overrules.extend(scores.overrules());
            if !d.overrules.is_empty() {
                d.final_verdict = Kind::RequestChanges;
            }
        }
    }
    let nowhere = d
        .citations
        .iter()
        .filter(|c| !c.found)
        .map(|c| c.reference.clone())
        .collect();
    let said = match (d.model, d.final_verdict) {
        (Kind::Approve, Kind::Approve) => "approve".to_string(),
        (Kind::Approve, _) => format!(
            "overruled: {}",
            d.overrules
                .iter()
                .map(|o| o.rule.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        (model, _) => model.as_str().to_string(),
    };
    (said, nowhere)
}

fn judge() -> Judge {
    let context: Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("context.json")).unwrap())
            .unwrap();
    let spec = specs::parse(
        "specs/product/catalog.md",
        &std::fs::read_to_string(dir().join("spec.md")).unwrap(),
    );
    let vision = specs::parse(
        VISION_PATH,
        &std::fs::read_to_string(dir().join("vision.md")).unwrap(),
    );
    let sent: Vec<(String, Section)> = [&spec, &vision]
        .iter()
        .flat_map(|doc| doc.sections.iter().map(|s| (doc.path.clone(), s.clone())))
        .collect();
    let index = QuoteIndex::new(&sent);
    let diff = diff(&context);
    Judge {
        context,
        index,
        diff,
    }
}

fn cases() -> Vec<Case> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    paths.sort();
    paths.iter().map(|p| read_case(p)).collect()
}

#[test]
fn every_answer_in_the_corpus_reaches_its_outcome() {
    let judge = judge();
    let cases = cases();
    assert!(cases.len() >= 45, "the corpus is {} answers", cases.len());
    let mut wrong = Vec::new();
    for case in &cases {
        let (said, nowhere, turn) = outcome(case, &judge);
        let right = match case.expect.strip_prefix("invalid: ") {
            Some(text) => said.starts_with("invalid: ") && said.contains(text),
            None => said == case.expect,
        };
        if !right {
            wrong.push(format!(
                "{}: expected {:?}, got {said:?}",
                case.name, case.expect
            ));
        }
        if case.turn.as_ref().is_some_and(|t| *t != turn) {
            wrong.push(format!(
                "{}: expected the turn {:?}, got {turn:?}",
                case.name, case.turn
            ));
        }
        if case.nowhere != nowhere && !said.starts_with("invalid") {
            wrong.push(format!(
                "{}: citations not found {nowhere:?}, expected {:?}",
                case.name, case.nowhere
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// First answers that contradict themselves: an approval with test_quality
/// at 68 (minimum 70), and a request for changes naming nothing blocking.
fn contradictions() -> Vec<(&'static str, String)> {
    let base = std::fs::read_to_string(dir().join("scores-well-rated-approval.txt")).unwrap();
    let answer = base.split_once("\n---\n").unwrap().1;
    let mut approval: Value = serde_json::from_str(answer).unwrap();
    approval["dimensions"]["test_quality"]["score"] = Value::from(68);
    let mut request = approval.clone();
    request["verdict"] = Value::from("request_changes");
    request["dimensions"]["test_quality"]["score"] = Value::from(95);
    vec![
        ("an approval under a minimum", approval.to_string()),
        ("a request naming nothing", request.to_string()),
    ]
}

#[test]
fn no_answer_ends_in_an_approval_through_the_reconcile_turn_that_it_would_not_earn_alone() {
    let judge = judge();
    let mut wrong = Vec::new();
    let mut played = 0;
    for case in cases().iter().filter(|c| !c.guardian) {
        let alone = {
            let (said, _, _) = play(case, &judge, &case.answer, None);
            // What the answer earns as an answer of its own (a second
            // answer's turn is never asked again).
            match parse(case, &case.answer) {
                Ok(v) => decided(case, &judge, &v).0,
                Err(_) => said,
            }
        };
        for (what, first) in contradictions() {
            let Ok(parsed) = parse(case, &first) else {
                continue; // this case's review asks what the first does not rate
            };
            if turn_of(case, &parsed).is_none() {
                continue;
            }
            played += 1;
            let (said, _, _) = play(case, &judge, &first, Some(&case.answer));
            let first_alone = decided(case, &judge, &parsed).0;
            let expected = if alone.starts_with("invalid") {
                first_alone
            } else {
                alone.clone()
            };
            if said != expected {
                wrong.push(format!(
                    "{} after {what}: {said:?}, expected {expected:?}",
                    case.name
                ));
            }
            if said == "approve" && case.expect != "approve" {
                wrong.push(format!(
                    "{} after {what}: approved, though the corpus expects {:?}",
                    case.name, case.expect
                ));
            }
        }
    }
    assert!(played >= 90, "{played} conversations played");
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}
