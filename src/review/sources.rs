//! The sources a review is judged against, read before any fact is
//! established: the spec documents at the main branch's commit (or a
//! `--spec` from the working tree), their sections ranked by relevance to
//! the task and the diff, the feature's cross-cutting concerns, the
//! coordination requirements of the task and its feature (shown with the
//! concerns, checked by the `coordination` check) and the product vision,
//! each redacted where it is read. Also what the reviewer
//! must be told about them (a spec the branch edits, a reference that does
//! not resolve).

use std::collections::BTreeMap;
use std::path::Path;

use crate::defects::{self, Defect};
use crate::git::{Diff, Repository, short};
use crate::ledger::verdicts::SpecFile;
use crate::prompt;
use crate::secrets::Redaction;
use crate::specs::{self, Document};
use crate::tasks::{self, Feature};
use crate::work::{Resolved, Subject};

use super::Error;
use super::context::Context;
use super::redact;

/// What a review is judged against.
pub struct Sources {
    pub specs: Vec<LoadedSpec>,
    pub primary_spec: String,
    /// The ranked sections the prompt may hold (sent or left out).
    pub spec_sections: Vec<prompt::SpecSection>,
    /// What ranked them, to rank them again for one part's code.
    pub spec_ranking: SpecRanking,
    /// Spec files the diff edits that the task did not declare in its scope.
    pub spec_edits: Vec<String>,
    /// The feature's cross-cutting concerns, then the coordination
    /// requirements as lines, redacted.
    pub cross_cutting: Vec<String>,
    /// The coordination requirements of the task and its feature (empty
    /// for a branch or a defect).
    pub coordination: tasks::Coordination,
    /// The product vision, redacted, its sentences ranked for a review
    /// prompt that cannot hold it whole; None when no prompt is sent (an
    /// offline review) or the file does not exist.
    pub vision: Option<prompt::Vision>,
    /// The vision file expected (`guardian.vision_file`), when a prompt is
    /// sent and it does not exist on main: the review says so once.
    pub vision_missing: Option<String>,
    /// What the reviewer must know about these sources.
    pub notices: Vec<String>,
    /// Secrets replaced in the specs, the concerns and the vision.
    pub redactions: Vec<Redaction>,
}

/// The spec's references and the task's text, kept so a review in parts
/// can rank the sections for each part's code (`SpecRanking::sections`).
#[derive(Debug, Clone, Default)]
pub struct SpecRanking {
    primary_spec: String,
    referenced: Vec<specs::Reference>,
    from_cli: bool,
    task_text: String,
}

impl Sources {
    /// The spec sections ranked by relevance to the task's text and
    /// `identifiers` (a part's, rather than the whole diff's): the same
    /// references, required and marked as in `spec_sections`.
    pub fn spec_sections_for(&self, identifiers: &[String]) -> Vec<prompt::SpecSection> {
        let r = &self.spec_ranking;
        let documents = self.documents();
        let index = specs::relevance::Index::new(&documents);
        let resolved = specs::resolve::resolve(&documents, &r.referenced, &r.task_text, &index);
        let candidates = specs::select::rank(
            &documents,
            &r.primary_spec,
            &resolved,
            &index,
            (&r.task_text, identifiers),
        );
        to_sections(candidates, &r.referenced, r.from_cli)
    }

    /// The spec documents, parsed.
    pub fn documents(&self) -> Vec<Document> {
        self.specs.iter().map(|s| s.document.clone()).collect()
    }

    /// The spec files by path and content hash, as an approval records them.
    pub fn files(&self) -> Vec<SpecFile> {
        self.specs
            .iter()
            .map(|s| SpecFile {
                path: s.document.path.clone(),
                sha256: s.sha256.clone(),
            })
            .collect()
    }
}

/// Read the sources of `subject`'s review.
pub fn load(
    ctx: &Context,
    repo: &Repository,
    subject: &Subject,
    resolved: &Resolved,
) -> Result<Sources, Error> {
    let store = tasks::Store::open(&ctx.root);
    let feature: Option<Feature> = match subject.task() {
        Some(task) => store.feature_of(task)?,
        None => None,
    };
    let mut notices = Vec::new();
    if let Some(review) = subject.defect() {
        notices.extend(defect_notices(&review.defect));
    }
    let (specs, referenced, from_cli) =
        load_specs(repo, ctx, subject, feature.as_ref(), &mut notices)?;
    let primary_spec = specs[0].document.path.clone();
    notices.extend(resolved.notices.iter().cloned());
    for spec in &specs {
        if spec.origin == "working tree" {
            notices.push(format!(
                "{} is not committed on {}: it was read from the working tree.",
                spec.document.path,
                ctx.main().name
            ));
        }
    }

    let spec_edits = spec_edits(ctx, subject, resolved, &specs, &mut notices);
    let task_text = task_text(subject);
    let identifiers = diff_identifiers(&resolved.diff);
    let spec_sections = ranked_sections(
        subject,
        &specs,
        &primary_spec,
        (&referenced, from_cli),
        (&task_text, &identifiers),
        &mut notices,
    )?;

    let mut redactions: Vec<Redaction> = specs
        .iter()
        .flat_map(|s| s.redactions.iter().cloned())
        .collect();
    let mut cross_cutting = feature
        .as_ref()
        .map(|f| f.cross_cutting.clone())
        .unwrap_or_default();
    if let Some(f) = &feature {
        redactions.extend(redact::lines(
            &mut cross_cutting,
            &f.dir.join("cross_cutting_concerns.json"),
            &ctx.root,
        ));
    }
    let coordination = match subject.task() {
        Some(task) => store.coordination(task)?,
        None => tasks::Coordination::default(),
    };
    if let Some(task) = subject.task().filter(|_| !coordination.is_empty()) {
        let mut lines = coordination.lines();
        let source = match &feature {
            Some(f) if task.coordination.is_none() => f.dir.join("coordination.json"),
            _ => task.path.clone(),
        };
        redactions.extend(redact::lines(&mut lines, &source, &ctx.root));
        cross_cutting.extend(lines);
    }
    let vision = load_vision(repo, ctx, &task_text, &identifiers)?;
    let vision_missing =
        (vision.is_none() && !ctx.sends_nothing()).then(|| ctx.config.guardian.vision_file.clone());
    if let Some((_, found)) = &vision {
        redactions.extend(found.iter().cloned());
    }
    notices.extend(secret_notices(&redactions));
    Ok(Sources {
        spec_ranking: SpecRanking {
            primary_spec: primary_spec.clone(),
            referenced,
            from_cli,
            task_text,
        },
        specs,
        primary_spec,
        spec_sections,
        spec_edits,
        cross_cutting,
        coordination,
        vision: vision.map(|(v, _)| v),
        vision_missing,
        notices,
        redactions,
    })
}

/// One notice per source file holding secrets: the spec, the vision or a
/// feature file is not the change under review, so what it holds is not
/// the change's finding (a diff that adds one is: the `secret` check), but
/// it is replaced in everything speed sends or writes, and someone should
/// fix the file. Lines are listed, the values never.
fn secret_notices(redactions: &[Redaction]) -> Vec<String> {
    let mut by_file: BTreeMap<&str, Vec<&Redaction>> = BTreeMap::new();
    for r in redactions {
        by_file.entry(r.file.as_str()).or_default().push(r);
    }
    by_file
        .into_iter()
        .map(|(file, found)| {
            let mut rules: Vec<&str> = found.iter().map(|r| r.rule.as_str()).collect();
            rules.dedup();
            rules.sort_unstable();
            rules.dedup();
            let mut lines: Vec<u32> = found.iter().map(|r| r.line).filter(|&l| l > 0).collect();
            lines.sort_unstable();
            lines.dedup();
            let at = match lines.len() {
                0 => String::new(),
                1 => format!(" at line {}", lines[0]),
                _ => format!(
                    " at lines {}",
                    lines
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            let n = found.len();
            format!(
                "{file} holds {n} secret-looking value{} ({}){at}: speed replaced {} with {} in everything it sends or writes. {} the file's, not this change's; replace {} in {file} with a placeholder (an example needs none that looks real) and rotate any that is real.",
                if n == 1 { "" } else { "s" },
                rules.join(", "),
                if n == 1 { "it" } else { "them" },
                if rules.len() == 1 {
                    crate::secrets::placeholder(rules[0])
                } else {
                    "[REDACTED:<rule>]".to_string()
                },
                if n == 1 { "It is" } else { "They are" },
                if n == 1 { "it" } else { "them" },
            )
        })
        .collect()
}

/// The spec files the diff edits that the task did not declare; each edit
/// of a spec the review uses is said in the notices (for a branch without
/// a task, docs change with code: said, not held against it).
fn spec_edits(
    ctx: &Context,
    subject: &Subject,
    resolved: &Resolved,
    specs: &[LoadedSpec],
    notices: &mut Vec<String>,
) -> Vec<String> {
    let spec_paths: Vec<&str> = specs.iter().map(|s| s.document.path.as_str()).collect();
    let scope = subject.scope();
    let mut spec_edits = Vec::new();
    for file in &resolved.diff.files {
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
                ctx.main().name,
                short(&ctx.main().commit)
            ));
            continue;
        }
        notices.push(format!(
            "The diff edits {path}, a spec this review uses. The spec was read from {} at {}, not from the task branch.",
            ctx.main().name,
            short(&ctx.main().commit)
        ));
        if !scope.declares(path) {
            spec_edits.push(path.to_string());
        }
    }

    spec_edits
}

/// The spec sections ranked by relevance to the task's text and the diff's
/// identifiers, each marked required (referenced) and related (sent before
/// the code). A task's reference to a section that does not exist is a
/// notice; a `--spec PATH#Section` that names none is an error.
fn ranked_sections(
    subject: &Subject,
    loaded: &[LoadedSpec],
    primary_spec: &str,
    (referenced, from_cli): (&[specs::Reference], bool),
    (task_text, identifiers): (&str, &[String]),
    notices: &mut Vec<String>,
) -> Result<Vec<prompt::SpecSection>, Error> {
    let documents: Vec<Document> = loaded.iter().map(|s| s.document.clone()).collect();
    let index = specs::relevance::Index::new(&documents);
    let resolved = specs::resolve::resolve(&documents, referenced, task_text, &index);
    // A task's reference to a section that does not exist is a planning
    // mistake the reviewer should see, with the headings it most likely
    // means (the closest is sent in its place); one that names several is
    // said too. A `--spec PATH#Section` that names none is the user's
    // typo: an error naming the closest headings.
    for r in &resolved {
        if from_cli {
            if let Some(missing) = r.error(&documents) {
                return Err(Error::SpecSection {
                    subject: subject.label(),
                    source: missing,
                });
            }
        }
        notices.extend(r.notice(&documents));
    }
    let candidates = specs::select::rank(
        &documents,
        primary_spec,
        &resolved,
        &index,
        (task_text, identifiers),
    );
    Ok(to_sections(candidates, referenced, from_cli))
}

/// The ranked candidates as the prompt's spec sections.
fn to_sections(
    mut candidates: Vec<specs::select::Candidate>,
    referenced: &[specs::Reference],
    from_cli: bool,
) -> Vec<prompt::SpecSection> {
    if from_cli {
        // `--spec PATH#Section` sends that section (its heading path gives
        // the parent headings), not the rest of the file.
        let whole = |path: &str| {
            referenced
                .iter()
                .any(|r| r.path == path && r.section.is_none())
        };
        candidates.retain(|c| c.referenced || whole(&c.doc_path));
    }
    // The related sections go before the code; the others only fill what
    // the code leaves.
    let related = specs::related(&candidates);
    // A heading with no text of its own says nothing its subsections' heading
    // paths do not; it is sent only when the task references it (or it
    // stands in for a reference, whose mark it carries).
    candidates
        .iter()
        .zip(related)
        .filter(|(c, _)| c.referenced || c.mark.is_some() || !c.section.body().trim().is_empty())
        .map(|(c, related)| prompt::SpecSection {
            doc_path: c.doc_path.clone(),
            heading_path: c.section.heading_path(),
            start_line: c.section.start_line,
            end_line: c.section.end_line,
            text: c.section.text.clone(),
            primary: c.primary,
            // The section standing in for a reference no heading matches
            // is sent as the reference would have been: whatever the
            // budget, the model has the text the task most likely means
            // (the notice says it was sent). Its subsections are related.
            required: c.referenced || (c.stand_in && c.mark.is_some()),
            related,
            mark: c.mark.clone(),
        })
        .collect()
}

/// A spec document as loaded, with where it came from.
#[derive(Debug, Clone)]
pub struct LoadedSpec {
    pub document: Document,
    /// "main@<short>" or "working tree".
    pub origin: String,
    /// Secrets replaced in its text.
    pub redactions: Vec<crate::secrets::Redaction>,
    /// `sha256:<hex>` of the file's bytes as read, before any redaction:
    /// what an approval records, and what decides later whether the spec
    /// it was judged against has changed (`ledger::covers`).
    pub sha256: String,
    /// Its HTML comments, taken out of `document`'s text (lines kept).
    pub comments: Vec<specs::comments::Comment>,
}

/// The spec documents for a subject (primary first), the referenced
/// sections, and whether `--spec` chose them. Specs are read at the main branch's commit so a task branch
/// cannot rewrite its own source of truth; a `--spec` not committed there is
/// read from the working tree. `--spec` replaces a task's own references.
fn load_specs(
    repo: &Repository,
    ctx: &Context,
    subject: &Subject,
    feature: Option<&Feature>,
    notices: &mut Vec<String>,
) -> Result<(Vec<LoadedSpec>, Vec<specs::Reference>, bool), Error> {
    let main_commit = &ctx.main().commit;
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
            referenced.push(specs::Reference {
                path,
                section,
                requirement: None,
            });
        }
        (paths, referenced, true)
    };
    let (paths, referenced, cli) = match subject {
        Subject::Task(_) if !ctx.config.spec_args.is_empty() => from_args(&ctx.config.spec_args),
        Subject::Task(task) => {
            let spec_path = feature.and_then(|f| f.spec_path.as_deref());
            let mut referenced: Vec<specs::Reference> = Vec::new();
            for r in &task.spec_references {
                match specs::select::reference_path(
                    &r.spec,
                    task.feature.as_deref(),
                    spec_path,
                    &exists,
                ) {
                    Ok((path, note)) => {
                        notices.extend(note);
                        referenced.push(specs::Reference {
                            path: normalise(&path),
                            section: r.section.clone(),
                            requirement: r.requirement.clone(),
                        });
                    }
                    Err(why) => notices.push(format!("Spec reference not used: {why}.")),
                }
            }
            let ref_paths: Vec<String> = referenced.iter().map(|r| r.path.clone()).collect();
            let paths =
                specs::select::spec_paths(&ref_paths, spec_path, task.feature.as_deref(), &exists);
            (paths, referenced, false)
        }
        Subject::Branch { specs: args, .. } => from_args(args),
        Subject::Defect(_) if !ctx.config.spec_args.is_empty() => from_args(&ctx.config.spec_args),
        Subject::Defect(review) => {
            // The related spec is ranked like any spec; only a `#Section`
            // it names is sent whole.
            let mut why = Vec::new();
            let args = defect_spec_args(&ctx.root, &review.defect, &exists, &mut why);
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
                .filter(|r| r.section.is_some())
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
            Some(bytes) => (bytes, format!("{}@{}", ctx.main().name, short(main_commit))),
            None if cli => match std::fs::read(ctx.worktree.join(&path)) {
                Ok(bytes) => (bytes, "working tree".to_string()),
                Err(_) => return Err(spec_missing(subject, &path, ctx, true)),
            },
            None => return Err(spec_missing(subject, &path, ctx, false)),
        };
        loaded.push(loaded_spec(&path, &bytes, origin));
    }
    if !cli {
        let linked = linked_specs(repo, ctx, &loaded)?;
        if !linked.is_empty() {
            notices.push(format!(
                "Read as related specs, since a spec of this review links to them: {}.",
                linked
                    .iter()
                    .map(|s| s.document.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        loaded.extend(linked);
    }
    for spec in &loaded {
        notices.extend(comment_notice(spec));
    }
    Ok((loaded, referenced, cli))
}

/// At most this many files linked from a review's specs are read.
const MAX_LINKED: usize = 16;

/// The spec files the loaded specs link to (`[ledger](ledger.md)`, `see
/// ledger.md`) that exist at the main branch's commit, one level deep: they
/// are candidates for the prompt, ranked like the specs' own sections.
fn linked_specs(
    repo: &Repository,
    ctx: &Context,
    loaded: &[LoadedSpec],
) -> Result<Vec<LoadedSpec>, Error> {
    let main_commit = &ctx.main().commit;
    let mut out: Vec<LoadedSpec> = Vec::new();
    for spec in loaded {
        for path in specs::links::linked(&spec.document) {
            if out.len() == MAX_LINKED {
                tracing::info!("spec links: only the first {MAX_LINKED} linked files are read");
                return Ok(out);
            }
            let known = |p: &str| loaded.iter().chain(&out).any(|s| s.document.path == p);
            if known(&path) {
                continue;
            }
            match repo.read_file(main_commit, &path)? {
                Some(bytes) => {
                    let origin = format!("{}@{}", ctx.main().name, short(main_commit));
                    out.push(loaded_spec(&path, &bytes, origin));
                }
                None => tracing::debug!(
                    "{} links to {path}, which is not a file at {}",
                    spec.document.path,
                    short(main_commit)
                ),
            }
        }
    }
    Ok(out)
}

/// A spec as read: redacted, its HTML comments taken out (not rendered, so
/// not spec text), parsed.
fn loaded_spec(path: &str, bytes: &[u8], origin: String) -> LoadedSpec {
    let sha256 = crate::digest::sha256(bytes);
    let text = String::from_utf8_lossy(bytes);
    let (text, redactions) = redact::spec(path, &text);
    let (text, comments) = specs::comments::strip(&text);
    LoadedSpec {
        document: specs::markdown::parse(path, &text),
        origin,
        redactions,
        sha256,
        comments,
    }
}

/// What the user should know of a spec's HTML comments: they were not
/// sent, and a quote of one is no basis.
fn comment_notice(spec: &LoadedSpec) -> Option<String> {
    let n = spec.comments.len();
    if n == 0 {
        return None;
    }
    let lines: Vec<String> = spec.comments.iter().map(|c| c.line.to_string()).collect();
    Some(format!(
        "{} holds {n} HTML comment{} (line{} {}): not rendered, so not spec text; {} left out of the prompt and no quote can rest on {}.",
        spec.document.path,
        if n == 1 { "" } else { "s" },
        if n == 1 { "" } else { "s" },
        lines.join(", "),
        if n == 1 { "it was" } else { "they were" },
        if n == 1 { "it" } else { "them" },
    ))
}

fn spec_missing(subject: &Subject, path: &str, ctx: &Context, looked_in_tree: bool) -> Error {
    Error::SpecMissing {
        subject: subject.label(),
        path: path.to_string(),
        at: format!("{} ({})", ctx.main().name, short(&ctx.main().commit)),
        hint: if looked_in_tree {
            " nor in the working tree".to_string()
        } else {
            format!(
                "; specs are read from {} so a task branch cannot rewrite them: commit the spec there",
                ctx.main().name
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
        Subject::Defect(review) => defect_text(&review.defect),
    }
}

/// Identifiers on changed lines of code (not comments, doc comments or
/// docstrings: tokio's `broadcast.rs` changed 252 lines of docs for 13 of
/// code), most frequent first, for spec relevance.
fn diff_identifiers(diff: &Diff) -> Vec<String> {
    let mut texts: Vec<&str> = Vec::new();
    for file in &diff.files {
        let flags = prompt::code_flags(file);
        for (hunk, flags) in file.hunks.iter().zip(&flags) {
            texts.extend(
                hunk.lines
                    .iter()
                    .zip(flags)
                    .filter(|(_, code)| **code)
                    .map(|(l, _)| l.text.as_str()),
            );
        }
    }
    identifiers_of(texts)
}

/// The words of `texts` that may be identifiers (three characters or more,
/// not a number), most frequent first, at most 400.
pub fn identifiers_of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for text in texts {
        for word in text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| w.len() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        {
            *counts.entry(word.to_string()).or_default() += 1;
        }
    }
    let mut ranked: Vec<(String, usize)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.into_iter().take(400).map(|(w, _)| w).collect()
}

/// The product vision at the main branch's commit, redacted like a spec,
/// for the review and the guardian, with its sentences ranked against the
/// task and the diff; not read when no prompt is sent.
fn load_vision(
    repo: &Repository,
    ctx: &Context,
    task_text: &str,
    identifiers: &[String],
) -> Result<Option<(prompt::Vision, Vec<Redaction>)>, Error> {
    if ctx.sends_nothing() {
        return Ok(None);
    }
    let path = ctx.config.guardian.vision_file.clone();
    let Some(bytes) = repo.read_file(&ctx.main().commit, &path)? else {
        return Ok(None);
    };
    let (text, found) = redact::spec(&path, &String::from_utf8_lossy(&bytes));
    let (text, _) = specs::comments::strip(&text);
    let doc = specs::markdown::parse(&path, &text);
    let ranked = specs::vision::rank(&doc, task_text, identifiers)
        .into_iter()
        .map(|s| prompt::VisionSentence {
            line: s.line,
            text: s.text,
            constrains: s.constrains,
        })
        .collect();
    Ok(Some((
        prompt::Vision {
            doc_path: path,
            text,
            ranked,
        },
        found,
    )))
}

/// What the reviewer and the user should know about the defect folder
/// itself: what the report lacks of the orchestrator's intake rules, and a
/// state that does not say the fix is done.
fn defect_notices(defect: &Defect) -> Vec<String> {
    let report = defect.file(defects::store::REPORT).display().to_string();
    let mut out: Vec<String> = defect
        .report
        .problems
        .iter()
        .map(|p| format!("{report}: {p}, which the orchestrator's intake requires."))
        .collect();
    match defect.status() {
        Some("fixed") | None => {}
        Some(status) => out.push(format!(
            "{} says status {status:?}, not \"fixed\": the fix may not be finished.",
            defect.file(defects::store::STATE).display()
        )),
    }
    out
}

/// The spec documents of a defect, as `PATH[#Section]`: the triage's
/// `related_spec`, else the spec of each feature the report relates it to
/// (the feature's `spec_path` in either layout, else
/// `specs/product/<feature>.md` when it exists at main's commit).
fn defect_spec_args(
    root: &Path,
    defect: &Defect,
    exists: &dyn Fn(&str) -> bool,
    notices: &mut Vec<String>,
) -> Vec<String> {
    // A spec is a file of the repository, read at main's commit: a path
    // that climbs out of it or starts at the root names nothing there.
    let inside = |spec: &str| {
        let path = spec.split('#').next().unwrap_or("").trim();
        !path.is_empty()
            && !path.starts_with(['/', '\\'])
            && !path.split(['/', '\\']).any(|part| part == "..")
    };
    let mut out: Vec<String> = Vec::new();
    for spec in &defect.triage.related_spec {
        if inside(spec) {
            out.push(spec.clone());
        } else {
            notices.push(format!(
                "The triage's related_spec {spec:?} is not a path inside the repository: it was not read."
            ));
        }
    }
    if !out.is_empty() {
        return out;
    }
    for feature in &defect.report.related_features {
        if defects::store::check_name(feature).is_err() {
            notices.push(format!(
                "The report's Related Feature {feature:?} is not a feature name: no spec was read for it."
            ));
            continue;
        }
        let spec_path = [".speed/features", ".speed/shared/features"]
            .iter()
            .find_map(|dir| {
                let text =
                    std::fs::read_to_string(root.join(dir).join(feature).join("spec_path")).ok()?;
                let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
                Some(line.trim_start_matches("./").to_string())
            });
        let conventional = format!("specs/product/{feature}.md");
        match spec_path {
            Some(path) => out.push(path),
            None if exists(&conventional) => out.push(conventional),
            None => notices.push(format!(
                "The report's Related Feature {feature} has no spec: {conventional} does not exist on the main branch."
            )),
        }
    }
    out
}

/// The text spec sections are ranked against: what the defect is about.
fn defect_text(defect: &Defect) -> String {
    let r = &defect.report;
    let mut text = format!(
        "{}\n{}\n{}\n{}\n",
        r.title, r.observed, r.expected, r.reproduction
    );
    for key in ["root_cause_hypothesis", "suggested_approach"] {
        if let Some(value) = defect.triage.raw.get(key).and_then(|v| v.as_str()) {
            text.push_str(value);
            text.push('\n');
        }
    }
    text
}
