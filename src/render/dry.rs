//! A dry run's account on stderr: each part's tokens and files, each
//! prompt section's tokens, what no part showed named once for the review
//! (not once per part), and, when code would go unseen, a marked warning
//! to end with.

use std::fmt::Write;

use crate::review::dry::{DryPrompt, DryRun};

use super::{Style, thousands};

/// Omissions of one prompt section a dry run's accounting names.
const OMITTED_LISTED: usize = 10;

/// "task 3", "defect crash" or "branch feature/x".
fn who(run: &DryRun) -> String {
    match (&run.task_id, &run.defect) {
        (Some(id), _) => format!("task {id}"),
        (None, Some(name)) => format!("defect {name}"),
        (None, None) => format!("branch {}", run.branch),
    }
}

/// The token accounting of a dry run, for stderr.
pub fn accounting(run: &DryRun, style: &Style) -> String {
    let mut out = String::new();
    let who = who(run);
    let prompt = match &run.result {
        Ok(p) => p,
        Err(err) => {
            let _ = writeln!(out, "{}", style.red(&format!("✗ {who}: {err}")));
            return out;
        }
    };
    let heading = match prompt.part_list.as_slice() {
        [_, _, ..] => format!(
            "Token accounting for {who}: {} tokens in {} parts, each within {} (the largest {}) ({})",
            thousands(prompt.total_tokens as u64),
            prompt.part_list.len(),
            thousands(prompt.budget as u64),
            thousands(prompt.part_list.iter().map(|p| p.tokens).max().unwrap_or(0) as u64),
            prompt.tokenizer
        ),
        _ => format!(
            "Token accounting for {who}: {} of {} tokens ({})",
            thousands(prompt.total_tokens as u64),
            thousands(prompt.budget as u64),
            prompt.tokenizer
        ),
    };
    let _ = writeln!(out, "{}", style.bold(&heading));
    parts(&mut out, prompt);
    sections(&mut out, prompt);
    files(&mut out, prompt);
    out.push_str(&super::human::checks(&prompt.checks, style));
    out
}

/// Each part's tokens and how many files it shows, a file shown in part
/// said so (a file split over two parts is in both).
fn parts(out: &mut String, prompt: &DryPrompt) {
    if prompt.part_list.len() < 2 {
        return;
    }
    let mut spans = false;
    for p in &prompt.part_list {
        let partly = p.shown.iter().filter(|f| !f.whole).count();
        spans |= partly > 0;
        let _ = writeln!(
            out,
            "  part {} of {}: {} tokens, changes of {} {} shown{}",
            p.index,
            prompt.part_list.len(),
            thousands(p.tokens as u64),
            p.files,
            if p.files == 1 { "file" } else { "files" },
            if partly > 0 {
                format!(" ({partly} in part)")
            } else {
                String::new()
            }
        );
    }
    if spans {
        let _ = writeln!(
            out,
            "  (a file whose hunks span parts is counted in each part that shows some)"
        );
    }
}

/// Each section's tokens, and what it left out, named once per review: in
/// parts, the diff's omissions are the other parts' files (what no part
/// showed is named once, below), and a section of a later part is counted
/// against the same section of the first part that named its omissions.
fn sections(out: &mut String, prompt: &DryPrompt) {
    let several = prompt.part_list.len() > 1;
    let width = prompt
        .sections
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    // (section, the part that named its omissions, what it left out)
    let mut named: Vec<(&str, &str, &[crate::prompt::Omission])> = Vec::new();
    for s in &prompt.sections {
        let (base, part) = match s.name.split_once(" (part ") {
            Some((base, rest)) => (base, rest.trim_end_matches(')')),
            None => (s.name.as_str(), ""),
        };
        let earlier = named.iter().find(|(b, _, _)| *b == base);
        let said = match earlier {
            Some((_, p, omitted)) if several && !s.omitted.is_empty() => {
                if *omitted == s.omitted.as_slice() {
                    format!("  (leaves out what part {p}'s does)")
                } else {
                    format!(
                        "  (leaves out {}; part {p}'s are named above, --dry-run --json lists each)",
                        s.omitted.len()
                    )
                }
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {:<width$}  {:>7}{said}",
            s.name,
            thousands(s.tokens as u64)
        );
        if (several && base == "diff") || earlier.is_some() || s.omitted.is_empty() {
            continue;
        }
        named.push((base, part, s.omitted.as_slice()));
        // A spec of a hundred headings at a small budget would print a
        // hundred lines: the highest ranked are named, the rest counted
        // (`--dry-run --json` lists every one).
        for o in s.omitted.iter().take(OMITTED_LISTED) {
            let _ = writeln!(
                out,
                "  {:<width$}    - omitted {}: {}",
                "", o.item, o.reason
            );
        }
        if s.omitted.len() > OMITTED_LISTED {
            let _ = writeln!(
                out,
                "  {:<width$}    …and {} more omitted (--dry-run --json lists each)",
                "",
                s.omitted.len() - OMITTED_LISTED
            );
        }
    }
}

/// What the prompts showed of the diff, together: counts that add up, and
/// each file no part showed whole named once.
fn files(out: &mut String, prompt: &DryPrompt) {
    let c = &prompt.coverage;
    let in_parts = if prompt.parts > 1 {
        format!(" in {} parts", prompt.parts)
    } else {
        String::new()
    };
    if c.files_unseen == 0 {
        let _ = writeln!(
            out,
            "  files shown: {} of {}{in_parts}, changed lines shown: {} of {}",
            c.files_shown, c.files_total, c.lines_shown, c.lines_total
        );
        for o in &c.files_omitted {
            let _ = writeln!(out, "    - not shown {}: {}", o.path, o.reason);
        }
        return;
    }
    // Lines of files with content, as the warning and the review say them.
    let (seen, lines) = super::coverage::lines(c);
    let _ = writeln!(
        out,
        "  files shown{in_parts}: {}{}; changed lines shown: {} of {}",
        super::coverage::files(c),
        super::coverage::by_name(c),
        thousands(seen as u64),
        thousands(lines as u64)
    );
    for (title, list) in c.omitted_groups() {
        let _ = writeln!(out, "  {} ({}):", title.to_lowercase(), list.len());
        for o in list {
            let _ = writeln!(out, "    - {}: {}", o.path, o.reason);
        }
    }
}

/// The warning a dry run ends with when the review it prepared would
/// leave code unseen (and so request changes), or None.
pub fn warning(run: &DryRun) -> Option<String> {
    let prompt = run.result.as_ref().ok()?;
    let unseen = prompt.coverage.unseen()?;
    let parts = match prompt.parts {
        1 => "its prompt leaves".to_string(),
        n => format!(
            "its {n} parts (review.max_parts {}) leave",
            prompt.max_parts
        ),
    };
    Some(format!(
        "{}: {parts} {unseen} unseen, so the review would request changes (unseen_code); raise the budget (--budget, review.token_budget) or review.max_parts, or split the change",
        who(run)
    ))
}
