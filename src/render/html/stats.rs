//! The statistics page (`speed stats --format html`): the figures in all,
//! then three figures drawn as inline SVG (the approval rate by week,
//! the most frequent blocking reasons by week, reviews per feature), each
//! followed by a table of its numbers, then the figures per feature and
//! every blocking reason.

use crate::history::stats::{Stats, Summary};

use super::chart::{self, Figure, Series};
use super::{Html, document};

/// Blocking reasons drawn week by week; the table lists them all.
const REASONS_DRAWN: usize = 6;
/// Features drawn as bars; the table lists them all.
const FEATURES_DRAWN: usize = 30;
/// Rows of the table of every blocking reason; `--format json` has them all.
const REASONS_LISTED: usize = 200;

pub fn page(stats: &Stats, scope: &str) -> String {
    document("speed stats", |page| {
        page.open("main", &[]).newline();
        page.elem("h1", &[], "speed stats").newline();
        page.elem("p", &[], scope).newline();
        if stats.skipped_lines > 0 {
            page.elem(
                "p",
                &[("class", "note")],
                &format!(
                    "{} of the log {} not speed's (torn, not text, or foreign) and {} skipped.",
                    crate::render::plural(stats.skipped_lines, "line"),
                    crate::render::stats::were(stats.skipped_lines),
                    crate::render::stats::were(stats.skipped_lines)
                ),
            );
        }
        section(page, "all", "In all", |page| facts(page, &stats.all));
        if !stats.by_week.is_empty() {
            section(page, "approval", "Approval rate by week", |page| {
                approval(page, stats)
            });
            section(
                page,
                "reasons-by-week",
                "Blocking reasons by week",
                |page| reasons_by_week(page, stats),
            );
        }
        if !stats.by_feature.is_empty() {
            section(page, "features", "Reviews per feature", |page| {
                features(page, stats)
            });
        }
        section(page, "reasons", "Every blocking reason", |page| {
            reasons(page, &stats.all)
        });
        page.close("main").newline();
    })
}

fn section(page: &mut Html, id: &str, title: &str, body: impl FnOnce(&mut Html)) {
    page.open("section", &[("aria-labelledby", id)])
        .newline()
        .elem("h2", &[("id", id)], title)
        .newline();
    body(page);
    page.close("section").newline();
}

/// 0.5 → "50%"; None → "none".
pub fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "none".to_string(), |r| format!("{:.0}%", r * 100.0))
}

fn facts(page: &mut Html, s: &Summary) {
    let rows = crate::render::stats::facts(s);
    page.open("dl", &[("class", "facts")]).newline();
    for (name, value) in rows {
        page.elem("dt", &[], &name)
            .elem("dd", &[], &value)
            .newline();
    }
    page.close("dl").newline();
}

fn weeks(stats: &Stats) -> Vec<String> {
    stats.by_week.iter().map(|w| w.week.clone()).collect()
}

fn approval(page: &mut Html, stats: &Stats) {
    let labels = weeks(stats);
    let first: Vec<Option<f64>> = stats
        .by_week
        .iter()
        .map(|w| w.summary.approval_rate.first_review.map(|r| r * 100.0))
        .collect();
    let eventual: Vec<Option<f64>> = stats
        .by_week
        .iter()
        .map(|w| w.summary.approval_rate.eventual.map(|r| r * 100.0))
        .collect();
    chart::lines(
        page,
        &Figure {
            id: "chart-approval",
            title: "Approval rate of the subjects first reviewed each week",
            desc: "Two lines over the weeks, 0 to 100 percent: approved at the first review (solid line, round markers) and approved eventually (dashed line, square markers). The table below gives the numbers.",
        },
        &labels,
        &[
            Series {
                name: "approved at first review",
                values: first,
                dash: "",
                square: false,
            },
            Series {
                name: "approved eventually",
                values: eventual,
                dash: "6 4",
                square: true,
            },
        ],
        100.0,
        &|v| format!("{v:.0}%"),
    );
    page.open("table", &[])
        .elem("caption", &[], "Approval rate by week")
        .raw("<thead><tr><th scope=\"col\">Week</th><th scope=\"col\">Starts</th><th scope=\"col\">Reviews</th><th scope=\"col\">Subjects first reviewed</th><th scope=\"col\">Approved at first review</th><th scope=\"col\">Approved eventually</th></tr></thead>")
        .open("tbody", &[])
        .newline();
    for w in &stats.by_week {
        page.open("tr", &[])
            .elem("th", &[("scope", "row")], &w.week)
            .elem("td", &[], &w.starts)
            .elem("td", &[], &w.summary.reviews.to_string())
            .elem("td", &[], &w.summary.subjects.to_string())
            .elem("td", &[], &percent(w.summary.approval_rate.first_review))
            .elem("td", &[], &percent(w.summary.approval_rate.eventual))
            .close("tr")
            .newline();
    }
    page.close("tbody").close("table").newline();
}

fn reason_label(kind: &str, name: &str) -> String {
    format!("{kind}: {name}")
}

fn reasons_by_week(page: &mut Html, stats: &Stats) {
    let top: Vec<(String, String)> = stats
        .all
        .blocking_reasons
        .iter()
        .take(REASONS_DRAWN)
        .map(|r| (r.kind.clone(), r.name.clone()))
        .collect();
    if top.is_empty() {
        page.elem("p", &[], "No review was held back by anything.");
        return;
    }
    let labels = weeks(stats);
    let rows: Vec<(String, Vec<usize>)> = top
        .iter()
        .map(|(kind, name)| {
            let counts = stats
                .by_week
                .iter()
                .map(|w| {
                    w.summary
                        .blocking_reasons
                        .iter()
                        .find(|r| &r.kind == kind && &r.name == name)
                        .map_or(0, |r| r.count)
                })
                .collect();
            (reason_label(kind, name), counts)
        })
        .collect();
    chart::bar_rows(
        page,
        &Figure {
            id: "chart-reasons",
            title: "The most frequent blocking reasons, week by week",
            desc: "One row of bars per reason, most frequent first; each bar is the number of reviews it held back that week. The table below gives the numbers.",
        },
        &labels,
        &rows,
    );
    // One column per week: a long log scrolls sideways, not the page.
    page.open("div", &[("class", "wide")]);
    page.open("table", &[])
        .elem("caption", &[], "Reviews each reason held back, by week")
        .open("thead", &[])
        .open("tr", &[])
        .elem("th", &[("scope", "col")], "Reason");
    for week in &labels {
        page.elem("th", &[("scope", "col")], week);
    }
    page.close("tr").close("thead").open("tbody", &[]).newline();
    for (name, counts) in &rows {
        page.open("tr", &[]).elem("th", &[("scope", "row")], name);
        for count in counts {
            page.elem("td", &[], &count.to_string());
        }
        page.close("tr").newline();
    }
    page.close("tbody").close("table").close("div").newline();
}

fn features(page: &mut Html, stats: &Stats) {
    let mut items: Vec<(String, usize)> = stats
        .by_feature
        .iter()
        .map(|(name, s)| (name.clone(), s.reviews))
        .collect();
    items.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let drawn = &items[..items.len().min(FEATURES_DRAWN)];
    chart::bars(
        page,
        &Figure {
            id: "chart-features",
            title: "Reviews per feature",
            desc: "One bar per feature, the most reviewed first, its number of reviews written beside it. The table below gives these and more.",
        },
        drawn,
    );
    if items.len() > drawn.len() {
        page.elem(
            "p",
            &[("class", "note")],
            &format!(
                "The {} most reviewed of {} features are drawn; the table lists them all.",
                drawn.len(),
                items.len()
            ),
        );
    }
    page.open("table", &[])
        .elem("caption", &[], "The figures of each feature")
        .raw("<thead><tr><th scope=\"col\">Feature</th><th scope=\"col\">Reviews</th><th scope=\"col\">Subjects</th><th scope=\"col\">Approved at first review</th><th scope=\"col\">Approved eventually</th><th scope=\"col\">Reviews to approval</th><th scope=\"col\">Failed at max_revisions</th></tr></thead>")
        .open("tbody", &[])
        .newline();
    for (name, _) in &items {
        let s = &stats.by_feature[name];
        page.open("tr", &[])
            .elem("th", &[("scope", "row")], name)
            .elem("td", &[], &s.reviews.to_string())
            .elem("td", &[], &s.subjects.to_string())
            .elem("td", &[], &percent(s.approval_rate.first_review))
            .elem("td", &[], &percent(s.approval_rate.eventual))
            .elem(
                "td",
                &[],
                &s.mean_reviews_to_approval
                    .map_or_else(|| "none".to_string(), |m| format!("{m:.2}")),
            )
            .elem("td", &[], &s.failed_at_max_revisions.to_string())
            .close("tr")
            .newline();
    }
    page.close("tbody").close("table").newline();
}

fn reasons(page: &mut Html, s: &Summary) {
    if s.blocking_reasons.is_empty() {
        page.elem("p", &[], "No review was held back by anything.");
        return;
    }
    page.open("table", &[])
        .elem("caption", &[], "Each reason, with the number of reviews it held back")
        .raw("<thead><tr><th scope=\"col\">Kind</th><th scope=\"col\">Name</th><th scope=\"col\">Reviews</th></tr></thead>")
        .open("tbody", &[])
        .newline();
    for r in s.blocking_reasons.iter().take(REASONS_LISTED) {
        page.open("tr", &[])
            .elem("td", &[], &r.kind)
            .elem("td", &[], &r.name)
            .elem("td", &[], &r.count.to_string())
            .close("tr")
            .newline();
    }
    page.close("tbody").close("table").newline();
    let more = s.blocking_reasons.len().saturating_sub(REASONS_LISTED);
    if more > 0 {
        page.elem(
            "p",
            &[("class", "note")],
            &format!("… and {more} more, each rarer; `speed stats --format json` lists them all."),
        );
    }
}
