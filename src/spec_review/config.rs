//! `[spec_review]`: the criteria a spec is scored on (each with its
//! description and minimum), the default minimum, how many reviews a
//! session may have before it is blocked, and the reviser command. This
//! part owns the type and its defaults; `settings` reads the file into it.

use std::time::Duration;

use serde::{Serialize, Serializer};

pub const DEFAULT_MIN_SCORE: u8 = 70;
pub const DEFAULT_MAX_ITERATIONS: u32 = 3;
/// A reviser is an agent editing a document: slower than one model call.
pub const DEFAULT_REVISER_TIMEOUT_SECS: u64 = 600;

/// One criterion the model scores from 0 to 100.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Criterion {
    /// `completeness`; a word of lower-case letters, digits and `_`.
    pub name: String,
    /// What the model is told the criterion means.
    pub description: String,
    /// Under this score a pass is not a pass.
    pub min_score: u8,
}

/// The resolved `[spec_review]` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Config {
    pub criteria: Vec<Criterion>,
    /// The minimum of a criterion that sets none of its own.
    pub min_score: u8,
    /// Reviews a session may have (from its start, or from `--resume`)
    /// without a pass before it is blocked.
    pub max_iterations: u32,
    /// The reviser's argv; empty: no reviser, a person revises.
    pub reviser: Vec<String>,
    #[serde(rename = "reviser_timeout_secs", serialize_with = "seconds")]
    pub reviser_timeout: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            criteria: default_criteria(DEFAULT_MIN_SCORE),
            min_score: DEFAULT_MIN_SCORE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            reviser: Vec::new(),
            reviser_timeout: Duration::from_secs(DEFAULT_REVISER_TIMEOUT_SECS),
        }
    }
}

fn seconds<S: Serializer>(value: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(value.as_secs_f64())
}

/// The seed's four criteria, in speed's words, each with `min_score`.
pub fn default_criteria(min_score: u8) -> Vec<Criterion> {
    [
        (
            "completeness",
            "Every PRD requirement (without a PRD: every goal the spec states) has a section \
             that specifies it; nothing an implementer needs is left open.",
        ),
        (
            "consistency",
            "Names, types, interfaces, numbers and behaviours agree across sections; no \
             section contradicts another or the PRD.",
        ),
        (
            "testability",
            "Each requirement states observable behaviour a test or a reviewer can check: \
             inputs, outputs, limits, error cases.",
        ),
        (
            "architecture",
            "The design fits the system it is part of: clear responsibilities, data flow and \
             interfaces, following the patterns the spec and the codebase already use.",
        ),
    ]
    .into_iter()
    .map(|(name, description)| Criterion {
        name: name.to_string(),
        description: description.to_string(),
        min_score,
    })
    .collect()
}

/// Whether `name` can name a criterion: 1 to 40 of `[a-z0-9_]`, starting
/// with a letter (it becomes a JSON key the model must write back).
pub fn valid_criterion_name(name: &str) -> bool {
    (1..=40).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_seeds() {
        let c = Config::default();
        let names: Vec<&str> = c.criteria.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["completeness", "consistency", "testability", "architecture"]
        );
        assert!(c.criteria.iter().all(|c| c.min_score == 70));
        assert_eq!((c.min_score, c.max_iterations), (70, 3));
        assert!(c.reviser.is_empty());
    }

    #[test]
    fn criterion_names_are_json_keys_a_model_can_copy() {
        assert!(valid_criterion_name("security_2"));
        for bad in ["", "Security", "2fa", "a-b", "a b", &"x".repeat(41)] {
            assert!(!valid_criterion_name(bad), "{bad}");
        }
    }
}
