//! `speed show` for people: the saved report as the review printed it,
//! after a line saying which review it is and where it is kept, and
//! before what the terminal report leaves out (tokens both ways and time).

use std::fmt::Write;

use crate::ledger::saved::Saved;

use super::Style;

pub fn human(saved: &Saved, nth: usize, style: &Style) -> String {
    let report = &saved.report;
    let mut out = String::new();
    let which = match nth {
        1 => "the last review".to_string(),
        n => format!("review {n} back"),
    };
    let _ = writeln!(
        out,
        "{}",
        style.dim(&format!(
            "{} of {}, recorded {} in {}",
            which,
            super::report_subject(report),
            saved.reviewed_at.as_deref().unwrap_or("(time unknown)"),
            saved.path
        ))
    );
    out.push_str(&super::human::report(report, style));
    let model = format!("{} {}", report.model.provider, report.model.name);
    let _ = writeln!(
        out,
        "{}",
        style.dim(&format!(
            "  tokens {}; {:.1} s{}",
            super::tokens_in_out(
                report.tokens.prompt,
                report.tokens.completion,
                report.tokens.by_speed()
            ),
            report.duration_ms as f64 / 1000.0,
            match model.trim() {
                "" => String::new(),
                m => format!("; model {m}"),
            }
        ))
    );
    out
}
