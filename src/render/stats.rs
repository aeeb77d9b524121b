//! `speed stats` for people and for scripts: the figures in all, the most
//! frequent blocking reasons, then per feature and per week (human); the
//! contract's object (JSON).

use std::fmt::Write;

use crate::history::stats::{Stats, Summary};

use super::{Style, thousands};

/// Blocking reasons listed in the terminal; JSON and HTML list them all.
const REASONS_LISTED: usize = 10;

pub fn json(stats: &Stats) -> String {
    let mut text = serde_json::to_string_pretty(stats).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}

/// The object `speed stats --format json` prints when it fails.
pub fn json_failure(error: &str) -> String {
    let mut text = serde_json::to_string_pretty(&serde_json::json!({"error": error}))
        .unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}

fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "none".to_string(), |r| format!("{:.0}%", r * 100.0))
}

/// The figures of a group as (name, value) pairs, for every format that
/// lists them.
pub fn facts(s: &Summary) -> Vec<(String, String)> {
    let mut out = vec![
        ("Reviews".to_string(), {
            let failed = match s.failed_reviews {
                0 => String::new(),
                n => format!(" ({n} failed)"),
            };
            format!("{}{failed}", thousands(s.reviews as u64))
        }),
        ("Subjects".to_string(), thousands(s.subjects as u64)),
        (
            "Approved at first review".to_string(),
            percent(s.approval_rate.first_review),
        ),
        (
            "Approved eventually".to_string(),
            percent(s.approval_rate.eventual),
        ),
        (
            "Reviews to approval".to_string(),
            s.mean_reviews_to_approval
                .map_or_else(|| "none".to_string(), |m| format!("{m:.2} on average")),
        ),
        (
            "Failed at max_revisions".to_string(),
            s.failed_at_max_revisions.to_string(),
        ),
        (
            "Tokens".to_string(),
            format!(
                "{} in{}, {} out; per review {} in, {} out{}",
                thousands(s.tokens.input),
                match s.tokens.cache_read {
                    0 => String::new(),
                    n => format!(" ({} read from the cache)", thousands(n)),
                },
                thousands(s.tokens.output),
                thousands(s.tokens.per_review.input.round() as u64),
                thousands(s.tokens.per_review.output.round() as u64),
                match s.tokens.estimated_reviews {
                    0 => String::new(),
                    n => format!(
                        " ({} counted by speed: the provider reported no usage)",
                        super::plural(n, "review")
                    ),
                }
            ),
        ),
    ];
    out.push((
        "Cost".to_string(),
        match &s.cost {
            Some(c) => {
                let basis = match &c.prices {
                    Some(p) => format!(
                        "at {} and {} per million tokens in and out",
                        p.input_per_mtok, p.output_per_mtok
                    ),
                    None => "as the reviews recorded it; no prices configured now".to_string(),
                };
                let unpriced = match c.unpriced {
                    0 => String::new(),
                    1 => "; 1 review with no cost recorded".to_string(),
                    n => format!("; {n} reviews with no cost recorded"),
                };
                format!(
                    "{:.4} in all, {:.4} per review ({basis}{unpriced})",
                    c.total, c.per_review
                )
            }
            None => "no prices configured ([llm] price_input_per_mtok, price_output_per_mtok)"
                .to_string(),
        },
    ));
    let ms = |v: Option<u64>| {
        v.map_or_else(
            || "none".to_string(),
            |v| format!("{:.1} s", v as f64 / 1000.0),
        )
    };
    out.push((
        "Duration".to_string(),
        format!(
            "p50 {}, p90 {}",
            ms(s.duration_ms.p50),
            ms(s.duration_ms.p90)
        ),
    ));
    let others: Vec<String> = s
        .decisions
        .iter()
        .map(|(word, n)| format!("{word} {n}"))
        .collect();
    if !others.is_empty() {
        out.push(("Decisions".to_string(), others.join(", ")));
    }
    out
}

pub fn human(stats: &Stats, scope: &str, style: &Style) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", style.bold("speed stats"));
    let _ = writeln!(out, "{}", style.dim(scope));
    if stats.skipped_lines > 0 {
        let _ = writeln!(
            out,
            "{}",
            style.yellow(&format!(
                "! {} of the log {} not speed's and {} skipped",
                super::plural(stats.skipped_lines, "line"),
                were(stats.skipped_lines),
                were(stats.skipped_lines)
            ))
        );
    }
    out.push('\n');
    block(&mut out, &stats.all, "  ");
    if !stats.all.blocking_reasons.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("Most frequent blocking reasons"));
        for r in stats.all.blocking_reasons.iter().take(REASONS_LISTED) {
            let _ = writeln!(out, "  {:>6}  {}: {}", r.count, r.kind, r.name);
        }
        let more = stats
            .all
            .blocking_reasons
            .len()
            .saturating_sub(REASONS_LISTED);
        if more > 0 {
            let _ = writeln!(out, "  … and {more} more (--format json lists them all)");
        }
    }
    if stats.by_feature.len() > 1 {
        let _ = writeln!(out, "\n{}", style.bold("By feature"));
        let _ = writeln!(
            out,
            "  {:<28} {:>8} {:>8} {:>7} {:>7} {:>7}",
            "feature", "reviews", "subjects", "first", "eventual", "failed"
        );
        for (name, s) in &stats.by_feature {
            let _ = writeln!(
                out,
                "  {:<28} {:>8} {:>8} {:>7} {:>7} {:>7}",
                clip(name, 28),
                s.reviews,
                s.subjects,
                percent(s.approval_rate.first_review),
                percent(s.approval_rate.eventual),
                s.failed_at_max_revisions
            );
        }
    }
    if !stats.by_week.is_empty() {
        let _ = writeln!(out, "\n{}", style.bold("By week"));
        let _ = writeln!(
            out,
            "  {:<10} {:<10} {:>8} {:>8} {:>7} {:>7}",
            "week", "starts", "reviews", "subjects", "first", "eventual"
        );
        for w in &stats.by_week {
            let s = &w.summary;
            let _ = writeln!(
                out,
                "  {:<10} {:<10} {:>8} {:>8} {:>7} {:>7}",
                w.week,
                w.starts,
                s.reviews,
                s.subjects,
                percent(s.approval_rate.first_review),
                percent(s.approval_rate.eventual)
            );
        }
    }
    out
}

fn block(out: &mut String, s: &Summary, indent: &str) {
    let rows = facts(s);
    let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, value) in rows {
        let _ = writeln!(out, "{indent}{name:<width$}  {value}");
    }
}

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max - 1) {
        Some((at, _)) if text.chars().count() > max => format!("{}…", &text[..at]),
        _ => text.to_string(),
    }
}

/// "was" for one, "were" for more.
pub(super) fn were(n: usize) -> &'static str {
    if n == 1 { "was" } else { "were" }
}
