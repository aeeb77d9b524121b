//! Choosing spec sections for a task: which spec files to read (in the
//! contract's order, primary first) and how to order their sections, the ones
//! the task references first, then the rest by relevance to the task text and
//! the changed identifiers. It decides order only: every section stays in the
//! output, and cutting to a token budget is `prompt`'s job.

use std::collections::HashSet;

use serde::Serialize;

use super::relevance::Index;
use super::resolve::Resolved;
use super::{Document, Section, clean_path};

/// A section offered to the prompt, with why it is where it is.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Candidate {
    pub doc_path: String,
    pub section: Section,
    /// The section belongs to the primary spec (the SOURCE OF TRUTH).
    pub primary: bool,
    /// The task's spec references select this section.
    pub referenced: bool,
    /// What the prompt says of a section a reference selects: "referenced
    /// by the task", or what it stands in for.
    pub mark: Option<String>,
    /// Selected in place of a reference no heading matches (with its
    /// subsections): first after the referenced ones; the review sends
    /// its head as it would the reference (its subsections are related).
    pub stand_in: bool,
    /// Relevance to the task text and changed identifiers (BM25); 0 when
    /// nothing matches.
    pub score: f64,
    pub reason: String,
}

/// The spec files to load for a task, primary first, without duplicates: the
/// specs named by the task's spec references (paths, kinds already resolved
/// by [`reference_path`]), else the feature's `spec_path`, else
/// `specs/product/<feature>.md` when it exists. References may carry a
/// `#Section` suffix, which is not part of the path. (`--spec` replaces all
/// of this; the caller decides.)
pub fn spec_paths(
    references: &[String],
    feature_spec_path: Option<&str>,
    feature: Option<&str>,
    exists: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let from_refs = dedup_paths(references);
    if !from_refs.is_empty() {
        return from_refs;
    }
    if let Some(path) = feature_spec_path.map(clean_path).filter(|p| !p.is_empty()) {
        return vec![path];
    }
    if let Some(feature) = feature.map(str::trim).filter(|f| !f.is_empty()) {
        let conventional = format!("specs/product/{feature}.md");
        if exists(&conventional) {
            return vec![conventional];
        }
    }
    Vec::new()
}

/// Whether a spec reference names a kind of spec (`product`, `tech`,
/// `design`) rather than a file: one word, no folder, no extension.
pub fn is_kind(spec: &str) -> bool {
    let spec = spec.trim();
    !spec.is_empty()
        && spec.len() <= 32
        && spec
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The file a spec reference names. A path is itself. A kind means the
/// feature's spec of that kind: its `spec_path` when that lies in a folder of
/// the kind's name (`specs/tech/x.md` for `tech`), else
/// `specs/<kind>/<feature>.md` when it exists, else the `spec_path` (with a
/// note saying so), else `specs/<kind>/<feature>.md`, which the caller then
/// reports missing. Err says why a kind names nothing (no feature).
pub fn reference_path(
    spec: &str,
    feature: Option<&str>,
    feature_spec_path: Option<&str>,
    exists: &dyn Fn(&str) -> bool,
) -> Result<(String, Option<String>), String> {
    if !is_kind(spec) {
        return Ok((clean_path(spec), None));
    }
    let kind = spec.trim();
    let spec_path = feature_spec_path.map(clean_path).filter(|p| !p.is_empty());
    if let Some(path) = &spec_path {
        let mut folders = path.split('/').rev().skip(1);
        if folders.any(|folder| folder == kind) {
            return Ok((path.clone(), None));
        }
    }
    let Some(feature) = feature.map(str::trim).filter(|f| !f.is_empty()) else {
        return Err(format!(
            "the spec reference `{kind}` names a feature's {kind} spec, and this task belongs to no feature"
        ));
    };
    let conventional = format!("specs/{kind}/{feature}.md");
    if exists(&conventional) {
        return Ok((conventional, None));
    }
    match spec_path {
        Some(path) => {
            let note = format!(
                "The spec reference `{kind}` was read as {path}, the feature's spec_path: {conventional} does not exist."
            );
            Ok((path, Some(note)))
        }
        None => Ok((conventional, None)),
    }
}

/// Splits `--spec specs/product/x.md#Search` into the path and the section
/// name. The first `#` separates them, so a path cannot contain `#`; an empty
/// section (`x.md#`) is no section.
pub fn split_spec_arg(arg: &str) -> (String, Option<String>) {
    match arg.split_once('#') {
        Some((path, section)) => {
            let section = section.trim_start_matches('#').trim();
            (
                clean_path(path),
                (!section.is_empty()).then(|| section.to_string()),
            )
        }
        None => (clean_path(arg), None),
    }
}

fn dedup_paths(args: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    args.iter()
        .map(|arg| split_spec_arg(arg).0)
        .filter(|path| !path.is_empty() && seen.insert(path.clone()))
        .collect()
}

/// Orders every section of every document for the prompt. Sections the
/// references select come first, in reference order (a reference naming a
/// section selects it and its subsections; one without a section selects the
/// whole document; one standing in for a name no heading matches, after
/// those). All other sections follow by descending relevance to
/// `task_text` and `identifiers`, primary-spec sections first at equal score,
/// otherwise in document order. Each section appears exactly once.
pub fn rank(
    docs: &[Document],
    primary: &str,
    resolved: &[Resolved],
    index: &Index,
    (task_text, identifiers): (&str, &[String]),
) -> Vec<Candidate> {
    let primary = clean_path(primary);
    let scores = index.score(task_text, identifiers);

    let mut chosen: HashSet<(usize, usize)> = HashSet::new();
    let mut out = Vec::new();
    // How a section came to be chosen: by a reference, standing in for
    // one, or by relevance alone.
    let candidate =
        |d: usize, s: usize, by: Option<bool>, reason: String, mark: Option<String>| Candidate {
            doc_path: docs[d].path.clone(),
            section: docs[d].sections[s].clone(),
            primary: clean_path(&docs[d].path) == primary,
            referenced: by == Some(false),
            mark,
            stand_in: by == Some(true),
            score: scores[d][s].0,
            reason,
        };

    // Referenced sections first, then those standing in for a reference.
    for stand_ins in [false, true] {
        for r in resolved {
            let (Some(d), heads, stand_in) = r.selected() else {
                continue;
            };
            if stand_in != stand_ins {
                continue;
            }
            let doc = &docs[d];
            let name = r.reference.section.as_deref().unwrap_or("");
            let selected: Vec<(usize, String, Option<String>)> = if r.reference.section.is_none() {
                (0..doc.sections.len())
                    .map(|s| (s, format!("referenced by the task ({})", doc.path), None))
                    .collect()
            } else {
                heads
                    .iter()
                    .flat_map(|&head| {
                        doc.subtree(head).map(move |s| {
                            if s != head {
                                let reason = format!(
                                    "subsection of {} {}",
                                    if stand_in { "the stand-in" } else { "referenced" },
                                    doc.sections[head].heading_path()
                                );
                                return (s, reason, None);
                            }
                            if stand_in {
                                (
                                    s,
                                    format!(
                                        "closest heading to the task's reference {}#{name}, which matches none",
                                        doc.path
                                    ),
                                    Some(format!(
                                        "sent in place of the task's reference \"{name}\", which matches no heading"
                                    )),
                                )
                            } else {
                                (
                                    s,
                                    format!("referenced by the task ({}#{name})", doc.path),
                                    Some("referenced by the task".to_string()),
                                )
                            }
                        })
                    })
                    .collect()
            };
            for (s, reason, mark) in selected {
                if chosen.insert((d, s)) {
                    out.push(candidate(d, s, Some(stand_in), reason, mark));
                }
            }
        }
    }

    let mut rest: Vec<(usize, usize)> = docs
        .iter()
        .enumerate()
        .flat_map(|(d, doc)| (0..doc.sections.len()).map(move |s| (d, s)))
        .filter(|key| !chosen.contains(key))
        .collect();
    // sort_by is stable, so document order breaks the remaining ties.
    rest.sort_by(|&(da, sa), &(db, sb)| {
        let primary_a = clean_path(&docs[da].path) == primary;
        let primary_b = clean_path(&docs[db].path) == primary;
        scores[db][sb]
            .0
            .total_cmp(&scores[da][sa].0)
            .then(primary_b.cmp(&primary_a))
    });
    for (d, s) in rest {
        let reason = scores[d][s].1.clone();
        out.push(candidate(d, s, None, reason, None));
    }
    out
}

/// A section scoring at least this share of the best score (a referenced
/// section's, usually) counts as related to the task and the diff.
const RELATED_SHARE: f64 = 0.3;

/// Which of `rank`'s candidates are related to the task: the referenced
/// ones and those standing in for a reference, the sections a referenced one is nested in (its context), and the
/// others scoring at least 30% of the best score of all (on requests and
/// ripgrep specs: the parent section and a neighbour on the same subject
/// pass, sections that share only common words such as "request" or
/// "file" with the diff do not). A prompt sends the related ones before
/// the code; the others, unrelated, only with what the code leaves.
pub fn related(candidates: &[Candidate]) -> Vec<bool> {
    let best = candidates.iter().map(|c| c.score).fold(0.0_f64, f64::max);
    candidates
        .iter()
        .map(|c| {
            let parent = candidates.iter().any(|r| {
                (r.referenced || r.stand_in)
                    && r.doc_path == c.doc_path
                    && r.section.titles.len() > c.section.titles.len()
                    && r.section.titles.starts_with(&c.section.titles)
                    && c.section.level > 0
            });
            c.referenced || c.stand_in || parent || (best > 0.0 && c.score >= best * RELATED_SHARE)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::markdown::parse;
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    /// `rank` over references given as (path, section).
    fn rank(
        docs: &[Document],
        primary: &str,
        refs: &[(String, Option<String>)],
        task_text: &str,
        identifiers: &[String],
    ) -> Vec<Candidate> {
        let index = Index::new(docs);
        let references: Vec<super::super::Reference> = refs
            .iter()
            .map(|(path, section)| super::super::Reference {
                path: path.clone(),
                section: section.clone(),
                requirement: None,
            })
            .collect();
        let resolved = super::super::resolve::resolve(docs, &references, task_text, &index);
        super::rank(docs, primary, &resolved, &index, (task_text, identifiers))
    }

    #[test]
    fn spec_paths_prefer_references_then_feature_then_convention() {
        let nothing = |_: &str| false;
        let everything = |_: &str| true;
        let refs = strings(&["specs/a.md", "./specs/b.md#Search", "specs/a.md#Other", ""]);

        assert_eq!(
            spec_paths(&refs, Some("specs/f.md"), Some("lib"), &everything),
            strings(&["specs/a.md", "specs/b.md"])
        );
        assert_eq!(
            spec_paths(&[], Some(" specs/f.md\n"), Some("lib"), &everything),
            strings(&["specs/f.md"])
        );
        assert_eq!(
            spec_paths(&[], None, Some("lib"), &everything),
            strings(&["specs/product/lib.md"])
        );
        assert_eq!(
            spec_paths(&[], None, Some("lib"), &nothing),
            Vec::<String>::new()
        );
        assert_eq!(
            spec_paths(&[], None, None, &everything),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_kind_names_the_features_spec_of_that_kind() {
        let only = |wanted: &'static [&'static str]| move |p: &str| wanted.contains(&p);
        let tech = Some("specs/tech/landing.md");
        let resolve = |spec: &str, spec_path: Option<&str>, exists: &dyn Fn(&str) -> bool| {
            reference_path(spec, Some("landing"), spec_path, exists)
        };
        // A path is itself; a kind whose folder holds spec_path is spec_path.
        assert_eq!(
            resolve("./specs/x.md", tech, &only(&[])),
            Ok(("specs/x.md".to_string(), None))
        );
        assert_eq!(
            resolve("tech", tech, &only(&[])),
            Ok(("specs/tech/landing.md".to_string(), None))
        );
        // Another kind: its conventional file, else spec_path with a note.
        assert_eq!(
            resolve("product", tech, &only(&["specs/product/landing.md"])),
            Ok(("specs/product/landing.md".to_string(), None))
        );
        let (path, note) = resolve("product", tech, &only(&[])).unwrap();
        assert_eq!(path, "specs/tech/landing.md");
        assert!(
            note.unwrap()
                .contains("specs/product/landing.md does not exist")
        );
        // No spec_path: the conventional path, reported missing later.
        assert_eq!(
            resolve("design", None, &only(&[])),
            Ok(("specs/design/landing.md".to_string(), None))
        );
        // A kind means nothing without a feature.
        let err = reference_path("tech", None, None, &only(&[])).unwrap_err();
        assert!(err.contains("no feature"), "{err}");
        assert!(!is_kind("specs/tech.md") && !is_kind("tech.md") && is_kind("tech"));
    }

    #[test]
    fn spec_paths_checks_the_conventional_path_it_would_return() {
        let asked = std::cell::RefCell::new(Vec::new());
        let exists = |p: &str| {
            asked.borrow_mut().push(p.to_string());
            false
        };
        spec_paths(&[], None, Some("library-catalog"), &exists);
        assert_eq!(
            *asked.borrow(),
            strings(&["specs/product/library-catalog.md"])
        );
    }

    #[test]
    fn split_spec_arg_separates_the_section() {
        assert_eq!(
            split_spec_arg("specs/product/x.md#Library Catalog > Search"),
            (
                "specs/product/x.md".to_string(),
                Some("Library Catalog > Search".to_string())
            )
        );
        assert_eq!(
            split_spec_arg("x.md##Search"),
            ("x.md".to_string(), Some("Search".to_string()))
        );
        assert_eq!(split_spec_arg("./x.md#"), ("x.md".to_string(), None));
        assert_eq!(split_spec_arg("x.md"), ("x.md".to_string(), None));
    }

    fn library() -> Vec<Document> {
        vec![
            parse(
                "specs/product/library.md",
                "Intro to the library.\n\
                 # Library Catalog\n\
                 The catalog lists every book.\n\
                 ## Search\n\
                 Users can search for books and see real-time availability status.\n\
                 ### Filters\n\
                 Filter by author.\n\
                 ## Borrowing\n\
                 Members borrow up to five books; loans last three weeks.\n\
                 ## Empty\n\
                 # Accounts\n\
                 Members log in with email and password.\n",
            ),
            parse(
                "specs/product/overview.md",
                "# Vision\nA library people love, with availability visible everywhere.\n",
            ),
        ]
    }

    fn order(candidates: &[Candidate]) -> Vec<String> {
        candidates
            .iter()
            .map(|c| {
                format!(
                    "{}:{}",
                    c.doc_path.rsplit('/').next().unwrap_or(""),
                    c.section.heading_path()
                )
            })
            .collect()
    }

    #[test]
    fn referenced_sections_and_their_subsections_come_first() {
        let docs = library();
        let refs = vec![
            (
                "specs/product/library.md".to_string(),
                Some("Search".to_string()),
            ),
            ("specs/product/overview.md".to_string(), None),
        ];
        let ranked = rank(
            &docs,
            "specs/product/library.md",
            &refs,
            "login with password",
            &[],
        );
        let names = order(&ranked);
        assert_eq!(
            names[..3],
            strings(&[
                "library.md:Library Catalog > Search",
                "library.md:Library Catalog > Search > Filters",
                "overview.md:Vision",
            ])
        );
        assert!(ranked[..3].iter().all(|c| c.referenced));
        assert!(ranked[3..].iter().all(|c| !c.referenced));
        assert_eq!(names[3], "library.md:Accounts");
        assert!(ranked[0].primary && !ranked[2].primary);
        assert_eq!(
            ranked[0].reason,
            "referenced by the task (specs/product/library.md#Search)"
        );
    }

    #[test]
    fn every_section_appears_exactly_once() {
        let docs = library();
        let refs = vec![
            ("specs/product/library.md".to_string(), None),
            (
                "specs/product/library.md".to_string(),
                Some("Search".to_string()),
            ),
            ("specs/product/nowhere.md".to_string(), None),
        ];
        let ranked = rank(
            &docs,
            "specs/product/library.md",
            &refs,
            "books",
            &strings(&["BookQuery"]),
        );
        let mut names = order(&ranked);
        let total: usize = docs.iter().map(|d| d.sections.len()).sum();
        assert_eq!(names.len(), total);
        names.sort();
        names.dedup();
        assert_eq!(names.len(), total);
    }

    #[test]
    fn unreferenced_sections_rank_by_task_text_and_identifiers() {
        let docs = library();
        let ranked = rank(
            &docs,
            "specs/product/library.md",
            &[],
            "Add book availability query",
            &strings(&["availability_check", "BookQuery"]),
        );
        let names = order(&ranked);
        assert_eq!(names[0], "library.md:Library Catalog > Search");
        assert!(
            ranked[0].reason.contains("availability"),
            "{}",
            ranked[0].reason
        );
        assert!(ranked.windows(2).all(|w| w[0].score >= w[1].score));
        let accounts = ranked.iter().find(|c| c.section.title() == "Accounts");
        assert_eq!(accounts.map(|c| c.score), Some(0.0));
    }

    #[test]
    fn related_are_the_referenced_their_parents_and_the_best_scoring() {
        let docs = vec![parse(
            "s.md",
            "# Client\nThe client sends requests.\n## Sessions\nA session keeps cookies.\n### Timeouts\nA session timeout applies to every request.\n## Proxies\nA proxy is chosen per host; timeouts are per request.\n## Cookies\nCookies are stored in a jar.\n",
        )];
        let refs = vec![("s.md".to_string(), Some("Timeouts".to_string()))];
        let ranked = rank(&docs, "s.md", &refs, "session default timeout", &[]);
        let related = related(&ranked);
        let named: Vec<(String, bool)> = ranked
            .iter()
            .zip(&related)
            .map(|(c, r)| (c.section.heading_path(), *r))
            .collect();
        let is = |name: &str| named.iter().find(|(n, _)| n == name).map(|(_, r)| *r);
        // Referenced, and its parents (its context).
        assert_eq!(is("Client > Sessions > Timeouts"), Some(true));
        assert_eq!(is("Client > Sessions"), Some(true));
        assert_eq!(is("Client"), Some(true));
        // Relevant to the task.
        assert_eq!(is("Client > Proxies"), Some(true));
        // Nothing in common with it.
        assert_eq!(is("Client > Cookies"), Some(false));
    }

    #[test]
    fn heading_only_sections_are_kept_but_score_low() {
        let docs = vec![parse(
            "s.md",
            "# Borrowing\n## Loans\nA loan lasts three weeks.\n## Loans policy\n",
        )];
        let ranked = rank(&docs, "s.md", &[], "loans policy", &[]);
        let names = order(&ranked);
        assert_eq!(names.len(), 3);
        assert_eq!(names[0], "s.md:Borrowing > Loans");
        let empty = ranked.iter().find(|c| c.section.title() == "Loans policy");
        assert!(empty.is_some_and(|c| c.score > 0.0 && c.reason.ends_with("(heading only)")));
    }

    #[test]
    fn primary_spec_wins_ties_and_order_is_otherwise_stable() {
        let docs = vec![
            parse("other.md", "# X\nnothing\n# Y\nnothing\n"),
            parse("primary.md", "# P\nnothing\n# Q\nnothing\n"),
        ];
        let ranked = rank(&docs, "./primary.md", &[], "unrelated words", &[]);
        assert_eq!(
            order(&ranked),
            strings(&["primary.md:P", "primary.md:Q", "other.md:X", "other.md:Y"])
        );
    }

    #[test]
    fn a_stand_in_comes_after_the_referenced_and_is_related_but_not_required() {
        let docs = library();
        let refs = vec![
            (
                "specs/product/library.md".to_string(),
                Some("Acounts".to_string()),
            ),
            (
                "specs/product/library.md".to_string(),
                Some("Borrowing".to_string()),
            ),
        ];
        let ranked = rank(&docs, "specs/product/library.md", &refs, "", &[]);
        let names = order(&ranked);
        assert_eq!(
            names[..2],
            strings(&[
                "library.md:Library Catalog > Borrowing",
                "library.md:Accounts"
            ])
        );
        assert!(ranked[0].referenced && !ranked[0].stand_in);
        assert_eq!(ranked[0].mark.as_deref(), Some("referenced by the task"));
        assert!(!ranked[1].referenced && ranked[1].stand_in);
        assert_eq!(
            ranked[1].mark.as_deref(),
            Some("sent in place of the task's reference \"Acounts\", which matches no heading")
        );
        assert!(related(&ranked)[1]);
        assert!(ranked[2..].iter().all(|c| !c.referenced && !c.stand_in));
    }
}
