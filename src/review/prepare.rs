//! Everything a review needs up to the model call: resolve the branch and the
//! diff base, diff from git objects, load the specs at the main branch's
//! commit, compute the impact, and assemble the budgeted prompt.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::git::{self, Diff, MainBranch, Repository};
use crate::impact;
use crate::prompt::{self, PendingCounter, Prompt, Templates};
use crate::settings::ReviewSettings;
use crate::specs::{self, Document, Section};
use crate::tasks::{Criterion, Feature, Task};
use crate::verdict;

use super::Error;

/// What is shared by every review of a run (and across batch threads).
pub struct Shared {
    pub root: PathBuf,
    pub settings: ReviewSettings,
    pub main: MainBranch,
    /// Built on its own thread; taken when the first prompt is assembled.
    pub counter: std::sync::Arc<PendingCounter>,
    pub templates: Templates,
}

/// What to review.
#[derive(Debug, Clone)]
pub enum Subject {
    Task(Box<Task>),
    Branch {
        branch: String,
        /// `PATH[#Section]` as given on the command line.
        specs: Vec<String>,
        criteria: Vec<Criterion>,
    },
}

impl Subject {
    /// "task 3" or "branch feature/x", for messages.
    pub fn label(&self) -> String {
        match self {
            Subject::Task(task) => format!("task {}", task.id),
            Subject::Branch { branch, .. } => format!("branch {branch}"),
        }
    }

    pub fn task(&self) -> Option<&Task> {
        match self {
            Subject::Task(task) => Some(task),
            Subject::Branch { .. } => None,
        }
    }
}

/// A referenced spec section: (document path, section name; None = all).
type SectionRef = (String, Option<String>);

/// A spec document as loaded, with where it came from.
#[derive(Debug, Clone)]
pub struct LoadedSpec {
    pub document: Document,
    /// "main@<short>" or "working tree".
    pub origin: String,
}

/// The result of preparation: the prompt and every input needed to check the
/// verdict and to rebuild a prompt for the guardian.
pub struct Prepared {
    pub subject: Subject,
    pub branch: String,
    pub base_commit: String,
    pub base_how: String,
    pub head_commit: String,
    pub diff: Diff,
    pub specs: Vec<LoadedSpec>,
    pub primary_spec: String,
    /// The ranked sections given to the prompt (sent or left out).
    pub spec_sections: Vec<prompt::SpecSection>,
    /// The spec sections the prompt actually contains: quotes are checked here.
    pub sent_sections: Vec<(String, Section)>,
    /// Spec files the diff edits that the task did not declare in its scope.
    pub spec_edits: Vec<String>,
    pub notices: Vec<String>,
    pub impact: Option<impact::Impact>,
    pub impact_error: Option<String>,
    pub cross_cutting: Vec<String>,
    /// The prompt's inputs, owned, so the guardian can build its own prompt.
    pub parts: Parts,
    pub prompt: Prompt,
    pub spec_hash: String,
    pub prompt_hash: String,
}

pub fn sha256(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Resolve the head and base commits of a subject and diff them.
pub fn diff_for(
    repo: &Repository,
    main: &MainBranch,
    subject: &Subject,
) -> Result<(String, git::Base, Diff), Error> {
    let (branch, task) = match subject {
        Subject::Task(task) => (task.branch.clone(), Some(task.as_ref())),
        Subject::Branch { branch, .. } => (branch.clone(), None),
    };
    let head = repo
        .resolve_branch(&branch)
        .map_err(|source| Error::BranchMissing {
            subject: subject.label(),
            branch: branch.clone(),
            source: Box::new(source),
        })?;
    let base = repo.diff_base(&git::BaseRequest {
        main,
        head: &head,
        execution_base_commit: task.and_then(|t| t.execution_base_commit.as_deref()),
        base_commit: task.and_then(|t| t.base_commit.as_deref()),
        task_base_branch: task.and_then(|t| t.base_branch.as_deref()),
    })?;
    let diff = repo.diff(&base.commit, &head)?;
    Ok((branch, base, diff))
}

pub fn prepare(shared: &Shared, subject: Subject) -> Result<Prepared, Error> {
    let repo = Repository::open(&shared.root)?;
    let label = subject.label();
    let (branch, base, diff) = diff_for(&repo, &shared.main, &subject)?;
    if diff.is_empty() {
        return Err(Error::EmptyDiff {
            subject: label,
            branch,
            base: short(&base.commit).to_string(),
        });
    }

    let store = crate::tasks::Store::open(&shared.root);
    let feature: Option<Feature> = match subject.task().and_then(|t| t.feature.as_deref()) {
        Some(name) => store.feature(name)?,
        None => None,
    };

    let (specs, referenced) = load_specs(&repo, shared, &subject, feature.as_ref())?;
    let primary_spec = specs[0].document.path.clone();
    let mut notices = Vec::new();
    for spec in &specs {
        if spec.origin == "working tree" {
            notices.push(format!(
                "{} is not committed on {}: it was read from the working tree.",
                spec.document.path, shared.main.name
            ));
        }
    }

    let spec_paths: Vec<&str> = specs.iter().map(|s| s.document.path.as_str()).collect();
    let scope = subject.task().map(|t| t.scope.clone()).unwrap_or_default();
    let mut spec_edits = Vec::new();
    for file in &diff.files {
        let touched = [Some(file.path.as_str()), file.old_path.as_deref()]
            .into_iter()
            .flatten()
            .find(|p| spec_paths.contains(p));
        if let Some(path) = touched {
            notices.push(format!(
                "The diff edits {path}, a spec this review uses. The spec was read from {} at {}, not from the task branch.",
                shared.main.name,
                short(&shared.main.commit)
            ));
            if !scope.declares(path) {
                spec_edits.push(path.to_string());
            }
        }
    }

    let documents: Vec<Document> = specs.iter().map(|s| s.document.clone()).collect();
    // A reference to a section that does not exist is a planning mistake the
    // reviewer should see; the ranking still picks the relevant sections.
    for missing in specs::unresolved_references(&documents, &referenced) {
        notices.push(format!("Spec reference not resolved: {missing}"));
    }
    let task_text = task_text(&subject);
    let identifiers = diff_identifiers(&diff);
    let candidates = specs::select::rank(
        &documents,
        &primary_spec,
        &referenced,
        &task_text,
        &identifiers,
    );
    // A heading with no text of its own says nothing its subsections' heading
    // paths do not; it is sent only when the task references it.
    let spec_sections: Vec<prompt::SpecSection> = candidates
        .iter()
        .filter(|c| c.referenced || !c.section.body().trim().is_empty())
        .map(|c| prompt::SpecSection {
            doc_path: c.doc_path.clone(),
            heading_path: c.section.heading_path(),
            start_line: c.section.start_line,
            end_line: c.section.end_line,
            text: c.section.text.clone(),
            primary: c.primary,
            required: c.referenced,
        })
        .collect();

    let (impact, impact_error) = match compute_impact(&repo, shared, &diff) {
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

    let cross_cutting = feature
        .as_ref()
        .map(|f| f.cross_cutting.clone())
        .unwrap_or_default();
    let parts = Parts {
        task: prompt_task(&subject, &branch, &base.commit, &diff.head_commit),
        criteria: prompt_criteria(&subject),
        scope: prompt::Scope {
            touched: scope.touched.clone(),
            to_create: scope.create.clone(),
            to_modify: scope.modify.clone(),
            to_delete: scope.delete.clone(),
        },
        gates: subject
            .task()
            .map(|t| {
                t.gate_checks
                    .iter()
                    .map(|g| prompt::GateCheck {
                        name: g.name.clone(),
                        status: g.status.clone(),
                        note: g.note.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        assumptions: subject
            .task()
            .map(|t| t.assumptions.clone())
            .unwrap_or_default(),
        notices: notices.clone(),
        cross_cutting: cross_cutting.clone(),
        impact: impact.as_ref().map(impact_rows),
    };
    let schema = serde_json::to_string(&verdict::json_schema()).unwrap_or_default();
    let prompt = prompt::assemble(
        &parts.input(
            prompt::Kind::Review,
            &diff,
            spec_sections.clone(),
            None,
            &schema,
        ),
        shared.counter.get()?,
        shared.settings.budget,
        &shared.templates,
    )?;

    let sent_sections = sent_sections(&documents, &prompt);
    let spec_hash = sha256(
        &sent_sections
            .iter()
            .map(|(path, s)| format!("{path}\n{}\n", s.text))
            .collect::<String>(),
    );
    let prompt_hash = sha256(&prompt.text);

    Ok(Prepared {
        head_commit: diff.head_commit.clone(),
        base_commit: base.commit.clone(),
        base_how: base.how,
        subject,
        branch,
        diff,
        specs,
        primary_spec,
        spec_sections,
        sent_sections,
        spec_edits,
        notices,
        impact,
        impact_error,
        cross_cutting,
        prompt,
        parts,
        spec_hash,
        prompt_hash,
    })
}

pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// The spec documents for a subject (primary first) and the referenced
/// sections. Specs are read at the main branch's commit so a task branch
/// cannot rewrite its own source of truth; a `--spec` not committed there is
/// read from the working tree.
fn load_specs(
    repo: &Repository,
    shared: &Shared,
    subject: &Subject,
    feature: Option<&Feature>,
) -> Result<(Vec<LoadedSpec>, Vec<SectionRef>), Error> {
    let main_commit = &shared.main.commit;
    let exists = |path: &str| matches!(repo.read_file(main_commit, path), Ok(Some(_)));
    let (paths, referenced, cli) = match subject {
        Subject::Task(task) => {
            let refs: Vec<String> = task
                .spec_references
                .iter()
                .map(|r| r.spec.clone())
                .collect();
            let cli_specs = &shared.settings.spec_args;
            let paths = specs::select::spec_paths(
                &refs,
                feature.and_then(|f| f.spec_path.as_deref()),
                task.feature.as_deref(),
                cli_specs,
                &exists,
            );
            let cli_refs: Vec<SectionRef> = cli_specs
                .iter()
                .map(|arg| {
                    let (path, section) = specs::select::split_spec_arg(arg);
                    (normalise(&path), section)
                })
                .collect();
            // The task named nothing, so `--spec` chose: its sections are
            // the referenced ones, and it may be read from the working tree.
            let from_cli = !cli_refs.is_empty()
                && paths
                    .iter()
                    .all(|p| cli_refs.iter().any(|(c, _)| c == &normalise(p)));
            let referenced = if from_cli {
                cli_refs
            } else {
                task.spec_references
                    .iter()
                    .map(|r| (normalise(&r.spec), r.section.clone()))
                    .collect()
            };
            (paths, referenced, from_cli)
        }
        Subject::Branch { specs: args, .. } => {
            let mut paths = Vec::new();
            let mut referenced = Vec::new();
            for arg in args {
                let (path, section) = specs::select::split_spec_arg(arg);
                let path = normalise(&path);
                if !paths.contains(&path) {
                    paths.push(path.clone());
                }
                referenced.push((path, section));
            }
            (paths, referenced, true)
        }
    };
    if paths.is_empty() {
        return Err(Error::NoSpec {
            subject: subject.label(),
        });
    }
    let mut loaded = Vec::new();
    for path in paths {
        let path = normalise(&path);
        let (bytes, origin) = match repo.read_file(main_commit, &path)? {
            Some(bytes) => (
                bytes,
                format!("{}@{}", shared.main.name, short(main_commit)),
            ),
            None if cli => match std::fs::read(shared.root.join(&path)) {
                Ok(bytes) => (bytes, "working tree".to_string()),
                Err(_) => return Err(spec_missing(subject, &path, shared, true)),
            },
            None => return Err(spec_missing(subject, &path, shared, false)),
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        loaded.push(LoadedSpec {
            document: specs::markdown::parse(&path, &text),
            origin,
        });
    }
    Ok((loaded, referenced))
}

fn spec_missing(subject: &Subject, path: &str, shared: &Shared, looked_in_tree: bool) -> Error {
    Error::SpecMissing {
        subject: subject.label(),
        path: path.to_string(),
        at: format!("{} ({})", shared.main.name, short(&shared.main.commit)),
        hint: if looked_in_tree {
            " nor in the working tree".to_string()
        } else {
            format!(
                "; specs are read from {} so a task branch cannot rewrite them: commit the spec there",
                shared.main.name
            )
        },
    }
}

/// Repository-relative form of a spec path ("./specs/x.md" → "specs/x.md").
fn normalise(path: &str) -> String {
    let trimmed = path.trim().trim_start_matches("./");
    Path::new(trimmed)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn task_text(subject: &Subject) -> String {
    match subject {
        Subject::Task(task) => {
            let mut text = format!("{}\n{}\n{}\n", task.title, task.description, task.rationale);
            for c in &task.criteria {
                text.push_str(&c.text);
                text.push('\n');
            }
            for r in &task.spec_references {
                if let Some(req) = &r.requirement {
                    text.push_str(req);
                    text.push('\n');
                }
            }
            text
        }
        Subject::Branch {
            branch, criteria, ..
        } => {
            let mut text = branch.replace(['/', '-', '_'], " ");
            for c in criteria {
                text.push('\n');
                text.push_str(&c.text);
            }
            text
        }
    }
}

/// Identifiers on changed lines, most frequent first, for spec relevance.
fn diff_identifiers(diff: &Diff) -> Vec<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for file in &diff.files {
        for hunk in &file.hunks {
            for line in &hunk.lines {
                if line.kind == git::LineKind::Context {
                    continue;
                }
                for word in line
                    .text
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .filter(|w| w.len() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
                {
                    *counts.entry(word.to_string()).or_default() += 1;
                }
            }
        }
    }
    let mut ranked: Vec<(String, usize)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.into_iter().take(400).map(|(w, _)| w).collect()
}

fn sent_sections(documents: &[Document], prompt: &Prompt) -> Vec<(String, Section)> {
    let mut out = Vec::new();
    for (doc_path, heading) in &prompt.sent_sections {
        if let Some(doc) = documents.iter().find(|d| &d.path == doc_path) {
            if let Some(section) = doc.sections.iter().find(|s| &s.heading_path() == heading) {
                out.push((doc_path.clone(), section.clone()));
            }
        }
    }
    out
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
    repo: &Repository,
    shared: &Shared,
    diff: &Diff,
) -> Result<impact::Impact, String> {
    let files: Vec<impact::FileEntry> = repo
        .list_files(&diff.head_commit)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|f| impact::FileEntry {
            path: f.path,
            blob: f.blob,
        })
        .collect();
    let blobs = GitBlobs {
        root: shared.root.clone(),
        pool: std::sync::Mutex::new(vec![
            Repository::open(&shared.root).map_err(|e| e.to_string())?,
        ]),
    };
    let cache = shared.root.join(".speed/cache");
    // A dry run changes nothing, not even the cache; it may still read it.
    let cache_use = if shared.settings.dry_run {
        impact::CacheUse::Read(&cache)
    } else {
        impact::CacheUse::ReadWrite(&cache)
    };
    let started = std::time::Instant::now();
    let impact = impact::analyze(&files, diff, &blobs, cache_use).map_err(|e| e.to_string())?;
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

/// The owned inputs of a prompt, kept so the guardian's prompt is built from
/// exactly what the review saw.
#[derive(Debug, Clone)]
pub struct Parts {
    pub task: prompt::Task,
    pub criteria: Vec<prompt::Criterion>,
    pub scope: prompt::Scope,
    pub gates: Vec<prompt::GateCheck>,
    pub assumptions: Vec<String>,
    pub notices: Vec<String>,
    pub cross_cutting: Vec<String>,
    pub impact: Option<Vec<prompt::ImpactRow>>,
}

impl Parts {
    pub fn input<'a>(
        &self,
        kind: prompt::Kind,
        diff: &'a Diff,
        spec: Vec<prompt::SpecSection>,
        vision: Option<prompt::Vision>,
        schema: &'a str,
    ) -> prompt::Input<'a> {
        prompt::Input {
            kind,
            task: self.task.clone(),
            criteria: self.criteria.clone(),
            scope: self.scope.clone(),
            gates: self.gates.clone(),
            assumptions: self.assumptions.clone(),
            notices: self.notices.clone(),
            diff,
            spec,
            cross_cutting: self.cross_cutting.clone(),
            impact: self.impact.clone(),
            vision,
            schema,
        }
    }
}

fn prompt_task(subject: &Subject, branch: &str, base: &str, head: &str) -> prompt::Task {
    let mut task = prompt::Task {
        branch: branch.to_string(),
        base_commit: short(base).to_string(),
        head_commit: short(head).to_string(),
        ..prompt::Task::default()
    };
    match subject {
        Subject::Task(t) => {
            task.id = t.id.clone();
            task.title = t.title.clone();
            task.feature = t.feature.clone();
            task.description = t.description.clone();
            task.rationale = t.rationale.clone();
        }
        Subject::Branch { branch, .. } => {
            task.id = format!("branch {branch}");
            task.title = format!("Changes on {branch}");
            task.description =
                "No task file: review this branch against the spec sections given.".to_string();
        }
    }
    task
}

fn prompt_criteria(subject: &Subject) -> Vec<prompt::Criterion> {
    let criteria: &[Criterion] = match subject {
        Subject::Task(t) => &t.criteria,
        Subject::Branch { criteria, .. } => criteria,
    };
    criteria
        .iter()
        .map(|c| prompt::Criterion {
            id: c.id.clone(),
            text: c.text.clone(),
            verify_by: c.verify_by.clone().unwrap_or_default(),
        })
        .collect()
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

fn impact_rows(impact: &impact::Impact) -> Vec<prompt::ImpactRow> {
    impact
        .rows()
        .into_iter()
        .map(|row| prompt::ImpactRow {
            symbol: row.symbol,
            kind: serde_json::to_value(row.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            change: if row.breaking {
                format!("{} (breaking)", row.change)
            } else {
                row.change.to_string()
            },
            dependents: row.dependents,
            dependent_files: row.files,
            stability: row.stability.to_string(),
            top: row.top,
        })
        .collect()
}

/// The guardian's prompt: the vision, the spec sections the review sent, the
/// task and its criteria, and the diff ranked and trimmed the same way, in
/// the guardian's own budget.
pub fn guardian_prompt(shared: &Shared, prepared: &Prepared) -> Result<Prompt, Error> {
    let repo = Repository::open(&shared.root)?;
    let vision_path = shared.settings.guardian.vision_file.clone();
    let vision = repo
        .read_file(&shared.main.commit, &vision_path)?
        .map(|bytes| prompt::Vision {
            doc_path: vision_path.clone(),
            text: String::from_utf8_lossy(&bytes).into_owned(),
        });
    let mut parts = prepared.parts.clone();
    if vision.is_none() {
        parts.notices.push(format!(
            "No product vision: {vision_path} does not exist on {}. Judge alignment from the spec sections.",
            shared.main.name
        ));
    }
    let sent: Vec<prompt::SpecSection> = prepared
        .spec_sections
        .iter()
        .filter(|s| {
            prepared
                .prompt
                .sent_sections
                .iter()
                .any(|(path, heading)| path == &s.doc_path && heading == &s.heading_path)
        })
        .cloned()
        .collect();
    let schema = serde_json::to_string(&verdict::guardian_json_schema()).unwrap_or_default();
    let input = parts.input(
        prompt::Kind::Guardian,
        &prepared.diff,
        sent,
        vision,
        &schema,
    );
    Ok(prompt::assemble(
        &input,
        shared.counter.get()?,
        shared.settings.guardian.budget,
        &shared.templates,
    )?)
}
