//! The facts speed establishes itself before any model is asked: the blast
//! radius of the changed symbols (from the tree at the head commit, through
//! the index cache), speed's own checks and the configured command checks,
//! and for a defect fix its scope, size and reproducing test. They reach
//! the model as automated check results and the decision as blocking
//! findings.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::checks::{self, Check, Finding};
use crate::defects;
use crate::git::{Diff, Repository};
use crate::impact;
use crate::secrets::{self, DiffSecret, Redaction};
use crate::syntax::Store;
use crate::work::{Resolved, Subject};

use super::Error;
use super::context::Context;
use super::redact;
use super::sources::Sources;

/// What speed established about one change.
pub struct Facts {
    pub impact: Option<impact::Impact>,
    /// Why the blast radius could not be computed.
    pub impact_error: Option<String>,
    /// speed's own checks, worst first.
    pub checks: Vec<Finding>,
    /// The command checks as they ran (`[[checks.command]]`), in order.
    pub checks_run: Vec<checks::CheckRun>,
    /// What speed established about a defect fix.
    pub defect: Option<defects::Findings>,
    /// What could not be seen or checked, for the prompt and the report.
    pub notices: Vec<String>,
    /// Secrets replaced in the diff, the subject's fields and the sources.
    pub redactions: Vec<Redaction>,
}

/// Establish the facts of `resolved`'s diff (already redacted, with its
/// secrets in `diff_secrets`); `subject_secrets` were found in the
/// subject's own fields.
pub fn establish(
    ctx: &Context,
    repo: &Repository,
    subject: &Subject,
    resolved: &Resolved,
    sources: &Sources,
    subject_secrets: Vec<Redaction>,
    diff_secrets: &[DiffSecret],
) -> Result<Facts, Error> {
    let diff = &resolved.diff;
    let defect = match subject.defect() {
        Some(review) => Some(
            defects::establish(
                repo,
                &ctx.config.defect,
                &review.defect,
                diff,
                &resolved.base.commit,
            )
            .map_err(|e| Error::Input {
                path: PathBuf::from(".speed/config.toml"),
                message: e.to_string(),
            })?,
        ),
        None => None,
    };
    // The subject's own fields are this change's: a secret there is its
    // finding. The sources' (spec, vision, concerns) are not: they were
    // redacted all the same, and `sources` says once per file to fix them.
    let other_secrets = subject_secrets;
    let head_files = repo
        .list_files(&diff.head_commit)
        .map_err(|e| e.to_string());
    let blobs = GitBlobs {
        root: ctx.root.clone(),
        pool: std::sync::Mutex::new(vec![Repository::open(&ctx.root)?]),
    };
    // `SPEED_PARSE_FRESH=1`: every part reads and parses for itself, as
    // before the store (tests/it/parse_once.rs compares the two).
    let store = if std::env::var_os("SPEED_PARSE_FRESH").is_some_and(|v| v == "1") {
        Store::unshared(&blobs)
    } else {
        Store::new(&blobs)
    };
    // Unlisted means unread: the checks stand down where they would have
    // read a file of the head commit.
    let head: HashMap<String, String> = head_files
        .as_ref()
        .map(|files| {
            files
                .iter()
                .map(|f| (f.path.clone(), f.blob.clone()))
                .collect()
        })
        .unwrap_or_default();
    let files = checks::Files::new(&store, diff, &head);
    let (impact, (checks, check_notices, checks_run)) = std::thread::scope(|scope| {
        // The index on its own thread (and all cores) reads and parses
        // while this one outlines the changed files. The checks hold the
        // store until they have said which trees they will read: the trees
        // made meanwhile wait for them, so that no file is parsed twice.
        let registering = store.hold();
        let index = scope.spawn(|| match &head_files {
            Ok(list) => compute_impact(&store, list, ctx, diff),
            Err(e) => Err(e.clone()),
        });
        let prepared = prepare_checks(ctx, &files);
        let builtin = checks::builtin::Input {
            diff,
            scope: subject.task().map(|t| &t.scope),
            criteria: subject.criteria(),
            secrets: diff_secrets,
            files: &files,
            sides: &prepared.sides,
            calls: prepared.calls.as_ref().map(|c| c.register(&store)),
        };
        drop(registering);
        let input = CheckInput {
            diff,
            other_secrets: &other_secrets,
            coordination: &sources.coordination,
            sides: &prepared.sides,
        };
        // The checks that do not read the index run meanwhile.
        let early = run_checks(ctx, &input, &builtin);
        let impact = index
            .join()
            .unwrap_or_else(|_| Err("an indexing thread panicked".to_string()));
        let checks = early.finish(impact.as_ref().ok());
        (impact, checks)
    });
    let s = store.stats();
    tracing::info!(
        "trees: {} blobs read, {} trees made ({} of files parsed before), {} read for the checks",
        s.texts,
        s.trees,
        s.repeated,
        s.reads
    );
    crate::memory::free_in_background(store.into_contents());
    let mut notices = Vec::new();
    let (impact, impact_error) = match impact {
        Ok(impact) => {
            notices.extend(impact_notices(&impact));
            for w in &impact.warnings {
                tracing::warn!("impact: {w}");
            }
            (Some(impact), None)
        }
        Err(err) => {
            notices.push(format!("Impact assessment unavailable: {err}"));
            (None, Some(err))
        }
    };
    notices.extend(check_notices);
    let mut redactions = redact::diff_redactions(diff_secrets);
    redactions.extend(other_secrets);
    redactions.extend(sources.redactions.iter().cloned());
    Ok(Facts {
        impact,
        impact_error,
        checks,
        checks_run,
        defect,
        notices,
        redactions,
    })
}

/// Blob reads for the impact index, from several threads at once. git2
/// handles are not `Sync`, so each read borrows a handle from a pool (one
/// per thread in practice) instead of queueing behind a single one.
struct GitBlobs {
    root: std::path::PathBuf,
    pool: std::sync::Mutex<Vec<Repository>>,
}

impl GitBlobs {
    fn handle(&self) -> Result<Repository, String> {
        let spare = self
            .pool
            .lock()
            .map_err(|_| "a blob reader thread panicked".to_string())?
            .pop();
        match spare {
            Some(repo) => Ok(repo),
            None => Repository::open(&self.root).map_err(|e| e.to_string()),
        }
    }
}

impl impact::Blobs for GitBlobs {
    fn read(&self, blob: &str) -> Result<Vec<u8>, String> {
        let repo = self.handle()?;
        let bytes = repo.read_blob(blob).map_err(|e| e.to_string());
        // A poisoned pool only loses this handle: the next read opens one.
        if let Ok(mut pool) = self.pool.lock() {
            pool.push(repo);
        }
        bytes
    }
}

fn compute_impact(
    store: &Store,
    head_files: &[crate::git::TreeFile],
    ctx: &Context,
    diff: &Diff,
) -> Result<impact::Impact, String> {
    let files: Vec<impact::FileEntry> = head_files
        .iter()
        .map(|f| impact::FileEntry {
            path: f.path.clone(),
            blob: f.blob.clone(),
        })
        .collect();
    let cache = ctx.root.join(".speed/cache");
    // A dry run changes nothing, not even the cache; it may still read it.
    let cache_use = if ctx.config.dry_run {
        impact::CacheUse::Read(&cache)
    } else {
        impact::CacheUse::ReadWrite(&cache)
    };
    let started = std::time::Instant::now();
    let impact = impact::analyze_in(
        store,
        &files,
        diff,
        cache_use,
        impact::Parsing::Needed,
        impact::TIME_LIMIT,
    )
    .map_err(|e| e.to_string())?;
    let s = &impact.stats;
    tracing::info!(
        "impact: {} ms; {} files indexed, {} parsed or read from the cache ({} hits), \
         {} known by their cached words; extraction {} ms, index {} ms, dependents {} ms",
        started.elapsed().as_millis(),
        s.files_indexed,
        s.files_parsed,
        s.cache_hits,
        s.words_cached,
        s.extract_ms,
        s.index_ms,
        s.impact_ms
    );
    Ok(impact)
}

/// What the blast radius could not see, so no one reads a file it skipped
/// as a file without dependents.
fn impact_notices(impact: &impact::Impact) -> Vec<String> {
    const LISTED: usize = 3;
    let some = |items: Vec<String>| -> String {
        let more = items.len().saturating_sub(LISTED);
        let mut s = items
            .into_iter()
            .take(LISTED)
            .collect::<Vec<_>>()
            .join(", ");
        if more > 0 {
            s.push_str(&format!(" and {more} more"));
        }
        s
    };
    let mut out = Vec::new();
    if !impact.skipped.is_empty() {
        let n = impact.skipped.len();
        out.push(format!(
            "Impact assessment: {n} file{} not indexed, so references in {} are not counted: {}",
            if n == 1 { "" } else { "s" },
            if n == 1 { "it" } else { "them" },
            some(
                impact
                    .skipped
                    .iter()
                    .map(|s| format!("{} ({})", s.path, s.reason))
                    .collect()
            )
        ));
    }
    if !impact.syntax_errors.is_empty() {
        let n = impact.syntax_errors.len();
        out.push(format!(
            "Impact assessment: {n} file{} with syntax errors, where references may be missing: {}",
            if n == 1 { "" } else { "s" },
            some(impact.syntax_errors.clone())
        ));
    }
    // Cuts made by a limit (a radius over a hub, the time limit).
    out.extend(impact.limits.iter().cloned());
    out
}

/// What the checks read besides the diff and the built-in checks' input.
struct CheckInput<'a> {
    diff: &'a Diff,
    /// Secrets found in the subject's own fields (a task's, a defect's):
    /// each is a finding too.
    other_secrets: &'a [Redaction],
    coordination: &'a crate::tasks::Coordination,
    sides: &'a checks::Sides,
}

/// What the checks register while they hold the store (see
/// `Store::hold`): both sides of each changed file outlined (their trees
/// kept for the index, which parses them first), the files the macro
/// reader may parse kept, and what `breaking_change` will read at call
/// sites, so that no file is parsed twice.
struct Prepared {
    sides: checks::Sides,
    calls: Option<checks::builtin::CallReader>,
}

fn prepare_checks(ctx: &Context, files: &checks::Files) -> Prepared {
    let config = &ctx.config.checks;
    let started = std::time::Instant::now();
    let sides = checks::Sides::load(files);
    if config.severity(Check::TestWeakened).is_some() {
        for key in checks::builtin::macro_files(files, &sides) {
            files.store().keep(&key);
        }
    }
    let calls = config
        .severity(Check::BreakingChange)
        .and_then(|_| checks::builtin::CallReader::of(files.diff(), &sides));
    tracing::info!(
        "checks: both sides of the changed files outlined in {} ms",
        started.elapsed().as_millis()
    );
    Prepared { sides, calls }
}

/// The checks run while the index is built, and what is left for when it
/// is done.
struct Early<'a> {
    started: checks::builtin::Started<'a>,
    findings: Vec<Finding>,
    notices: Vec<String>,
    /// How each configured command ran.
    runs: Vec<checks::CheckRun>,
}

impl Early<'_> {
    /// `breaking_change` on the index; every finding, worst first, what
    /// could not be checked, and how each command ran.
    fn finish(
        self,
        impact: Option<&impact::Impact>,
    ) -> (Vec<Finding>, Vec<String>, Vec<checks::CheckRun>) {
        let t = std::time::Instant::now();
        let outcome = self.started.finish(impact);
        tracing::info!("checks: breaking_change in {} ms", t.elapsed().as_millis());
        let mut findings = outcome.findings;
        findings.extend(self.findings);
        let mut notices = outcome.notices;
        notices.extend(self.notices);
        checks::sort(&mut findings);
        (findings, notices, self.runs)
    }
}

/// Run the built-in checks that need not wait for the index, and the
/// configured commands. What could not be checked is returned as notices;
/// how each command ran, as its run.
fn run_checks<'a>(
    ctx: &'a Context,
    input: &CheckInput,
    builtin: &'a checks::builtin::Input<'a>,
) -> Early<'a> {
    let t = std::time::Instant::now();
    let config = &ctx.config.checks;
    let started = checks::builtin::start(builtin, config);
    let mut findings = Vec::new();
    let mut notices = Vec::new();
    if let (false, Some(severity)) = (
        input.coordination.is_empty(),
        config.severity(Check::Coordination),
    ) {
        findings.extend(checks::coordination::run(
            &checks::coordination::Input {
                diff: input.diff,
                coordination: input.coordination,
                sides: input.sides,
            },
            severity,
        ));
    }
    if let Some(severity) = config.severity(Check::Secret) {
        for r in input.other_secrets {
            findings.push(Finding {
                check: Check::Secret.name().to_string(),
                severity,
                file: Some(r.file.clone()),
                line: (r.line > 0).then_some(r.line),
                message: format!(
                    "A secret ({}) is written here. speed replaced it with {} in everything it sends or writes; remove it and rotate it.",
                    r.rule,
                    secrets::placeholder(&r.rule)
                ),
                ..Finding::default()
            });
        }
    }
    let mut runs = Vec::new();
    tracing::info!(
        "checks: those that need not wait for the index in {} ms",
        t.elapsed().as_millis()
    );
    if !config.commands.is_empty() {
        match checks::command::run(&ctx.root, input.diff, &config.commands) {
            Ok(ran) => {
                findings.extend(ran.findings);
                notices.extend(ran.notices);
                runs = ran.runs;
            }
            // A configured gate that could not run does not pass.
            Err(e) => {
                findings.extend(config.commands.iter().map(|c| Finding {
                    check: c.name.clone(),
                    severity: c.severity,
                    file: None,
                    line: None,
                    message: format!("`{}` could not be run: {e}", c.run.join(" ")),
                    ..Finding::default()
                }));
                runs = checks::CheckRun::skipped(&config.commands, &e.to_string());
            }
        }
    }
    Early {
        started,
        findings,
        notices,
        runs,
    }
}
