//! What each of a task's spec references selects: a whole document, one
//! section, one of several sections that share a title (the one the
//! reference's requirement matches best, or all of them when it does not
//! tell them apart), or, for a name no heading matches (renamed since the
//! task was planned, or misspelt), the closest heading in its place. Also
//! what the reviewer and the user are told about each: never the first of
//! several silently, never a list of every heading. Pure: the caller loads
//! the documents and decides what an unresolved reference means.

use super::relevance::Index;
use super::{Document, Error, clean_path, markdown, similar};

/// A reference to a spec: a document, maybe a section of it, and the
/// requirement the task implements there.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub path: String,
    pub section: Option<String>,
    pub requirement: Option<String>,
}

/// A reference and what it selects.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub reference: Reference,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The document is not among those loaded.
    NoDocument,
    /// The whole document (no section named).
    Document { doc: usize },
    /// The one section the name matches.
    Section { doc: usize, section: usize },
    /// Several sections match the name equally well, in document order;
    /// `chosen` are those selected: the one the requirement matches best,
    /// or every one when it does not tell them apart.
    Ambiguous {
        doc: usize,
        matches: Vec<usize>,
        chosen: Vec<usize>,
    },
    /// No section of the named document matches, but exactly one section
    /// of another spec of the review does (a file the named one links
    /// to, where the team moved it): that one, sent as referenced.
    Elsewhere {
        named: usize,
        doc: usize,
        section: usize,
    },
    /// No section matches: the closest headings, best first, and the one
    /// sent in its place when one is close enough.
    Missing {
        doc: usize,
        closest: Vec<usize>,
        stand_in: Option<usize>,
    },
}

/// How many headings a "did you mean" names.
const SUGGESTIONS: usize = 3;
/// Closeness within this of the closest counts as a tie, which the
/// requirement's relevance breaks.
const TIE: f64 = 0.05;
/// The best match must score this much more than the next for the
/// requirement to pick it among sections that share a title.
const MARGIN: f64 = 1.25;

/// Resolves each reference against `docs`. `task_text` stands in for a
/// reference's requirement when it has none; `index` is the relevance
/// index over `docs`.
pub fn resolve(
    docs: &[Document],
    references: &[Reference],
    task_text: &str,
    index: &Index,
) -> Vec<Resolved> {
    references
        .iter()
        .map(|reference| Resolved {
            reference: reference.clone(),
            outcome: outcome(docs, reference, task_text, index),
        })
        .collect()
}

fn outcome(docs: &[Document], reference: &Reference, task_text: &str, index: &Index) -> Outcome {
    let wanted = clean_path(&reference.path);
    let Some(doc) = docs.iter().position(|d| clean_path(&d.path) == wanted) else {
        return Outcome::NoDocument;
    };
    let Some(name) = &reference.section else {
        return Outcome::Document { doc };
    };
    let relevance = || {
        let text = reference
            .requirement
            .as_deref()
            .filter(|r| !r.trim().is_empty())
            .unwrap_or(task_text);
        let scores = index.scores(text);
        let document = &docs[doc];
        // A section's relevance is its own and its subsections': a title
        // over a short body is told apart by what lies under it.
        move |section: usize| -> f64 { document.subtree(section).map(|s| scores[doc][s].0).sum() }
    };
    let matches = markdown::matching(&docs[doc], name);
    match matches.len() {
        0 => {
            if let Some((other, section)) = elsewhere(docs, doc, name) {
                return Outcome::Elsewhere {
                    named: doc,
                    doc: other,
                    section,
                };
            }
            let closest = similar::closest(&docs[doc], name, SUGGESTIONS);
            let Some(&(_, best)) = closest.first() else {
                return Outcome::Missing {
                    doc,
                    closest: Vec::new(),
                    stand_in: None,
                };
            };
            // Equally close headings: the requirement decides which is
            // sent (and named first); else document order.
            let relevant = relevance();
            let mut ordered: Vec<(usize, f64, f64)> = closest
                .iter()
                .map(|&(s, score)| {
                    let tied = best - score <= TIE;
                    (s, score, if tied { relevant(s) } else { -1.0 })
                })
                .collect();
            ordered.sort_by(|a, b| {
                let tier = |x: &(usize, f64, f64)| x.2 >= 0.0;
                tier(b)
                    .cmp(&tier(a))
                    .then(b.2.total_cmp(&a.2))
                    .then(b.1.total_cmp(&a.1))
            });
            let closest: Vec<usize> = ordered.iter().map(|x| x.0).collect();
            let stand_in = (best >= similar::STAND_IN).then(|| closest[0]);
            Outcome::Missing {
                doc,
                closest,
                stand_in,
            }
        }
        1 => Outcome::Section {
            doc,
            section: matches[0],
        },
        _ => {
            let relevant = relevance();
            let mut scored: Vec<(usize, f64)> = matches.iter().map(|&s| (s, relevant(s))).collect();
            scored.sort_by(|a, b| b.1.total_cmp(&a.1));
            let clear = scored[0].1 > 0.0 && scored[0].1 >= scored[1].1 * MARGIN;
            let chosen = if clear {
                vec![scored[0].0]
            } else {
                matches.clone()
            };
            Outcome::Ambiguous {
                doc,
                matches,
                chosen,
            }
        }
    }
}

/// The one section of another of `docs` (not `named`) that `name`
/// matches; None when none or several do.
fn elsewhere(docs: &[Document], named: usize, name: &str) -> Option<(usize, usize)> {
    let mut found = docs
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != named)
        .flat_map(|(d, doc)| {
            markdown::matching(doc, name)
                .into_iter()
                .map(move |s| (d, s))
        });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

impl Resolved {
    /// The sections this reference selects, with subsections (heads only;
    /// `select::rank` adds their subsections), and whether they stand in
    /// for a name no heading matches.
    pub fn selected(&self) -> (Option<usize>, Vec<usize>, bool) {
        match &self.outcome {
            Outcome::NoDocument => (None, Vec::new(), false),
            Outcome::Document { doc } => (Some(*doc), Vec::new(), false),
            Outcome::Section { doc, section } | Outcome::Elsewhere { doc, section, .. } => {
                (Some(*doc), vec![*section], false)
            }
            Outcome::Ambiguous { doc, chosen, .. } => (Some(*doc), chosen.clone(), false),
            Outcome::Missing { doc, stand_in, .. } => {
                (Some(*doc), stand_in.iter().copied().collect(), true)
            }
        }
    }

    /// What the reviewer and the user must know about this reference;
    /// None when it selects exactly what it names.
    pub fn notice(&self, docs: &[Document]) -> Option<String> {
        let name = self.reference.section.as_deref().unwrap_or("");
        match &self.outcome {
            Outcome::NoDocument => Some(format!(
                "Spec reference not resolved: {}",
                Error::MissingDocument {
                    path: clean_path(&self.reference.path)
                }
            )),
            Outcome::Document { .. } | Outcome::Section { .. } => None,
            Outcome::Elsewhere {
                named,
                doc,
                section,
            } => Some(format!(
                "The spec reference \"{name}\" matches no heading of {}, but {} has it: speed sent {} from there. Name that file in the reference.",
                docs[*named].path,
                docs[*doc].path,
                located(&docs[*doc], *section)
            )),
            Outcome::Ambiguous {
                doc,
                matches,
                chosen,
            } => {
                let d = &docs[*doc];
                let all = matches
                    .iter()
                    .map(|&s| located(d, s))
                    .collect::<Vec<_>>()
                    .join("; ");
                let what = if chosen.len() == 1 {
                    let basis = if self.has_requirement() {
                        "the reference's requirement"
                    } else {
                        "the task's text"
                    };
                    format!(
                        "speed sent {}, which {basis} matches best",
                        d.sections[chosen[0]].heading_path()
                    )
                } else {
                    format!(
                        "the {} does not tell them apart, so speed sent all {}",
                        if self.has_requirement() {
                            "reference's requirement"
                        } else {
                            "task's text"
                        },
                        matches.len()
                    )
                };
                Some(format!(
                    "The spec reference \"{name}\" is ambiguous: {} sections of {} have that title ({all}); {what}. A full heading path (\"{}\") names one.",
                    matches.len(),
                    d.path,
                    d.sections[chosen[0]].heading_path()
                ))
            }
            Outcome::Missing {
                doc,
                closest,
                stand_in,
            } => {
                let d = &docs[*doc];
                let mut text = format!(
                    "The spec reference \"{name}\" matches no heading of {} (renamed or misspelt?)",
                    d.path
                );
                if closest.is_empty() {
                    text.push_str(
                        ", and no heading is close: the sections were ranked by the task's text instead.",
                    );
                    return Some(text);
                }
                text.push_str(&format!("; did you mean {}?", did_you_mean(d, closest)));
                if let Some(s) = stand_in {
                    text.push_str(&format!(
                        " speed sent the closest, {}, in its place.",
                        d.sections[*s].heading_path()
                    ));
                }
                text.push_str(" Fix the reference in the task.");
                Some(text)
            }
        }
    }

    /// The error a reference the user typed (`--spec PATH#Section`) is
    /// when it selects no section it names; None when it resolves (an
    /// ambiguous one sends every match, said in its notice).
    pub fn error(&self, docs: &[Document]) -> Option<Error> {
        match &self.outcome {
            Outcome::NoDocument => Some(Error::MissingDocument {
                path: clean_path(&self.reference.path),
            }),
            Outcome::Missing { doc, closest, .. } => {
                let d = &docs[*doc];
                let hint = if closest.is_empty() {
                    format!("; no heading is close (its sections: {})", outline(d))
                } else {
                    format!("; did you mean {}?", did_you_mean(d, closest))
                };
                Some(Error::MissingSection {
                    path: d.path.clone(),
                    section: self.reference.section.clone().unwrap_or_default(),
                    hint,
                })
            }
            _ => None,
        }
    }

    fn has_requirement(&self) -> bool {
        self.reference
            .requirement
            .as_deref()
            .is_some_and(|r| !r.trim().is_empty())
    }
}

/// `"A > B" (line 12), "C" (line 40) or "D" (line 77)`.
fn did_you_mean(doc: &Document, closest: &[usize]) -> String {
    let named: Vec<String> = closest.iter().map(|&s| located(doc, s)).collect();
    match named.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => named.join(""),
    }
}

/// `"A > B" (line 12)`.
fn located(doc: &Document, section: usize) -> String {
    let s = &doc.sections[section];
    format!("\"{}\" (line {})", s.heading_path(), s.start_line)
}

/// The document's top two levels of headings, at most a dozen, for a
/// reference nothing is close to.
fn outline(doc: &Document) -> String {
    const SHOWN: usize = 12;
    let top: Vec<String> = doc
        .sections
        .iter()
        .filter(|s| s.titles.len() == 1 || s.titles.len() == 2)
        .map(|s| s.heading_path())
        .collect();
    let more = top.len().saturating_sub(SHOWN);
    let mut out = top.into_iter().take(SHOWN).collect::<Vec<_>>().join("; ");
    if more > 0 {
        out.push_str(&format!("; and {more} more"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::markdown::parse;
    use super::*;

    fn docs() -> Vec<Document> {
        vec![parse(
            "docs/flask.md",
            "# Quickstart\n## Debug Mode\nRun flask run --debug to reload the server on code changes.\n\
             # Configuration Handling\n## Debug Mode\nThe DEBUG config value may behave inconsistently if changed after setup; \
             setting DEBUG in config or code is discouraged.\n\
             ## Instance Directories\nThe instance folder holds files that should not be in version control.\n\
             # Command Line Interface\n## Debug Mode\nThe flask run command enables the debugger and reloader.\n",
        )]
    }

    fn reference(section: &str, requirement: Option<&str>) -> Reference {
        Reference {
            path: "./docs/flask.md".into(),
            section: Some(section.into()),
            requirement: requirement.map(str::to_string),
        }
    }

    fn resolve_one(r: Reference, task: &str) -> (Resolved, Vec<Document>) {
        let docs = docs();
        let index = Index::new(&docs);
        let resolved = resolve(&docs, &[r], task, &index).remove(0);
        (resolved, docs)
    }

    fn paths(docs: &[Document], sections: &[usize]) -> Vec<String> {
        sections
            .iter()
            .map(|&s| docs[0].sections[s].heading_path())
            .collect()
    }

    #[test]
    fn the_requirement_picks_among_sections_that_share_a_title() {
        let (r, docs) = resolve_one(
            reference(
                "Debug Mode",
                Some("Setting DEBUG in the config is discouraged."),
            ),
            "",
        );
        let Outcome::Ambiguous {
            matches, chosen, ..
        } = &r.outcome
        else {
            panic!("{r:?}")
        };
        assert_eq!(matches.len(), 3);
        assert_eq!(
            paths(&docs, chosen),
            ["Configuration Handling > Debug Mode"]
        );
        let notice = r.notice(&docs).unwrap();
        assert!(
            notice.starts_with("The spec reference \"Debug Mode\" is ambiguous: 3 sections of docs/flask.md have that title (\"Quickstart > Debug Mode\" (line 2); \"Configuration Handling > Debug Mode\" (line 5);"),
            "{notice}"
        );
        assert!(
            notice.contains("speed sent Configuration Handling > Debug Mode, which the reference's requirement matches best"),
            "{notice}"
        );
    }

    #[test]
    fn sections_the_text_does_not_tell_apart_are_all_sent() {
        let (r, docs) = resolve_one(reference("debug mode", None), "Unrelated words");
        let Outcome::Ambiguous { chosen, .. } = &r.outcome else {
            panic!("{r:?}")
        };
        assert_eq!(chosen.len(), 3);
        let notice = r.notice(&docs).unwrap();
        assert!(
            notice.contains("the task's text does not tell them apart, so speed sent all 3"),
            "{notice}"
        );
        assert_eq!(r.error(&docs), None);
    }

    #[test]
    fn a_renamed_section_is_suggested_and_stands_in() {
        let (r, docs) = resolve_one(reference("Instance Folders", None), "");
        let (_, selected, stand_in) = r.selected();
        assert!(stand_in);
        assert_eq!(
            paths(&docs, &selected),
            ["Configuration Handling > Instance Directories"]
        );
        let notice = r.notice(&docs).unwrap();
        assert_eq!(
            notice,
            "The spec reference \"Instance Folders\" matches no heading of docs/flask.md (renamed or misspelt?); did you mean \"Configuration Handling > Instance Directories\" (line 7)? speed sent the closest, Configuration Handling > Instance Directories, in its place. Fix the reference in the task."
        );
        let error = r.error(&docs).unwrap().to_string();
        assert!(
            error.ends_with(
                "did you mean \"Configuration Handling > Instance Directories\" (line 7)?"
            ),
            "{error}"
        );
    }

    #[test]
    fn a_name_only_a_linked_spec_has_is_sent_from_there() {
        let mut docs = docs();
        docs.push(parse(
            "docs/ledger.md",
            "# Ledger\n## Journal Entries\nEvery refund writes one journal entry.\n",
        ));
        let index = Index::new(&docs);
        let r = resolve(&docs, &[reference("journal entries", None)], "", &index).remove(0);
        assert_eq!(
            r.outcome,
            Outcome::Elsewhere {
                named: 0,
                doc: 1,
                section: 1
            }
        );
        assert_eq!(r.selected(), (Some(1), vec![1], false));
        assert_eq!(
            r.notice(&docs).unwrap(),
            "The spec reference \"journal entries\" matches no heading of docs/flask.md, but docs/ledger.md has it: speed sent \"Ledger > Journal Entries\" (line 2) from there. Name that file in the reference."
        );
        assert_eq!(r.error(&docs), None);
        // Two other files with that heading: no guess, the usual "did you mean".
        docs.push(parse(
            "docs/audit.md",
            "# Audit\n## Journal Entries\nKept.\n",
        ));
        let index = Index::new(&docs);
        let r = resolve(&docs, &[reference("journal entries", None)], "", &index).remove(0);
        assert!(
            matches!(r.outcome, Outcome::Missing { doc: 0, .. }),
            "{r:?}"
        );
    }

    #[test]
    fn a_name_nothing_is_close_to_says_so_and_selects_nothing() {
        let (r, docs) = resolve_one(reference("Checkout", None), "");
        assert_eq!(r.selected().1, Vec::<usize>::new());
        assert!(r.notice(&docs).unwrap().contains("no heading is close"));
        let error = r.error(&docs).unwrap().to_string();
        assert!(
            error.contains(
                "no heading is close (its sections: Quickstart; Quickstart > Debug Mode;"
            ),
            "{error}"
        );
    }

    #[test]
    fn exact_names_and_whole_documents_need_no_notice() {
        let (r, docs) = resolve_one(reference("Quickstart > Debug Mode", None), "");
        assert_eq!(paths(&docs, &r.selected().1), ["Quickstart > Debug Mode"]);
        assert_eq!(r.notice(&docs), None);
        let (r, docs) = resolve_one(
            Reference {
                path: "docs/flask.md".into(),
                section: None,
                requirement: None,
            },
            "",
        );
        assert_eq!(r.outcome, Outcome::Document { doc: 0 });
        assert_eq!(r.notice(&docs), None);
        let (r, docs) = resolve_one(
            Reference {
                path: "docs/gone.md".into(),
                section: None,
                requirement: None,
            },
            "",
        );
        assert_eq!(r.outcome, Outcome::NoDocument);
        assert!(r.notice(&docs).unwrap().contains("docs/gone.md"));
    }
}
