//! Everything a review needs up to the model call: resolve the branch and the
//! diff base (stacked on an unmerged dependency's head when the branch builds
//! on one), diff from git objects, load the specs at the main branch's
//! commit, compute the impact, and assemble the budgeted prompt.

use crate::git::short;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::git::{self, Diff, MainBranch, Repository};
use crate::impact;
use crate::prompt::{self, PendingCounter, Prompt, Templates};
use crate::settings::ReviewSettings;
use crate::specs::{self, Document, Section};
use crate::tasks::{self, Actor, Criterion, Feature, Task};
use crate::verdict;

use super::Error;
use super::defect::{self, DefectReview, Findings};

/// What is shared by every review of a run (and across batch threads).
pub struct Shared {
    pub root: PathBuf,
    pub settings: ReviewSettings,
    pub main: MainBranch,
    /// Built on its own thread; taken when the first prompt is assembled.
    pub counter: std::sync::Arc<PendingCounter>,
    pub templates: Templates,
    /// Who the reviews are recorded as.
    pub actor: Actor,
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
        /// The file the criteria were read from (`--criteria`).
        criteria_file: Option<PathBuf>,
    },
    /// The fix of a defect, on the branch its state names.
    Defect(Box<DefectReview>),
}

impl Subject {
    /// "task 3" or "branch feature/x", for messages.
    pub fn label(&self) -> String {
        match self {
            Subject::Task(task) => format!("task {}", task.id),
            Subject::Branch { branch, .. } => format!("branch {branch}"),
            Subject::Defect(review) => review.defect.label(),
        }
    }

    pub fn task(&self) -> Option<&Task> {
        match self {
            Subject::Task(task) => Some(task),
            Subject::Branch { .. } | Subject::Defect(_) => None,
        }
    }

    /// The piece of work the merge gate knows this subject by; None for a
    /// branch reviewed without a task.
    pub fn work(&self) -> Option<super::verdicts::Work> {
        match self {
            Subject::Task(task) => Some(super::verdicts::Work::of_task(task)),
            Subject::Defect(review) => Some(super::verdicts::Work::Defect {
                name: review.defect.name.clone(),
            }),
            Subject::Branch { .. } => None,
        }
    }

    pub fn defect(&self) -> Option<&DefectReview> {
        match self {
            Subject::Defect(review) => Some(review),
            Subject::Task(_) | Subject::Branch { .. } => None,
        }
    }

    /// The branch under review.
    pub fn branch(&self) -> &str {
        match self {
            Subject::Task(task) => &task.branch,
            Subject::Branch { branch, .. } => branch,
            Subject::Defect(review) => &review.defect.branch,
        }
    }

    /// The acceptance criteria as the prompt lists them.
    pub fn criteria(&self) -> &[Criterion] {
        match self {
            Subject::Task(task) => &task.criteria,
            Subject::Branch { criteria, .. } => criteria,
            Subject::Defect(review) => &review.criteria,
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
    /// Secrets replaced in its text.
    pub redactions: Vec<crate::secrets::Redaction>,
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
    /// What speed established about a defect fix.
    pub defect: Option<Findings>,
    pub cross_cutting: Vec<String>,
    /// The product vision for the guardian, redacted; None when the
    /// guardian will not run or the file does not exist.
    pub vision: Option<prompt::Vision>,
    /// The prompt's inputs, owned, so the guardian can build its own prompt.
    pub parts: Parts,
    pub prompt: Prompt,
    pub spec_hash: String,
    /// speed's own checks, worst first.
    pub checks: Vec<crate::checks::Finding>,
    /// Secrets replaced in the diff, the specs and the task's fields.
    pub redactions: Vec<crate::secrets::Redaction>,
}

impl Prepared {
    /// The spec documents, parsed.
    pub fn documents(&self) -> Vec<Document> {
        self.specs.iter().map(|s| s.document.clone()).collect()
    }
}

pub fn sha256(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// A subject's branch, base and diff, and what its dependencies are.
pub struct Resolved {
    pub branch: String,
    pub base: git::Base,
    pub diff: Diff,
    /// One line per `depends_on` entry: merged, stacked on, or why not.
    pub dependencies: Vec<String>,
}

/// What a review of an empty diff decides from, without a model.
#[derive(Debug, Clone)]
pub struct Empty {
    pub branch: String,
    pub base_commit: String,
    pub base_how: String,
    pub head_commit: String,
    pub diff_hash: String,
}

/// Resolve the head and base commits of a subject and diff them.
pub fn diff_for(
    repo: &Repository,
    main: &MainBranch,
    subject: &Subject,
) -> Result<Resolved, Error> {
    let branch = subject.branch().to_string();
    let task = subject.task();
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
    let (base, dependencies) = match task {
        Some(task) if !task.depends_on.is_empty() => stack(repo, main, task, &head, base),
        _ => (base, Vec::new()),
    };
    let diff = repo.diff(&base.commit, &head)?;
    Ok(Resolved {
        branch,
        base,
        diff,
        dependencies,
    })
}

/// A dependency's branch that is not merged into main but that the task's
/// branch contains.
struct Unmerged {
    id: String,
    branch: String,
    head: String,
}

/// Moves the base of a task that builds on unmerged dependencies to the
/// head of the one it was built on, so the diff shows this task's own work,
/// and describes each dependency for the prompt. An `execution_base_commit`
/// is where the orchestrator says the work started, so it is kept.
fn stack(
    repo: &Repository,
    main: &MainBranch,
    task: &Task,
    head: &str,
    base: git::Base,
) -> (git::Base, Vec<String>) {
    let store = tasks::Store::open(repo.root());
    let mut lines = Vec::new();
    let mut unmerged: Vec<Unmerged> = Vec::new();
    // Each dependency costs graph walks, and choosing among them compares
    // every pair: a task file listing thousands must not stall the review.
    const MAX_DEPENDENCIES: usize = 32;
    let examined = task.depends_on.len().min(MAX_DEPENDENCIES);
    for id in &task.depends_on[..examined] {
        if id == &task.id {
            lines.push(format!("task {id}: this task itself (ignored)"));
            continue;
        }
        let dependency = match store.dependency(task, id) {
            Ok(Some(dependency)) => dependency,
            Ok(None) => {
                lines.push(format!("task {id}: no task file beside this one"));
                continue;
            }
            Err(err) => {
                lines.push(format!("task {id}: its task file cannot be read ({err})"));
                continue;
            }
        };
        let branch = dependency.branch;
        if branch == task.branch {
            // Its head is this task's head: stacking on it would hide the
            // work under review, so the base stays where it was.
            lines.push(format!(
                "task {id} (branch {branch}): shares this task's branch"
            ));
            continue;
        }
        let Ok(dep_head) = repo.resolve_branch(&branch) else {
            lines.push(format!("task {id} (branch {branch}): branch not found"));
            continue;
        };
        let merged = repo.is_ancestor(&dep_head, &main.commit).unwrap_or(false);
        let contained = repo.is_ancestor(&dep_head, head).unwrap_or(false);
        let line = match (merged, contained) {
            (true, _) => format!("task {id} (branch {branch}): merged into {}", main.name),
            (false, true) => {
                unmerged.push(Unmerged {
                    id: id.clone(),
                    branch: branch.clone(),
                    head: dep_head.clone(),
                });
                format!(
                    "task {id} (branch {branch}, head {}): not merged into {}; this branch contains it",
                    short(&dep_head),
                    main.name
                )
            }
            (false, false) => format!(
                "task {id} (branch {branch}): not merged into {} and not part of this branch",
                main.name
            ),
        };
        lines.push(line);
    }
    if examined < task.depends_on.len() {
        lines.push(format!(
            "{} more tasks, not examined: only the first {MAX_DEPENDENCIES} dependencies are",
            task.depends_on.len() - examined
        ));
    }
    if base.how == "execution_base_commit" {
        return (base, lines);
    }
    // Only a dependency newer than the base moves it; of several, the one
    // that contains the others (the last one built on).
    let newer: Vec<&Unmerged> = unmerged
        .iter()
        .filter(|d| {
            d.head != base.commit && repo.is_ancestor(&base.commit, &d.head).unwrap_or(false)
        })
        .collect();
    let Some(chosen) = newer
        .iter()
        .find(|d| {
            newer
                .iter()
                .all(|other| repo.is_ancestor(&other.head, &d.head).unwrap_or(false))
        })
        .or(newer.first())
    else {
        return (base, lines);
    };
    let mut how = format!(
        "head of task {}'s branch {} ({}): this task depends on it and it is not merged into {}, so the diff starts there and shows only this task's work (without it: {})",
        chosen.id,
        chosen.branch,
        short(&chosen.head),
        main.name,
        base.how
    );
    let others: Vec<&str> = newer
        .iter()
        .filter(|d| d.id != chosen.id && !repo.is_ancestor(&d.head, &chosen.head).unwrap_or(false))
        .map(|d| d.id.as_str())
        .collect();
    if !others.is_empty() {
        how.push_str(&format!(
            "; the work of task {} is not in that head and still shows in the diff",
            others.join(", task ")
        ));
    }
    let base = git::Base {
        commit: chosen.head.clone(),
        how,
    };
    (base, lines)
}

pub fn prepare(shared: &Shared, subject: Subject) -> Result<Prepared, Error> {
    let repo = Repository::open(&shared.root)?;
    let label = subject.label();
    // Secrets are replaced where they are read, so nothing later sees them.
    let mut subject = subject;
    let mut task_secrets = super::guard::redact_subject(&mut subject, &shared.root);
    if let Subject::Defect(review) = &mut subject {
        task_secrets.extend(defect::redact(review, &shared.root));
    }
    let Resolved {
        branch,
        base,
        mut diff,
        dependencies,
    } = diff_for(&repo, &shared.main, &subject)?;
    let diff_secrets = crate::secrets::redact_diff(&mut diff);
    if diff.is_empty() {
        return Err(Error::EmptyDiff {
            subject: label,
            base: short(&base.commit).to_string(),
            found: Box::new(Empty {
                branch,
                base_commit: base.commit,
                base_how: base.how,
                head_commit: diff.head_commit,
                diff_hash: diff.sha256,
            }),
        });
    }

    let findings = match subject.defect() {
        Some(review) => Some(defect::establish(
            &repo,
            shared,
            &review.defect,
            &diff,
            &base.commit,
        )?),
        None => None,
    };

    let store = tasks::Store::open(&shared.root);
    let feature: Option<Feature> = match subject.task() {
        Some(task) => store.feature_of(task)?,
        None => None,
    };

    let mut notices = Vec::new();
    if let Some(review) = subject.defect() {
        notices.extend(defect::notices(&review.defect));
    }
    let (specs, referenced, from_cli) =
        load_specs(&repo, shared, &subject, feature.as_ref(), &mut notices)?;
    let primary_spec = specs[0].document.path.clone();
    if base.how.starts_with("head of task ") {
        notices.push(format!("The diff starts at the {}", base.how));
    }
    for spec in &specs {
        if spec.origin == "working tree" {
            notices.push(format!(
                "{} is not committed on {}: it was read from the working tree.",
                spec.document.path, shared.main.name
            ));
        }
    }

    let spec_paths: Vec<&str> = specs.iter().map(|s| s.document.path.as_str()).collect();
    let scope = match &subject {
        Subject::Defect(review) => tasks::Scope {
            modify: review.defect.triage.affected_files.clone(),
            ..tasks::Scope::default()
        },
        _ => subject.task().map(|t| t.scope.clone()).unwrap_or_default(),
    };
    let mut spec_edits = Vec::new();
    for file in &diff.files {
        let touched = [Some(file.path.as_str()), file.old_path.as_deref()]
            .into_iter()
            .flatten()
            .find(|p| spec_paths.contains(p));
        let Some(path) = touched else { continue };
        if let Subject::Branch { .. } = subject {
            // A branch with no task has no scope to break: docs change with
            // code. The review still judges against main's spec.
            notices.push(format!(
                "The branch also edits {path}, a spec this review uses; that is normal when docs change with code. The code is judged against the spec on {} at {}, not the branch's edit.",
                shared.main.name,
                short(&shared.main.commit)
            ));
            continue;
        }
        notices.push(format!(
            "The diff edits {path}, a spec this review uses. The spec was read from {} at {}, not from the task branch.",
            shared.main.name,
            short(&shared.main.commit)
        ));
        if !scope.declares(path) {
            spec_edits.push(path.to_string());
        }
    }

    let documents: Vec<Document> = specs.iter().map(|s| s.document.clone()).collect();
    // A task's reference to a section that does not exist is a planning
    // mistake the reviewer should see; the ranking still picks the relevant
    // sections. A `--spec PATH#Section` that names none is the user's typo:
    // an error listing the sections there are.
    for missing in specs::unresolved_references(&documents, &referenced) {
        if from_cli {
            return Err(Error::SpecSection {
                subject: label,
                source: missing,
            });
        }
        notices.push(format!("Spec reference not resolved: {missing}"));
    }
    let task_text = task_text(&subject);
    let identifiers = diff_identifiers(&diff);
    let mut candidates = specs::select::rank(
        &documents,
        &primary_spec,
        &referenced,
        &task_text,
        &identifiers,
    );
    if from_cli {
        // `--spec PATH#Section` sends that section (its heading path gives
        // the parent headings), not the rest of the file.
        let whole = |path: &str| referenced.iter().any(|(p, s)| p == path && s.is_none());
        candidates.retain(|c| c.referenced || whole(&c.doc_path));
    }
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

    let mut cross_cutting = feature
        .as_ref()
        .map(|f| f.cross_cutting.clone())
        .unwrap_or_default();
    let mut other_secrets = task_secrets;
    other_secrets.extend(specs.iter().flat_map(|s| s.redactions.iter().cloned()));
    if let Some(f) = &feature {
        other_secrets.extend(super::guard::redact_lines(
            &mut cross_cutting,
            &f.dir.join("cross_cutting_concerns.json"),
            &shared.root,
        ));
    }
    let vision = load_vision(&repo, shared)?;
    if let Some((_, found)) = &vision {
        other_secrets.extend(found.iter().cloned());
    }
    let vision = vision.map(|(v, _)| v);
    let blobs = super::guard::Blobs::new(Repository::open(&shared.root)?, &diff.head_commit);
    let (checks, check_notices) = super::guard::run_checks(
        shared,
        &super::guard::CheckInput {
            subject: &subject,
            diff: &diff,
            impact: impact.as_ref(),
            diff_secrets: &diff_secrets,
            other_secrets: &other_secrets,
            blobs: &blobs,
        },
    );
    notices.extend(check_notices);
    let mut redactions = super::guard::diff_redactions(&diff_secrets);
    redactions.extend(other_secrets);

    let parts = Parts {
        kind: match subject {
            Subject::Defect(_) => prompt::Kind::Defect,
            _ => prompt::Kind::Review,
        },
        task: prompt_task(&subject, &branch, &base.commit, &diff.head_commit),
        criteria: prompt_criteria(&subject),
        task_notes: task_notes(&subject, &dependencies),
        previous_review: previous_review(&subject),
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
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
            .into_iter()
            .chain(super::guard::gate_checks(&checks))
            .collect(),
        assumptions: subject
            .task()
            .map(|t| t.assumptions.clone())
            .unwrap_or_default(),
        notices: notices.clone(),
        cross_cutting: cross_cutting.clone(),
        impact: impact.as_ref().map(impact_rows),
        defect: match (&subject, &findings) {
            (Subject::Defect(review), Some(found)) => {
                Some(defect::prompt_defect(&review.defect, found))
            }
            _ => None,
        },
    };
    let schema = serde_json::to_string(&verdict_schema(parts.kind)).unwrap_or_default();
    let input = parts.input(parts.kind, &diff, spec_sections.clone(), None, &schema);
    let counter = shared.counter.get()?;
    let offline = shared.settings.llm.offline() && !shared.settings.dry_run;
    let prompt = match prompt::assemble(&input, counter, shared.settings.budget, &shared.templates)
    {
        // An offline review sends no prompt: a change too large for the
        // budget (Django 5.0 → 5.1 lists 966 files) is still checked, and
        // its prompt still hashed for the log.
        Err(prompt::Error::ProtectedTooLarge { needed, .. }) if offline => {
            prompt::assemble(&input, counter, needed, &shared.templates)?
        }
        other => other?,
    };

    let sent_sections = sent_sections(&documents, &prompt);
    let spec_hash = sha256(
        &sent_sections
            .iter()
            .map(|(path, s)| format!("{path}\n{}\n", s.text))
            .collect::<String>(),
    );

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
        defect: findings,
        cross_cutting,
        vision,
        prompt,
        parts,
        spec_hash,
        checks,
        redactions,
    })
}

/// The schema the review's answer must match: a defect fix's verdict must
/// also carry its scope check.
pub fn verdict_schema(kind: prompt::Kind) -> serde_json::Value {
    match kind {
        prompt::Kind::Defect => verdict::defect::json_schema(),
        _ => verdict::json_schema(),
    }
}

/// The spec documents for a subject (primary first), the referenced
/// sections, and whether `--spec` chose them. Specs are read at the main branch's commit so a task branch
/// cannot rewrite its own source of truth; a `--spec` not committed there is
/// read from the working tree. `--spec` replaces a task's own references.
fn load_specs(
    repo: &Repository,
    shared: &Shared,
    subject: &Subject,
    feature: Option<&Feature>,
    notices: &mut Vec<String>,
) -> Result<(Vec<LoadedSpec>, Vec<SectionRef>, bool), Error> {
    let main_commit = &shared.main.commit;
    let exists = |path: &str| matches!(repo.read_file(main_commit, path), Ok(Some(_)));
    let from_args = |args: &[String]| {
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
    };
    let (paths, referenced, cli) = match subject {
        Subject::Task(_) if !shared.settings.spec_args.is_empty() => {
            from_args(&shared.settings.spec_args)
        }
        Subject::Task(task) => {
            let spec_path = feature.and_then(|f| f.spec_path.as_deref());
            let mut referenced: Vec<SectionRef> = Vec::new();
            for r in &task.spec_references {
                match specs::select::reference_path(
                    &r.spec,
                    task.feature.as_deref(),
                    spec_path,
                    &exists,
                ) {
                    Ok((path, note)) => {
                        notices.extend(note);
                        referenced.push((normalise(&path), r.section.clone()));
                    }
                    Err(why) => notices.push(format!("Spec reference not used: {why}.")),
                }
            }
            let ref_paths: Vec<String> = referenced.iter().map(|(p, _)| p.clone()).collect();
            let paths =
                specs::select::spec_paths(&ref_paths, spec_path, task.feature.as_deref(), &exists);
            (paths, referenced, false)
        }
        Subject::Branch { specs: args, .. } => from_args(args),
        Subject::Defect(_) if !shared.settings.spec_args.is_empty() => {
            from_args(&shared.settings.spec_args)
        }
        Subject::Defect(review) => {
            // The related spec is ranked like any spec; only a `#Section`
            // it names is sent whole.
            let mut why = Vec::new();
            let args = defect::spec_args(&shared.root, &review.defect, &exists, &mut why);
            if args.is_empty() {
                return Err(Error::NoDefectSpec {
                    subject: subject.label(),
                    why: why.join(" "),
                });
            }
            notices.extend(why);
            let (paths, referenced, _) = from_args(&args);
            let referenced = referenced
                .into_iter()
                .filter(|(_, s)| s.is_some())
                .collect();
            (paths, referenced, false)
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
        let text = String::from_utf8_lossy(&bytes);
        let (text, redactions) = super::guard::redact_spec(&path, &text);
        loaded.push(LoadedSpec {
            document: specs::markdown::parse(&path, &text),
            origin,
            redactions,
        });
    }
    Ok((loaded, referenced, cli))
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
        Subject::Defect(review) => defect::task_text(&review.defect),
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

/// The spec sections `prompt` holds, as parsed sections: the only text its
/// quotes may come from.
pub fn sent_sections(documents: &[Document], prompt: &Prompt) -> Vec<(String, Section)> {
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
    /// The review's prompt: `Review`, or `Defect` for a defect fix.
    pub kind: prompt::Kind,
    pub task: prompt::Task,
    pub criteria: Vec<prompt::Criterion>,
    /// The developer's decisions and concerns, and the dependencies.
    pub task_notes: Vec<String>,
    /// The attempt number, the latest feedback and earlier reviews.
    pub previous_review: Vec<String>,
    pub scope: prompt::Scope,
    pub gates: Vec<prompt::GateCheck>,
    pub assumptions: Vec<String>,
    pub notices: Vec<String>,
    pub cross_cutting: Vec<String>,
    pub impact: Option<Vec<prompt::ImpactRow>>,
    /// The report, triage, guidance and findings of a defect fix.
    pub defect: Option<prompt::Defect>,
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
            task_notes: self.task_notes.clone(),
            previous_review: self.previous_review.clone(),
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
            defect: self.defect.clone(),
            part: None,
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
        Subject::Defect(review) => return defect::prompt_task(&review.defect, branch, base, head),
    }
    task
}

fn prompt_criteria(subject: &Subject) -> Vec<prompt::Criterion> {
    subject
        .criteria()
        .iter()
        .map(|c| prompt::Criterion {
            id: c.id.clone(),
            text: c.text.clone(),
            verify_by: c.verify_by.clone().unwrap_or_default(),
        })
        .collect()
}

/// What the developer noted while working (decisions, concerns) and what
/// the task builds on, one item each.
fn task_notes(subject: &Subject, dependencies: &[String]) -> Vec<String> {
    let Some(task) = subject.task() else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    notes.extend(task.decisions.iter().map(|d| format!("Decision: {d}")));
    notes.extend(task.concerns.iter().map(|c| format!("Concern: {c}")));
    notes.extend(dependencies.iter().map(|d| format!("Depends on {d}")));
    notes
}

/// What a re-review needs: which attempt this is, the feedback the last
/// review gave (each point must have been addressed), and the earlier
/// reviews, newest first.
fn previous_review(subject: &Subject) -> Vec<String> {
    let Some(task) = subject.task() else {
        return Vec::new();
    };
    let attempt = task.attempt();
    let mut items = vec![if attempt == 1 && task.review_feedback.is_none() {
        "This is the first attempt at this task: there is no earlier review.".to_string()
    } else {
        format!(
            "This is attempt {attempt} at this task (retry_count {}, revision_count {}).",
            task.retry_count, task.revision_count
        )
    }];
    if let Some(feedback) = &task.review_feedback {
        items.push(format!(
            "Feedback of the last review, which this attempt had to address:\n{feedback}"
        ));
    }
    items.extend(task.review_history.iter().rev().map(|entry| {
        format!(
            "Earlier review: {}",
            tasks::state::describe_history_entry(entry)
        )
    }));
    items
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
    // `rows` is `symbols` in the same order, formatted for the table.
    impact
        .rows()
        .into_iter()
        .zip(&impact.symbols)
        .map(|(row, changed)| prompt::ImpactRow {
            symbol: row.symbol,
            name: changed.symbol.clone(),
            file: changed.file.clone(),
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

/// The product vision at the main branch's commit, redacted like a spec,
/// when the guardian will read it.
fn load_vision(
    repo: &Repository,
    shared: &Shared,
) -> Result<Option<(prompt::Vision, Vec<crate::secrets::Redaction>)>, Error> {
    let settings = &shared.settings;
    if settings.guardian.skip_reason.is_some() || settings.llm.offline() {
        return Ok(None);
    }
    let path = settings.guardian.vision_file.clone();
    let Some(bytes) = repo.read_file(&shared.main.commit, &path)? else {
        return Ok(None);
    };
    let (text, found) = super::guard::redact_spec(&path, &String::from_utf8_lossy(&bytes));
    Ok(Some((
        prompt::Vision {
            doc_path: path,
            text,
        },
        found,
    )))
}

/// The guardian's prompt: the vision, the spec sections the review sent, the
/// task and its criteria, and the diff ranked and trimmed the same way, in
/// the guardian's own budget.
pub fn guardian_prompt(shared: &Shared, prepared: &Prepared) -> Result<Prompt, Error> {
    let vision_path = shared.settings.guardian.vision_file.clone();
    let vision = prepared.vision.clone();
    let mut parts = prepared.parts.clone();
    if let (Subject::Defect(review), Some(found)) = (&prepared.subject, &prepared.defect) {
        parts
            .notices
            .push(defect::guardian_notice(&review.defect, &found.size));
    }
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
