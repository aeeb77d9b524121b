//! Prompt templates: `prompts/review.md`, `prompts/guardian.md`,
//! `prompts/defect.md` (the defect-fix review), `prompts/spec_review.md`
//! and `prompts/spec_revise.md` (a spec's review and its revision), embedded
//! in the binary, each replaceable by an override of the same name (a review
//! takes them from `.speed/prompts/` at the main branch's commit: see
//! `settings`). Substitution is one pass over
//! `{{placeholder}}` slots parsed once, so text put into a slot is never
//! itself expanded. This module knows nothing about budgets or fencing.

use std::path::Path;

use super::{Error, Kind};

const REVIEW_FILE: &str = "review.md";
const GUARDIAN_FILE: &str = "guardian.md";
const DEFECT_FILE: &str = "defect.md";
pub(super) const REVIEW_TEXT: &str = include_str!("../../prompts/review.md");
const GUARDIAN_TEXT: &str = include_str!("../../prompts/guardian.md");
const DEFECT_TEXT: &str = include_str!("../../prompts/defect.md");
const SPEC_REVIEW_FILE: &str = "spec_review.md";
const SPEC_REVISE_FILE: &str = "spec_revise.md";
const SPEC_REVIEW_TEXT: &str = include_str!("../../prompts/spec_review.md");
const SPEC_REVISE_TEXT: &str = include_str!("../../prompts/spec_revise.md");

/// A prompt template that replaces a built-in one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// "review.md" or "guardian.md".
    pub name: String,
    /// Where it was read, for messages ("…/review.md at main (6f4bc06c71)").
    pub from: String,
    pub text: String,
}

/// The files a project may override (`.speed/prompts/<name>`).
pub const TEMPLATE_NAMES: [&str; 5] = [
    "review.md",
    "guardian.md",
    "defect.md",
    "spec_review.md",
    "spec_revise.md",
];

/// Placeholders of the review template; an override must use each of them,
/// since a missing one would silently drop that part of the prompt.
pub(crate) const REVIEW_SLOTS: &[&str] = &[
    "notices",
    "tag",
    "task",
    "criteria",
    "task_notes",
    "previous_review",
    "scope",
    "gates",
    "assumptions",
    "diff",
    "impact",
    "spec",
    "cross_cutting",
    "schema",
];

/// Placeholders a review or defect template may leave out: an override
/// written before the vision reached the reviewer gets the vision after
/// the spec sections instead, and a re-review's previous findings and
/// interdiff after the earlier reviews, and the dimensions' minimums after
/// the answer's shape; without `stable_end` no prefix is marked for the
/// provider's prompt cache.
pub(crate) const OPTIONAL_SLOTS: &[&str] = &[
    "vision",
    "stable_end",
    "previous_findings",
    "interdiff",
    "dimensions",
];

pub(crate) const GUARDIAN_SLOTS: &[&str] = &[
    "notices", "tag", "vision", "spec", "task", "criteria", "diff", "schema",
];

/// Placeholders of the defect-fix review template.
pub(crate) const DEFECT_SLOTS: &[&str] = &[
    "notices",
    "tag",
    "task",
    "report",
    "triage",
    "guidance",
    "spec",
    "criteria",
    "determinations",
    "scope",
    "gates",
    "diff",
    "impact",
    "schema",
];

/// Placeholders of the spec review template.
pub(crate) const SPEC_REVIEW_SLOTS: &[&str] = &[
    "notices",
    "tag",
    "feature",
    "iteration",
    "criteria",
    "prd",
    "spec",
    "checks",
    "previous",
    "schema",
];

/// Placeholders of the template a spec's reviser command reads.
pub(crate) const SPEC_REVISE_SLOTS: &[&str] = &["tag", "feedback", "prd", "spec"];

/// The review, guardian, defect-fix review and spec review templates, parsed.
#[derive(Debug, Clone)]
pub struct Templates {
    review: Template,
    guardian: Template,
    defect: Template,
    spec_review: Template,
    spec_revise: Template,
}

impl Templates {
    /// The templates built into the binary.
    pub fn embedded() -> Templates {
        Templates {
            review: Template::parse_with(
                &embedded_name(REVIEW_FILE),
                REVIEW_TEXT,
                REVIEW_SLOTS,
                OPTIONAL_SLOTS,
            )
            .expect("embedded review template is valid: checked by template tests"),
            guardian: Template::parse(&embedded_name(GUARDIAN_FILE), GUARDIAN_TEXT, GUARDIAN_SLOTS)
                .expect("embedded guardian template is valid: checked by template tests"),
            defect: Template::parse_with(
                &embedded_name(DEFECT_FILE),
                DEFECT_TEXT,
                DEFECT_SLOTS,
                OPTIONAL_SLOTS,
            )
            .expect("embedded defect template is valid: checked by template tests"),
            spec_review: Template::parse(
                &embedded_name(SPEC_REVIEW_FILE),
                SPEC_REVIEW_TEXT,
                SPEC_REVIEW_SLOTS,
            )
            .expect("embedded spec review template is valid: checked by template tests"),
            spec_revise: Template::parse(
                &embedded_name(SPEC_REVISE_FILE),
                SPEC_REVISE_TEXT,
                SPEC_REVISE_SLOTS,
            )
            .expect("embedded spec revision template is valid: checked by template tests"),
        }
    }

    /// The embedded templates, each replaced by the file of the same name in
    /// `override_dir` when there is one. A missing directory means no overrides.
    pub fn load(override_dir: Option<&Path>) -> Result<Templates, Error> {
        let mut found = Vec::new();
        if let Some(dir) = override_dir {
            for file in TEMPLATE_NAMES {
                let path = dir.join(file);
                match std::fs::read_to_string(&path) {
                    Ok(text) => found.push((file, path.display().to_string(), text)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(source) => return Err(Error::TemplateRead { path, source }),
                }
            }
        }
        Templates::with_overrides(
            found
                .iter()
                .map(|(file, from, text)| (*file, from.as_str(), text.as_str())),
        )
    }

    /// The embedded templates with these overrides (read at the main
    /// branch's commit by `settings`).
    pub fn from_overrides(overrides: &[Override]) -> Result<Templates, Error> {
        Templates::with_overrides(
            overrides
                .iter()
                .map(|o| (o.name.as_str(), o.from.as_str(), o.text.as_str())),
        )
    }

    /// The embedded templates, each replaced by an override given as (file
    /// name, where it was read, text). The caller decides where overrides
    /// come from (the main branch's commit, for a review); a name that is
    /// not a template's is an error, never ignored.
    pub fn with_overrides<'a>(
        overrides: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    ) -> Result<Templates, Error> {
        let mut templates = Templates::embedded();
        for (file, from, text) in overrides {
            match file {
                REVIEW_FILE => {
                    templates.review =
                        Template::parse_with(from, text, REVIEW_SLOTS, OPTIONAL_SLOTS)?
                }
                GUARDIAN_FILE => templates.guardian = Template::parse(from, text, GUARDIAN_SLOTS)?,
                DEFECT_FILE => {
                    templates.defect =
                        Template::parse_with(from, text, DEFECT_SLOTS, OPTIONAL_SLOTS)?
                }
                SPEC_REVIEW_FILE => {
                    templates.spec_review = Template::parse(from, text, SPEC_REVIEW_SLOTS)?
                }
                SPEC_REVISE_FILE => {
                    templates.spec_revise = Template::parse(from, text, SPEC_REVISE_SLOTS)?
                }
                other => {
                    return Err(Error::UnknownTemplate {
                        file: other.to_string(),
                        known: TEMPLATE_NAMES.join(", "),
                    });
                }
            }
        }
        Ok(templates)
    }

    /// Where the template of `kind` came from: an override's path, or
    /// "prompts/review.md (built in)"; for reports and `--dry-run`.
    pub fn source(&self, kind: Kind) -> &str {
        self.get(kind).file()
    }

    /// The spec review template (`prompts/spec_review.md`).
    pub(crate) fn spec_review(&self) -> &Template {
        &self.spec_review
    }

    /// The template of what a spec's reviser reads (`prompts/spec_revise.md`).
    pub(crate) fn spec_revise(&self) -> &Template {
        &self.spec_revise
    }

    pub(crate) fn get(&self, kind: Kind) -> &Template {
        match kind {
            Kind::Review => &self.review,
            Kind::Guardian => &self.guardian,
            Kind::Defect => &self.defect,
        }
    }
}

fn embedded_name(file: &str) -> String {
    format!("prompts/{file} (built in)")
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Text(String),
    Slot(&'static str),
}

/// A parsed template: literal text and named slots.
#[derive(Debug, Clone)]
pub(crate) struct Template {
    file: String,
    segments: Vec<Segment>,
}

impl Template {
    /// Parses `text`; `{{name}}` with a name outside `slots` is an error naming
    /// the file, and so is a slot of `slots` that the text never uses. Braces
    /// that do not hold a plain name (`{{ "a": 1 }}`) are literal text.
    pub(crate) fn parse(file: &str, text: &str, slots: &[&'static str]) -> Result<Template, Error> {
        Template::parse_with(file, text, slots, &[])
    }

    /// `parse`, where the slots of `optional` may also be used, or not.
    pub(crate) fn parse_with(
        file: &str,
        text: &str,
        slots: &[&'static str],
        optional: &[&'static str],
    ) -> Result<Template, Error> {
        let mut segments = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else { break };
            let name = after[..close].trim();
            let is_name = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !is_name {
                literal.push_str(&rest[..open + 2]);
                rest = after;
                continue;
            }
            let Some(slot) = slots.iter().chain(optional).find(|s| **s == name) else {
                return Err(Error::UnknownPlaceholder {
                    file: file.to_string(),
                    placeholder: name.to_string(),
                    known: slots
                        .iter()
                        .chain(optional)
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            };
            literal.push_str(&rest[..open]);
            if !literal.is_empty() {
                segments.push(Segment::Text(std::mem::take(&mut literal)));
            }
            segments.push(Segment::Slot(slot));
            rest = &after[close + 2..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            segments.push(Segment::Text(literal));
        }
        for slot in slots {
            if !segments.contains(&Segment::Slot(slot)) {
                return Err(Error::MissingPlaceholder {
                    file: file.to_string(),
                    placeholder: slot.to_string(),
                });
            }
        }
        Ok(Template {
            file: file.to_string(),
            segments,
        })
    }

    /// Whether the template uses `slot`.
    pub(crate) fn has(&self, slot: &str) -> bool {
        self.segments
            .iter()
            .any(|s| matches!(s, Segment::Slot(name) if *name == slot))
    }

    /// Where the template came from, for messages.
    pub(crate) fn file(&self) -> &str {
        &self.file
    }

    /// The slots in the order the template first uses them.
    pub(crate) fn slots(&self) -> impl Iterator<Item = &'static str> + '_ {
        let mut seen: Vec<&'static str> = Vec::new();
        self.segments
            .iter()
            .filter_map(move |segment| match segment {
                Segment::Slot(name) if !seen.contains(name) => {
                    seen.push(name);
                    Some(*name)
                }
                _ => None,
            })
    }

    /// Fills every slot with `value(name)`, in one pass.
    pub(crate) fn render<'v>(&self, value: impl Fn(&str) -> &'v str) -> String {
        self.render_marked(value, "").0
    }

    /// `render`, and the byte offset in the text where slot `mark` first
    /// stands (None when the template does not use it).
    pub(crate) fn render_marked<'v>(
        &self,
        value: impl Fn(&str) -> &'v str,
        mark: &str,
    ) -> (String, Option<usize>) {
        let mut out = String::new();
        let mut at = None;
        for segment in &self.segments {
            match segment {
                Segment::Text(t) => out.push_str(t),
                Segment::Slot(name) => {
                    if *name == mark && at.is_none() {
                        at = Some(out.len());
                    }
                    out.push_str(value(name));
                }
            }
        }
        (out, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_templates_parse() {
        let t = Templates::embedded();
        assert!(t.get(Kind::Review).file().contains("review.md"));
        assert!(t.get(Kind::Guardian).file().contains("guardian.md"));
        assert!(t.get(Kind::Defect).file().contains("defect.md"));
        assert!(t.spec_review().file().contains("spec_review.md"));
        assert!(t.spec_revise().file().contains("spec_revise.md"));
    }

    #[test]
    fn substitution_is_one_pass() {
        let t = Template::parse("t.md", "A {{x}} B {{ y }} C", &["x", "y"]).unwrap();
        let out = t.render(|name| if name == "x" { "{{y}}" } else { "Y" });
        assert_eq!(out, "A {{y}} B Y C");
    }

    #[test]
    fn non_name_braces_are_literal() {
        let t = Template::parse("t.md", "{{ \"a\": 1 }} {{x}} {{", &["x"]).unwrap();
        assert_eq!(t.render(|_| "X"), "{{ \"a\": 1 }} X {{");
    }

    #[test]
    fn unknown_placeholder_names_file_and_placeholder() {
        let err = Template::parse("/r/.speed/prompts/review.md", "{{x}} {{difff}}", &["x"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("/r/.speed/prompts/review.md"), "{err}");
        assert!(err.contains("{{difff}}"), "{err}");
        assert!(err.contains("known placeholders: x"), "{err}");
    }

    #[test]
    fn missing_placeholder_is_an_error() {
        let err = Template::parse("g.md", "{{x}}", &["x", "diff"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("g.md") && err.contains("{{diff}}"), "{err}");
    }

    #[test]
    fn override_file_replaces_embedded_one() {
        let dir = tempfile::tempdir().unwrap();
        let custom: String = REVIEW_SLOTS
            .iter()
            .map(|s| format!("CUSTOM {{{{{s}}}}}\n"))
            .collect();
        std::fs::write(dir.path().join("review.md"), &custom).unwrap();
        let t = Templates::load(Some(dir.path())).unwrap();
        let out = t.get(Kind::Review).render(|_| "v");
        assert!(out.starts_with("CUSTOM v\nCUSTOM v\n"), "{out}");
        assert!(
            t.get(Kind::Review)
                .file()
                .starts_with(&dir.path().display().to_string())
        );
        // The guardian template has no override, so it stays the built-in one.
        assert!(t.source(Kind::Guardian).contains("built in"));
    }

    #[test]
    fn overrides_given_as_text_replace_embedded_ones() {
        let custom: String = GUARDIAN_SLOTS
            .iter()
            .map(|s| format!("G {{{{{s}}}}}\n"))
            .collect();
        let t = Templates::with_overrides([(
            "guardian.md",
            ".speed/prompts/guardian.md at main (abc)",
            custom.as_str(),
        )])
        .unwrap();
        assert_eq!(
            t.source(Kind::Guardian),
            ".speed/prompts/guardian.md at main (abc)"
        );
        assert!(t.get(Kind::Guardian).render(|_| "v").starts_with("G v\n"));
        assert!(t.source(Kind::Review).contains("built in"));
        let err = Templates::with_overrides([("reviw.md", "x", "")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("reviw.md") && err.contains("review.md"),
            "{err}"
        );
    }

    #[test]
    fn missing_override_dir_means_embedded() {
        let dir = tempfile::tempdir().unwrap();
        let t = Templates::load(Some(&dir.path().join("absent"))).unwrap();
        assert!(t.get(Kind::Review).file().contains("built in"));
    }

    #[test]
    fn bad_override_is_reported_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("guardian.md"), "{{visoin}}").unwrap();
        let err = Templates::load(Some(dir.path())).unwrap_err().to_string();
        assert!(
            err.contains("guardian.md") && err.contains("{{visoin}}"),
            "{err}"
        );
    }

    #[test]
    fn an_override_may_leave_out_the_vision_but_not_misspell_it() {
        let without: String = REVIEW_SLOTS
            .iter()
            .map(|s| format!("R {{{{{s}}}}}\n"))
            .collect();
        let t = Templates::with_overrides([("review.md", "r.md", without.as_str())]).unwrap();
        assert!(!t.get(Kind::Review).has("vision"));
        assert!(Templates::embedded().get(Kind::Review).has("vision"));
        let with = format!("{without}{{{{vision}}}}\n");
        let t = Templates::with_overrides([("review.md", "r.md", with.as_str())]).unwrap();
        assert!(t.get(Kind::Review).has("vision"));
        let typo = format!("{without}{{{{visoin}}}}\n");
        let err = Templates::with_overrides([("review.md", "r.md", typo.as_str())])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("{{visoin}}") && err.contains("vision"),
            "{err}"
        );
    }
}
