//! A spec's rules sent alone (issue 43 §3): a prompt that cannot hold a
//! section whole still carries its sentences that say what must, must not
//! or cannot be, under the section's heading. A quote of such a rule is
//! checked against the sentence as sent and stands; a quote of the rest of
//! that section, which was not sent, is refused. Real git, the real binary,
//! a loopback model.

use crate::support::model_server::{ModelServer, Reply};
use crate::support::repo::{self, RepoBuilder, TempRepo};
use crate::support::speed::{Run, speed};
use crate::support::verdicts::{dimensions, text};
use serde_json::{Value, json};

const RULE: &str = "Card numbers are never written to a log, a report or an error message.";
const NOT_SENT: &str = "The payment page was designed together with the bank in the spring.";
const CART: &str = "The cart holds at most 50 items.";
const BUDGET: &str = "4000";

/// Descriptive sentences (no rule among them): `n` of them about `topic`.
fn filler(topic: &str, n: usize) -> String {
    (1..=n)
        .map(|i| {
            format!(
                "In release {i} the {topic} gained a screen for the team in office {i}, with a table of {i} columns.\n"
            )
        })
        .collect()
}

/// A shop whose spec holds the cart (the task's section), a security
/// section too large for the budget whose one rule the change concerns,
/// and descriptive history; task 1 raises the cart's cap.
fn shop() -> TempRepo {
    let spec = format!(
        "# Shop\n\n## Cart\n\n{CART}\n\n## Security\n\n{NOT_SENT}\n{RULE}\n{}\n## History\n\n{}",
        filler("payment page", 90),
        filler("catalogue", 120),
    );
    let (tmp, root) = repo::empty();
    let mut b = RepoBuilder::init(&root).unwrap();
    b.commit(
        "main",
        None,
        &[
            ("specs/product/shop.md", spec.as_str()),
            ("src/cart.rs", "pub fn cap() -> u32 {\n    10\n}\n"),
        ],
        &[],
        "main",
    )
    .unwrap();
    b.commit(
        "speed/task-1",
        Some("main"),
        &[("src/cart.rs", "pub fn cap() -> u32 {\n    50\n}\n")],
        &[],
        "raise the cart's cap",
    )
    .unwrap();
    b.checkout("main").unwrap();
    let repo = repo::adopt(tmp, root);
    repo.write(
        ".speed/tasks/1.json",
        &serde_json::to_string_pretty(&json!({
            "id": "1",
            "title": "Raise the cart's cap to 50",
            "status": "done",
            "branch": "speed/task-1",
            "description": "The cart holds 50 items instead of 10.",
            "acceptance_criteria": [{"criterion": "cap() is 50", "verify_by": "test"}],
            "files_to_modify": ["src/cart.rs"],
            "spec_references": [{"spec": "specs/product/shop.md", "section": "Cart"}],
        }))
        .unwrap(),
    );
    repo
}

fn configure(repo: &TempRepo, server: &ModelServer) {
    repo.config(&server.openai_config("[guardian]\nenabled = false\n"));
}

/// An approval resting on the cart's sentence and `quote` (of Security).
fn approval(quote: &str) -> String {
    text(&json!({
        "dimensions": dimensions(),
        "verdict": "approve",
        "expectations": "The cap is 50 and no card number is logged.",
        "criteria": [{"id": "AC-1", "status": "met", "evidence": "src/cart.rs:2"}],
        "spec_verification": [
            {"spec_quote": CART, "spec_section": "Shop > Cart", "satisfied": true,
             "evidence": "src/cart.rs:2", "notes": ""},
            {"spec_quote": quote, "spec_section": "Shop > Security", "satisfied": true,
             "evidence": "src/cart.rs:2", "notes": ""}
        ],
        "missing_from_spec": [],
        "out_of_scope": [],
        "issues": [],
        "strengths": []
    }))
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.transcript()))
}

fn review(repo: &TempRepo) -> Value {
    let run = speed(
        repo.path(),
        &["review", "--task-id", "1", "--json", "--budget", BUDGET],
        &[],
    );
    json_of(&run)["reviews"][0].clone()
}

/// The quote's entry in the report: found, and where.
fn quote<'a>(report: &'a Value, text: &str) -> &'a Value {
    report["quotes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["spec_quote"] == text)
        .unwrap_or_else(|| panic!("{text} not in {}", report["quotes"]))
}

fn overrules(report: &Value) -> Vec<String> {
    report["overrules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_rule_sent_alone_is_in_the_prompt_and_accounted_as_sent_in_part() {
    let repo = shop();
    let run = speed(
        repo.path(),
        &[
            "review",
            "--task-id",
            "1",
            "--dry-run",
            "--json",
            "--budget",
            BUDGET,
        ],
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.transcript());
    let dry = json_of(&run)["reviews"][0].clone();
    let prompt = dry["prompt"].as_str().unwrap();
    assert!(prompt.contains(CART), "the task's section, whole: {prompt}");
    assert!(
        prompt.contains(&format!("§ Shop > Security\n- {RULE}")),
        "the rule under its section's heading: {prompt}"
    );
    assert!(
        !prompt.contains(NOT_SENT),
        "the rest of the section is not sent: {prompt}"
    );
    assert!(
        prompt.contains("Spec sections not shown whole for budget: 2 of 3")
            && prompt.contains("of 1 of them only the rules above are shown"),
        "{prompt}"
    );
    assert!(dry["tokens"]["total"].as_u64().unwrap() <= 4000);
    // The accounting says what was sent of each section left out.
    let spec = dry["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "spec")
        .unwrap();
    let omitted: Vec<(String, String)> = spec["omitted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["item"].as_str().unwrap().to_string(),
                o["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        omitted.contains(&(
            "specs/product/shop.md § Shop > Security".to_string(),
            "sent in part: its rules alone, the rest omitted for budget".to_string()
        )),
        "{omitted:?}"
    );
    assert!(
        omitted.contains(&(
            "specs/product/shop.md § Shop > History".to_string(),
            "omitted for budget".to_string()
        )),
        "{omitted:?}"
    );
}

#[test]
fn a_quote_of_a_rule_sent_alone_stands() {
    let repo = shop();
    let server = ModelServer::scripted(vec![Reply::openai(&approval(RULE))]);
    configure(&repo, &server);
    let report = review(&repo);
    assert_eq!(report["verdict"], "approve", "{report}");
    assert!(overrules(&report).is_empty(), "{report}");
    let rule = quote(&report, RULE);
    assert_eq!(rule["found"], true, "{rule}");
    assert_eq!(rule["section"], "Shop > Security", "{rule}");
    // Its line in the spec file: the section's heading is line 7.
    assert_eq!(rule["line"], 10, "{rule}");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_quote_of_the_rest_of_that_section_is_refused() {
    let repo = shop();
    let server = ModelServer::scripted(vec![Reply::openai(&approval(NOT_SENT))]);
    configure(&repo, &server);
    let report = review(&repo);
    assert_eq!(report["verdict"], "request_changes", "{report}");
    assert!(
        overrules(&report).contains(&"fabricated_quote".to_string()),
        "{report}"
    );
    assert_eq!(quote(&report, NOT_SENT)["found"], false);
    assert_eq!(quote(&report, CART)["found"], true);
}
