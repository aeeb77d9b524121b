//! A spec review's session as a page (`speed show --spec FEATURE --format
//! html`): the final verdict, then each iteration's verdict, scores and
//! feedback by section.

use serde_json::Value;

use crate::render::session::{feedback, verdict};

use super::{Html, clip, document};

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

pub fn page(session: &Value, path: &str) -> String {
    let feature = text(&session["feature"]);
    document(&format!("speed spec review: {feature}"), |page| {
        page.open("main", &[]).newline();
        page.elem("h1", &[], &format!("Spec review of feature {feature}"));
        page.open("dl", &[("class", "facts")]).newline();
        let mut fact = |name: &str, value: &str| {
            if !value.is_empty() {
                page.elem("dt", &[], name).elem("dd", &[], value).newline();
            }
        };
        fact("PRD", &text(&session["prd_path"]));
        fact("Spec", &text(&session["specs_path"]));
        fact("Final verdict", &verdict(session));
        fact("Blocked because", &text(&session["block_reason"]));
        fact("Session file", path);
        page.close("dl").newline();
        for it in session["iterations"].as_array().into_iter().flatten() {
            iteration(page, it);
        }
        let actions: Vec<String> = session["recovery_actions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(text)
            .collect();
        if !actions.is_empty() {
            page.elem("h2", &[], "To recover");
            page.open("ul", &[]);
            for a in actions {
                page.elem("li", &[], &clip(&a, 2_000));
            }
            page.close("ul").newline();
        }
        page.close("main").newline();
    })
}

fn iteration(page: &mut Html, it: &Value) {
    let result = &it["result"];
    page.open("section", &[]).newline().elem(
        "h2",
        &[],
        &format!(
            "Iteration {}: {}",
            text(&it["iteration"]),
            text(&result["verdict"])
        ),
    );
    let at = text(&it["timestamp"]);
    if !at.is_empty() {
        page.elem("p", &[("class", "note")], &format!("At {at}."));
    }
    if let Some(scores) = result["scores"].as_object() {
        page.open("table", &[])
            .elem("caption", &[], "Scores")
            .raw("<thead><tr><th scope=\"col\">Criterion</th><th scope=\"col\">Score</th></tr></thead>")
            .open("tbody", &[]);
        for (name, score) in scores {
            page.open("tr", &[])
                .elem("th", &[("scope", "row")], name)
                .elem("td", &[], &text(score))
                .close("tr");
        }
        page.close("tbody").close("table").newline();
    }
    let items = feedback(result);
    if !items.is_empty() {
        page.open("table", &[])
            .elem("caption", &[], "Feedback")
            .raw("<thead><tr><th scope=\"col\">Section</th><th scope=\"col\">Issue</th><th scope=\"col\">Suggestion</th></tr></thead>")
            .open("tbody", &[]);
        for (section, issue, suggestion) in items {
            page.open("tr", &[])
                .elem("td", &[], &clip(&section, 500))
                .elem("td", &[], &clip(&issue, 4_000))
                .elem("td", &[], &clip(&suggestion, 4_000))
                .close("tr");
        }
        page.close("tbody").close("table").newline();
    }
    page.close("section").newline();
}
