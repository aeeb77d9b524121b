//! `[spec_review]` of `.speed/config.toml`, read as strictly as every other
//! table: `criteria` (a table of criterion names, each a description or
//! `{description, min_score}`), `min_score`, `max_iterations`, `reviser`
//! and `reviser_timeout_secs`.

use toml::de::DeValue;

use super::{Reader, Table, clip, keys, limits};
use crate::spec_review::valid_criterion_name;

/// At most this many criteria: each is a score the model must give.
const MAX_CRITERIA: usize = 20;
const CRITERION_KEYS: &[&str] = &["description", "min_score"];

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpecReview {
    /// (name, description, own minimum), in the file's order.
    pub criteria: Option<Vec<(String, String, Option<u8>)>>,
    pub min_score: Option<u8>,
    pub max_iterations: Option<u32>,
    pub reviser: Option<Vec<String>>,
    pub reviser_timeout_secs: Option<f64>,
}

impl Reader<'_> {
    pub(super) fn spec_review(&mut self, t: &Table) -> SpecReview {
        self.check_keys(t, keys("spec_review"));
        SpecReview {
            criteria: self.criteria(t),
            min_score: self.score(t, "min_score"),
            max_iterations: self.u32(t, "max_iterations", limits::MAX_ITERATIONS),
            reviser: self.strings(t, "reviser", false),
            reviser_timeout_secs: self.seconds(t, "reviser_timeout_secs", limits::MAX_TIMEOUT_SECS),
        }
    }

    fn score(&mut self, t: &Table, key: &str) -> Option<u8> {
        self.int(t, key, limits::SCORE)
            .and_then(|n| u8::try_from(n).ok())
    }

    fn criteria(&mut self, t: &Table) -> Option<Vec<(String, String, Option<u8>)>> {
        let table = self.sub_table(t, "criteria")?;
        let mut out = Vec::new();
        for (key, value) in table.entries {
            let name = key.get_ref().as_ref();
            if !valid_criterion_name(name) {
                self.problem(
                    key.span(),
                    table.path(name),
                    "a criterion's name is 1 to 40 lower-case letters, digits and '_', starting \
                     with a letter (the model writes it back as a key)"
                        .to_string(),
                );
                continue;
            }
            let criterion = match value.get_ref() {
                DeValue::String(s) if !s.trim().is_empty() => Some((s.to_string(), None)),
                DeValue::Table(entries) => {
                    let entry = Table {
                        name: table.path(name),
                        entries,
                    };
                    self.check_keys(&entry, CRITERION_KEYS);
                    let min = self.score(&entry, "min_score");
                    match self.string(&entry, "description") {
                        Some(d) => Some((d, min)),
                        None => {
                            if entry.get("description").is_none() {
                                self.problem(
                                    value.span(),
                                    entry.path("description"),
                                    "is required: what the criterion means, for the model"
                                        .to_string(),
                                );
                            }
                            None
                        }
                    }
                }
                _ => {
                    let found = self.found(value);
                    self.problem(
                        value.span(),
                        table.path(name),
                        format!(
                            "expected a description (a non-empty string) or a table {{ description, min_score }}, found {found}"
                        ),
                    );
                    None
                }
            };
            if let Some((description, min)) = criterion {
                out.push((name.to_string(), description, min));
            }
        }
        if out.is_empty() && table.entries.is_empty() {
            let span = t.get("criteria").map_or(0..0, |v| v.span());
            self.problem(
                span,
                t.path("criteria"),
                "names no criterion: give at least one, or leave the table out for the four defaults"
                    .to_string(),
            );
            return None;
        }
        if out.len() > MAX_CRITERIA {
            let span = t.get("criteria").map_or(0..0, |v| v.span());
            self.problem(
                span,
                t.path("criteria"),
                format!(
                    "names {} criteria; at most {MAX_CRITERIA} (\"{}\" is the first past it)",
                    out.len(),
                    clip(&out[MAX_CRITERIA].0)
                ),
            );
            return None;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Error, parse};

    fn one(text: &str) -> String {
        match parse(text, "cfg.toml") {
            Err(Error::Invalid { problems, .. }) => {
                assert_eq!(problems.0.len(), 1, "{problems}");
                problems.0[0].to_string()
            }
            other => panic!("expected one problem, got {other:?}"),
        }
    }

    #[test]
    fn the_table_in_both_forms() {
        let f = parse(
            "[spec_review]\nmin_score = 75\nmax_iterations = 5\nreviser = [\"claude\", \"-p\"]\n\
             reviser_timeout_secs = 90\n\
             [spec_review.criteria]\ncompleteness = \"covers the PRD\"\n\
             security = { description = \"threats named\", min_score = 90 }\n",
            "c",
        )
        .unwrap();
        let s = f.spec_review;
        assert_eq!((s.min_score, s.max_iterations), (Some(75), Some(5)));
        assert_eq!(s.reviser.unwrap(), ["claude", "-p"]);
        assert_eq!(s.reviser_timeout_secs, Some(90.0));
        assert_eq!(
            s.criteria.unwrap(),
            [
                (
                    "completeness".to_string(),
                    "covers the PRD".to_string(),
                    None
                ),
                (
                    "security".to_string(),
                    "threats named".to_string(),
                    Some(90)
                ),
            ]
        );
    }

    #[test]
    fn wrong_keys_and_values_name_file_line_and_key() {
        assert_eq!(
            one("[spec_review]\nmax_iteration = 3\n"),
            "line 2: spec_review.max_iteration: unknown key; did you mean `max_iterations`?"
        );
        assert!(one("[spec_review]\nmin_score = 101\n").contains("an integer from 0 to 100"));
        assert!(one("[spec_review]\nmax_iterations = 0\n").contains("an integer from 1 to 20"));
        assert!(one("[spec_review]\nreviser = \"claude -p\"\n").contains("non-empty array"));
        assert!(
            one("[spec_review.criteria]\nTestability = \"x\"\n")
                .starts_with("line 2: spec_review.criteria.Testability: a criterion's name")
        );
        assert!(one("[spec_review.criteria]\nx = 3\n").contains("expected a description"));
        assert!(
            one("[spec_review.criteria]\nx = { min_score = 3 }\n")
                .contains("spec_review.criteria.x.description: is required")
        );
        assert!(
            one("[spec_review.criteria]\nx = { description = \"d\", min = 3 }\n")
                .contains("did you mean `min_score`?")
        );
        assert!(one("[spec_review]\ncriteria = {}\n").contains("names no criterion"));
    }
}
