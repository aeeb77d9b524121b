//! Model answers for the example product's tasks, as a real model would
//! write them: quotes taken from `specs/product/library-catalog.md`.

use serde_json::{Value, json};

/// A well-formed approval of task 1 quoting the spec exactly.
pub fn approve_task_1() -> Value {
    json!({
        "dimensions": dimensions(),
        "verdict": "approve",
        "expectations": "Search must match title and author ignoring case, refuse queries under 2 characters, order by relevance and cap at 20.",
        "criteria": [
            {"id": "AC-1", "status": "met", "evidence": "catalog/src/search.rs:20"},
            {"id": "AC-2", "status": "met", "evidence": "catalog/src/search.rs:14"},
            {"id": "AC-3", "status": "met", "evidence": "catalog/src/search.rs:30"},
            {"id": "AC-4", "status": "met", "evidence": "catalog/src/search.rs:41"},
            {"id": "AC-5", "status": "unverifiable", "evidence": "no benchmark in the diff"}
        ],
        "spec_verification": [
            {"spec_quote": "Search matches the query against the title and the author of every book.",
             "spec_section": "Catalog > Search", "satisfied": true, "evidence": "catalog/src/search.rs:20", "notes": ""},
            {"spec_quote": "Search returns at most 20 results.",
             "spec_section": "Catalog > Search", "satisfied": true, "evidence": "catalog/src/search.rs:41", "notes": ""}
        ],
        "missing_from_spec": [],
        "out_of_scope": [],
        "issues": [
            {"severity": "nit", "file": "catalog/src/search.rs", "line": 28,
             "message": "rank() could be a method on Book", "suggestion": "Move it to impl Book"},
            {"severity": "minor", "file": "catalog/tests/search.rs", "line": 5,
             "message": "test names repeat the module name", "suggestion": ""}
        ],
        "strengths": ["Tests cover every ordering rule"]
    })
}

/// A request for changes on task 2 naming the renewal limit.
pub fn request_changes_task_2() -> Value {
    json!({
        "dimensions": dimensions(),
        "verdict": "request_changes",
        "expectations": "Loans renew at most twice, 14 days each; members with overdue loans cannot borrow; at most 5 loans.",
        "criteria": [
            {"id": "AC-1", "status": "met", "evidence": "catalog/src/loans.rs:60"},
            {"id": "AC-2", "status": "unmet", "evidence": "MAX_RENEWALS is 3, the spec allows two renewals"},
            {"id": "AC-3", "status": "met", "evidence": "catalog/src/loans.rs:70"},
            {"id": "AC-4", "status": "met", "evidence": "catalog/src/loans.rs:40"},
            {"id": "AC-5", "status": "met", "evidence": "catalog/src/loans.rs:12"}
        ],
        "spec_verification": [
            {"spec_quote": "A loan may be renewed at most twice.", "spec_section": "Borrowing > Loans",
             "satisfied": false, "evidence": "catalog/src/loans.rs:8", "notes": "MAX_RENEWALS = 3"}
        ],
        "missing_from_spec": [
            {"spec_quote": "A member with an overdue loan cannot borrow another book until every overdue book is returned.",
             "description": "borrow() never checks for overdue loans"}
        ],
        "out_of_scope": [],
        "issues": [
            {"severity": "major", "file": "catalog/src/loans.rs", "line": 8,
             "message": "MAX_RENEWALS is 3 but the spec allows at most two renewals",
             "suggestion": "Set MAX_RENEWALS to 2"}
        ],
        "strengths": []
    })
}

/// An approval of task 2 resting on a quote the spec does not contain.
pub fn approve_with_fabricated_quote() -> Value {
    let mut v = approve_task_2_base();
    v["spec_verification"] = json!([
        {"spec_quote": "A loan may be renewed at most three times.", "spec_section": "Borrowing > Loans",
         "satisfied": true, "evidence": "catalog/src/loans.rs:8", "notes": ""}
    ]);
    v
}

/// An approval of task 2 that still lists a critical issue.
pub fn approve_with_critical_issue() -> Value {
    let mut v = approve_task_2_base();
    v["issues"] = json!([
        {"severity": "critical", "file": "catalog/src/loans.rs", "line": 30,
         "message": "borrow() ignores overdue loans", "suggestion": "Refuse with \"overdue loans\""}
    ]);
    v
}

fn approve_task_2_base() -> Value {
    json!({
        "dimensions": dimensions(),
        "verdict": "approve",
        "expectations": "Renewals and limits as the Borrowing sections say.",
        "criteria": [
            {"id": "AC-1", "status": "met", "evidence": "catalog/src/loans.rs:60"},
            {"id": "AC-2", "status": "met", "evidence": "catalog/src/loans.rs:62"},
            {"id": "AC-3", "status": "met", "evidence": "catalog/src/loans.rs:70"},
            {"id": "AC-4", "status": "met", "evidence": "catalog/src/loans.rs:40"},
            {"id": "AC-5", "status": "met", "evidence": "catalog/src/loans.rs:12"}
        ],
        "spec_verification": [
            {"spec_quote": "A member may have at most 5 books on loan at the same time.",
             "spec_section": "Borrowing > Limits", "satisfied": true, "evidence": "catalog/src/loans.rs:40", "notes": ""}
        ],
        "missing_from_spec": [],
        "out_of_scope": [],
        "issues": [],
        "strengths": []
    })
}

pub fn guardian(status: &str, summary: &str, flags: Value) -> Value {
    json!({"status": status, "summary": summary, "flags": flags})
}

pub fn text(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap()
}

/// The five dimensions a review rates by default (coordination compliance
/// is asked only with coordination requirements), each well above its
/// minimum, as a model that found nothing wrong rates them.
pub fn dimensions() -> Value {
    rated(&[
        ("requirement_adherence", 95),
        ("code_quality", 95),
        ("pattern_consistency", 95),
        ("test_quality", 95),
        ("security_performance", 95),
    ])
}

/// Dimension ratings with these scores, each with a reason.
pub fn rated(scores: &[(&str, u32)]) -> Value {
    let mut map = serde_json::Map::new();
    for (name, score) in scores {
        map.insert(
            name.to_string(),
            json!({"score": score, "reason": format!("{name} as observed")}),
        );
    }
    Value::Object(map)
}
