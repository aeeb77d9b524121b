//! `speed show`: one saved review (the last, or the N-th last) of a task,
//! a defect or a branch (or of any, when none is named), or a spec
//! review's session, in the format asked for; and the HTML page of
//! reports, which `speed review --format html` prints too.

use std::path::Path;

use anyhow::Context as _;

use crate::defects;
use crate::exit::Outcome;
use crate::git::{MainBranch, Repository, short};
use crate::history;
use crate::ledger::{self, Report, covers};
use crate::render::{self, Format};
use crate::settings::{ShowSettings, Shown};
use crate::tasks;
use crate::work::{self, DefectReview, Standing, Subject};

use super::{Colors, out};

pub(super) fn show_command(
    dir: &Path,
    settings: &ShowSettings,
    colors: Colors,
) -> anyhow::Result<Outcome> {
    let repo = Repository::discover(dir)?;
    let root = repo.state_root().to_path_buf();
    let saved = match &settings.what {
        Shown::SpecSession(feature) => return show_session(&root, feature, settings.format),
        Shown::Latest => ledger::saved::nth_of_any(&root, settings.nth)?,
        Shown::Review(wanted) => {
            let active = tasks::Store::open(&root)
                .active_features()
                .context("cannot read which feature is active")?;
            ledger::saved::nth(&root, wanted, settings.nth, &active)?
        }
    };
    // Whether an approval covers the subject today: the saved report says
    // what was decided then, and a person may have answered it since.
    let now = || {
        settings
            .main
            .as_ref()
            .and_then(|main| covered_now(&repo, main, &saved.report))
    };
    let text = match settings.format {
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&ledger::saved::as_printed(&saved))
                .context("cannot print the report as JSON")?;
            text.push('\n');
            text
        }
        Format::Markdown => render::markdown::report(
            &saved.report,
            saved.reviewed_at.as_deref(),
            now().as_deref(),
        ),
        Format::Html => {
            let now = now();
            review_page(
                &root,
                &[(&saved.report, saved.reviewed_at.as_deref(), now.as_deref())],
            )
        }
        _ => {
            let mut text = render::show::human(&saved, settings.nth, &colors.stdout);
            if let Some(line) = now() {
                text.push_str(&format!("Now: {line}\n"));
            }
            text
        }
    };
    out(&text);
    Ok(Outcome::Approved)
}

/// Whether an approval covers the shown review's task or defect now, at
/// its branch's current head and against the specs on the main branch
/// (`ledger::covers`, the answer batch mode and the merge gate give), or
/// that its work is merged into main or its branch gone; None for a branch
/// reviewed without a task, or a subject whose file is gone.
fn covered_now(repo: &Repository, main: &MainBranch, report: &Report) -> Option<String> {
    let root = repo.root();
    let subject = match (&report.task_id, &report.defect) {
        (Some(id), _) => Subject::Task(Box::new(
            tasks::Store::open(root)
                .find(id, report.feature.as_deref())
                .ok()?,
        )),
        (None, Some(block)) => Subject::Defect(Box::new(DefectReview::new(
            defects::Store::open(root).find(&block.name).ok()?,
            false,
        ))),
        (None, None) => return None,
    };
    let work = subject.work()?;
    let label = work.label();
    // Merged (its branch perhaps deleted) or gone, as batch mode and the
    // merge gate place it: there is no diff left to cover.
    let reviewed = match subject.task() {
        Some(task) => work::reviewed_head(task),
        None => Some(report.head_commit.clone()).filter(|h| !h.is_empty()),
    };
    match work::standing(repo, main, &subject, reviewed.as_deref()) {
        Ok(Standing::Merged(merged)) => {
            return Some(format!(
                "{label} is merged into {}: {}.",
                main.name, merged.how
            ));
        }
        Ok(Standing::Gone { branch, why }) => {
            return Some(format!(
                "{label}: its branch {branch} is not found, and {why}."
            ));
        }
        Ok(Standing::Open) | Err(_) => {}
    }
    let resolved = match work::resolve(repo, main, &subject) {
        Ok(resolved) => resolved,
        Err(err) => return Some(format!("{label} cannot be diffed ({err}).")),
    };
    let head = &resolved.diff.head_commit;
    let store = ledger::verdicts::Store::open(root);
    let answer = covers::covers(
        &covers::Ground {
            repo,
            main,
            store: &store,
        },
        &covers::Question {
            work: &work,
            commit: head,
            current: covers::Current::Diff(&resolved.diff.sha256),
            task: subject.task(),
        },
    );
    Some(match answer.verdict {
        Ok(cover) => format!(
            "{label} at {} is covered: {}.",
            short(head),
            cover.describe(head)
        ),
        Err(miss) => format!(
            "{label} at {} is not covered: {}.",
            short(head),
            miss.describe(head)
        ),
    })
}

fn show_session(root: &Path, feature: &str, format: Format) -> anyhow::Result<Outcome> {
    let (session, path) = history::session::load(root, feature)?;
    let text = match format {
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&session)
                .context("cannot print the session as JSON")?;
            text.push('\n');
            text
        }
        Format::Markdown => render::session::markdown(&session, &path),
        Format::Html => render::html::session::page(&session, &path),
        _ => render::session::human(&session, &path),
    };
    out(&text);
    Ok(Outcome::Approved)
}

/// One page of reports, each with the diff it was about taken again from
/// the repository (or a note saying why it cannot be).
pub(super) fn review_page(
    root: &Path,
    reports: &[(&Report, Option<&str>, Option<&str>)],
) -> String {
    let repo = Repository::open(root);
    let diffs: Vec<history::diff::Reviewed> = reports
        .iter()
        .map(|(report, _, _)| match &repo {
            Ok(repo) => history::diff::reviewed(repo, report),
            Err(err) => history::diff::Reviewed {
                diff: None,
                note: Some(format!(
                    "The repository cannot be read, so the diff is not shown: {err}"
                )),
            },
        })
        .collect();
    let pages: Vec<render::html::review::Review<'_>> = reports
        .iter()
        .zip(&diffs)
        .map(
            |((report, at, now), reviewed)| render::html::review::Review {
                report,
                diff: reviewed.diff.as_ref(),
                diff_note: reviewed.note.as_deref(),
                reviewed_at: *at,
                now: *now,
            },
        )
        .collect();
    render::html::review::page(&pages)
}
