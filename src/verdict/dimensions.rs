//! Quality dimensions: which ones a review asks the model to rate (the
//! contract's six by default, `[dimensions.<name>]` changing or adding
//! them), whether an answer rated every one it was asked, and the scores
//! speed computes from the ratings: each against its minimum, the weighted
//! overall against `review.pass_score`. The model rates; speed applies the
//! thresholds (`Scores::overrules`), so an approval with a critical
//! dimension at 40 is not an approval whatever the model concluded.
//!
//! Pure: configuration and the answer in, scores out.

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::decide::{Overrule, Rule};
use super::schema::Verdict;
use super::validate::{Problem, folded};

/// Rated only when the task or its feature declares coordination
/// requirements.
pub const COORDINATION: &str = "coordination_compliance";

/// The weights of the contract's levels.
pub const CRITICAL: u32 = 3;
pub const IMPORTANT: u32 = 2;
pub const MODERATE: u32 = 1;

/// `review.pass_score` when the configuration does not set it.
pub const DEFAULT_PASS_SCORE: u32 = 75;

/// One quality dimension as configured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dimension {
    pub name: String,
    /// Its share of the overall score.
    pub weight: u32,
    /// Under this score an approval falls; None: no minimum.
    pub min_score: Option<u32>,
    /// What the model is told the dimension covers.
    pub description: String,
    pub enabled: bool,
}

impl Dimension {
    fn builtin(name: &str, weight: u32, min_score: Option<u32>, description: &str) -> Dimension {
        Dimension {
            name: name.to_string(),
            weight,
            min_score,
            description: description.to_string(),
            enabled: true,
        }
    }
}

/// The dimensions and the pass score of a review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Scoring {
    /// Built-in ones first, in the contract's order, then custom ones in
    /// the configuration's order.
    pub dimensions: Vec<Dimension>,
    pub pass_score: u32,
}

impl Default for Scoring {
    fn default() -> Scoring {
        Scoring {
            dimensions: builtin(),
            pass_score: DEFAULT_PASS_SCORE,
        }
    }
}

/// The contract's six dimensions with their weights, minimums and what
/// each covers (seed 001's "Agent Review Dimensions").
pub fn builtin() -> Vec<Dimension> {
    vec![
        Dimension::builtin(
            "requirement_adherence",
            CRITICAL,
            Some(90),
            "The change does what the task and its spec sections ask: every criterion genuinely met, no more, no less.",
        ),
        Dimension::builtin(
            COORDINATION,
            CRITICAL,
            Some(90),
            "The coordination requirements hold: function profiles, shared interfaces, directory structure, no prohibited change.",
        ),
        Dimension::builtin(
            "code_quality",
            IMPORTANT,
            Some(70),
            "Readable, maintainable code: focused functions, clear names, error handling, edge cases.",
        ),
        Dimension::builtin(
            "pattern_consistency",
            IMPORTANT,
            Some(70),
            "Follows the codebase's patterns and idioms, reuses its utilities.",
        ),
        Dimension::builtin(
            "test_quality",
            IMPORTANT,
            Some(70),
            "Tests validate the behaviour and cover the changes and their edge cases.",
        ),
        Dimension::builtin(
            "security_performance",
            MODERATE,
            None,
            "No security issue (injection, secrets) or performance red flag (unbounded work, leaked resources).",
        ),
    ]
}

impl Scoring {
    /// The dimensions a review asks for: the enabled ones, coordination
    /// compliance only when coordination requirements exist.
    pub fn asked(&self, coordination: bool) -> Vec<&Dimension> {
        self.dimensions
            .iter()
            .filter(|d| d.enabled && (coordination || d.name != COORDINATION))
            .collect()
    }
}

/// The names of `asked`, as the answer must rate them.
pub fn names<'d>(asked: &[&'d Dimension]) -> Vec<&'d str> {
    asked.iter().map(|d| d.name.as_str()).collect()
}

/// What an answer (as extracted, before validation) leaves unrated of the
/// dimensions `asked`, and names it rated twice under two spellings. A
/// name matches whatever its case and separators ("Code Quality" is
/// `code_quality`).
pub fn missing(value: &Value, asked: &[&str]) -> Vec<Problem> {
    if asked.is_empty() {
        return Vec::new();
    }
    let given: Vec<&str> = match value.get("dimensions") {
        Some(Value::Object(map)) => map.keys().map(String::as_str).collect(),
        // A wrong type is validation's problem; here nothing was rated.
        _ => Vec::new(),
    };
    let mut problems = Vec::new();
    for name in asked {
        let wanted = folded(name);
        let spellings: Vec<&str> = given
            .iter()
            .copied()
            .filter(|g| folded(g) == wanted)
            .collect();
        match spellings.as_slice() {
            [] => problems.push(Problem {
                path: format!("dimensions.{name}"),
                message: "is required: rate this dimension with an integer score from 0 to 100 and a reason".to_string(),
            }),
            [_] => {}
            several => problems.push(Problem {
                path: format!("dimensions.{name}"),
                message: format!(
                    "is rated {} times ({}): rate it once",
                    several.len(),
                    several
                        .iter()
                        .map(|s| format!("{s:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        }
    }
    problems
}

/// The verdict with the ratings of `asked` under speed's names (after
/// `missing` found nothing missing); ratings of dimensions not asked keep
/// the model's spelling and count for nothing.
pub fn canonical(mut verdict: Verdict, asked: &[&str]) -> Verdict {
    for name in asked {
        let wanted = folded(name);
        let spelled = verdict
            .dimensions
            .keys()
            .find(|k| folded(k) == wanted && k.as_str() != *name)
            .cloned();
        if let Some(key) = spelled {
            if let Some(rating) = verdict.dimensions.remove(&key) {
                verdict.dimensions.insert((*name).to_string(), rating);
            }
        }
    }
    verdict
}

/// One dimension as scored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rated {
    #[serde(skip)]
    pub name: String,
    pub score: u32,
    pub weight: u32,
    pub min_score: Option<u32>,
    /// At or above its minimum (always, without one).
    pub passed: bool,
    pub reason: String,
}

/// Which of the pass criteria hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassCriteria {
    /// Every dimension with a minimum meets it.
    pub all_critical_dimensions_pass: bool,
    /// No critical or major issue: the model's, speed's own checks', or
    /// one speed added (a fabricated quote, evidence pointing nowhere).
    pub no_blocking_issues: bool,
    pub overall_score_above_threshold: bool,
}

/// The scores of a review: each dimension, the weighted overall, the pass
/// score it is held to, and which pass criteria hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scores {
    #[serde(serialize_with = "by_name", deserialize_with = "from_names")]
    pub dimensions: Vec<Rated>,
    /// The weighted mean of the scores, rounded down.
    pub overall: u32,
    pub pass_score: u32,
    pub pass_criteria_met: PassCriteria,
}

/// `{"code_quality": {...}, ...}` in the configuration's order.
fn by_name<S: serde::Serializer>(rated: &[Rated], s: S) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(rated.len()))?;
    for r in rated {
        map.serialize_entry(&r.name, r)?;
    }
    map.end()
}

/// The dimensions back from `{"code_quality": {...}, ...}` (a saved
/// report), in the order written.
fn from_names<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Rated>, D::Error> {
    let map = serde_json::Map::<String, Value>::deserialize(d)?;
    map.into_iter()
        .map(|(name, value)| {
            let mut rated: Rated =
                serde_json::from_value(value).map_err(serde::de::Error::custom)?;
            rated.name = name;
            Ok(rated)
        })
        .collect()
}

/// The scores of `verdict` over the dimensions `asked`; None when none
/// are asked. A dimension the verdict does not rate (validation makes sure
/// it does) scores 0: an unrated dimension never passes.
pub fn score(verdict: &Verdict, asked: &[&Dimension], pass_score: u32) -> Option<Scores> {
    if asked.is_empty() {
        return None;
    }
    let dimensions: Vec<Rated> = asked
        .iter()
        .map(|d| {
            let (score, reason) = match verdict.dimensions.get(&d.name) {
                Some(r) => (r.score.min(100), r.reason.clone()),
                None => (0, "not rated".to_string()),
            };
            Rated {
                name: d.name.clone(),
                score,
                weight: d.weight,
                min_score: d.min_score,
                passed: d.min_score.is_none_or(|min| score >= min),
                reason,
            }
        })
        .collect();
    let weights: u64 = dimensions.iter().map(|r| u64::from(r.weight)).sum();
    let weighted: u64 = dimensions
        .iter()
        .map(|r| u64::from(r.score) * u64::from(r.weight))
        .sum();
    // Compared exactly (score × weight against threshold × weight), so a
    // mean of 74.6 does not pass a threshold of 75 by rounding; the floor
    // reported agrees with that comparison.
    let overall = weighted.checked_div(weights).unwrap_or(0) as u32;
    let above = weights > 0 && weighted >= u64::from(pass_score) * weights;
    let no_blocking = !verdict.issues.iter().any(|i| i.severity.is_blocking());
    Some(Scores {
        pass_criteria_met: PassCriteria {
            all_critical_dimensions_pass: dimensions.iter().all(|r| r.passed),
            no_blocking_issues: no_blocking,
            overall_score_above_threshold: above,
        },
        dimensions,
        overall,
        pass_score,
    })
}

impl Scores {
    /// The dimensions under their minimum.
    pub fn failing(&self) -> impl Iterator<Item = &Rated> {
        self.dimensions.iter().filter(|r| !r.passed)
    }

    /// Why these scores do not allow an approval: each dimension under its
    /// minimum, then an overall under the pass score.
    pub fn overrules(&self) -> Vec<Overrule> {
        let mut out: Vec<Overrule> = self
            .failing()
            .map(|r| Overrule {
                rule: Rule::DimensionBelowMinimum,
                reason: format!(
                    "{} scored {}, under its minimum of {}{}",
                    r.name,
                    r.score,
                    r.min_score.unwrap_or_default(),
                    reason_suffix(&r.reason)
                ),
            })
            .collect();
        if !self.pass_criteria_met.overall_score_above_threshold {
            out.push(Overrule {
                rule: Rule::OverallBelowThreshold,
                reason: format!(
                    "the overall score {} is under review.pass_score {}",
                    self.overall, self.pass_score
                ),
            });
        }
        out
    }

    /// What the scores ask a developer to improve, for the feedback; None
    /// when every threshold is met.
    pub fn feedback(&self) -> Option<String> {
        let failing: Vec<&Rated> = self.failing().collect();
        let low = !self.pass_criteria_met.overall_score_above_threshold;
        if failing.is_empty() && !low {
            return None;
        }
        let mut out = String::from("Quality scores under their thresholds:\n");
        for r in failing {
            out.push_str(&format!(
                "- {}: {} (minimum {}){}\n",
                r.name,
                r.score,
                r.min_score.unwrap_or_default(),
                reason_suffix(&r.reason)
            ));
        }
        if low {
            out.push_str(&format!(
                "- overall: {} (review.pass_score {})\n",
                self.overall, self.pass_score
            ));
        }
        Some(out)
    }
}

fn reason_suffix(reason: &str) -> String {
    let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    if reason.is_empty() {
        return String::new();
    }
    let clipped: String = reason.chars().take(300).collect();
    let more = if clipped.len() < reason.len() {
        "…"
    } else {
        ""
    };
    format!(": {clipped}{more}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::schema::{DimensionScore, Issue, Kind, Severity};
    use serde_json::json;

    fn verdict(scores: &[(&str, u32)]) -> Verdict {
        let mut v: Verdict = serde_json::from_value(json!({
            "verdict": "approve", "expectations": "", "criteria": [],
            "spec_verification": [], "issues": []
        }))
        .unwrap();
        for (name, score) in scores {
            v.dimensions.insert(
                name.to_string(),
                DimensionScore {
                    score: *score,
                    reason: format!("{name} reason"),
                },
            );
        }
        v
    }

    fn all(score: u32) -> Vec<(&'static str, u32)> {
        [
            "requirement_adherence",
            "code_quality",
            "pattern_consistency",
            "test_quality",
            "security_performance",
        ]
        .into_iter()
        .map(|n| (n, score))
        .collect()
    }

    #[test]
    fn defaults_follow_the_contract() {
        let s = Scoring::default();
        let table: Vec<(&str, u32, Option<u32>)> = s
            .dimensions
            .iter()
            .map(|d| (d.name.as_str(), d.weight, d.min_score))
            .collect();
        assert_eq!(
            table,
            [
                ("requirement_adherence", 3, Some(90)),
                ("coordination_compliance", 3, Some(90)),
                ("code_quality", 2, Some(70)),
                ("pattern_consistency", 2, Some(70)),
                ("test_quality", 2, Some(70)),
                ("security_performance", 1, None),
            ]
        );
        assert_eq!(s.pass_score, 75);
        assert_eq!(names(&s.asked(false)).len(), 5);
        assert!(names(&s.asked(true)).contains(&COORDINATION));
    }

    #[test]
    fn overall_is_the_weighted_mean_compared_exactly() {
        let s = Scoring::default();
        let asked = s.asked(false);
        let scores = score(&verdict(&all(80)), &asked, 75).unwrap();
        assert_eq!(scores.overall, 80);
        // 95×3 + 70×2×3 + 20×1 = 725 over 10: 72.5, under 75.
        let mut v = all(70);
        v[0].1 = 95;
        v[4].1 = 20;
        let scores = score(&verdict(&v), &asked, 75).unwrap();
        assert_eq!(scores.overall, 72);
        assert!(!scores.pass_criteria_met.overall_score_above_threshold);
        assert!(scores.pass_criteria_met.all_critical_dimensions_pass);
        let rules: Vec<Rule> = scores.overrules().iter().map(|o| o.rule).collect();
        assert_eq!(rules, [Rule::OverallBelowThreshold]);
        // 74.9 does not round up into a pass: 749 ≥ 750 is false.
        let mut v = all(75);
        v[4].1 = 74;
        let weights = 3 + 2 * 3 + 1;
        let scores = score(&verdict(&v), &asked, 75).unwrap();
        assert_eq!((75 * weights - 1) / weights, scores.overall);
        assert!(!scores.pass_criteria_met.overall_score_above_threshold);
    }

    #[test]
    fn a_critical_dimension_under_its_minimum_fails_whatever_the_overall() {
        let s = Scoring::default();
        let mut v = all(100);
        v[0].1 = 40;
        let scores = score(&verdict(&v), &s.asked(false), 75).unwrap();
        assert!(scores.overall >= 75, "{}", scores.overall);
        assert!(!scores.pass_criteria_met.all_critical_dimensions_pass);
        let o = scores.overrules();
        assert_eq!(o.len(), 1);
        assert_eq!(o[0].rule, Rule::DimensionBelowMinimum);
        assert_eq!(
            o[0].reason,
            "requirement_adherence scored 40, under its minimum of 90: requirement_adherence reason"
        );
        assert!(
            scores
                .feedback()
                .unwrap()
                .contains("- requirement_adherence: 40 (minimum 90)")
        );
        // security_performance has no minimum: 0 passes it.
        let mut v = all(95);
        v[4].1 = 0;
        let scores = score(&verdict(&v), &s.asked(false), 75).unwrap();
        assert!(scores.dimensions[4].passed);
    }

    #[test]
    fn blocking_issues_and_unrated_dimensions() {
        let s = Scoring::default();
        let mut v = verdict(&all(95)[..4]);
        v.issues.push(Issue {
            severity: Severity::Major,
            file: None,
            line: None,
            end_line: None,
            message: "m".into(),
            suggestion: String::new(),
            dimension: Some("code_quality".into()),
        });
        let scores = score(&v, &s.asked(false), 75).unwrap();
        assert!(!scores.pass_criteria_met.no_blocking_issues);
        let sp = &scores.dimensions[4];
        assert_eq!((sp.score, sp.reason.as_str()), (0, "not rated"));
        assert!(score(&v, &[], 75).is_none());
        assert_eq!(v.verdict, Kind::Approve);
    }

    #[test]
    fn missing_and_canonical_names() {
        let asked = ["code_quality", "test_quality"];
        let value = json!({"dimensions": {"Code Quality": {"score": 80}}});
        let problems = missing(&value, &asked);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].path, "dimensions.test_quality");
        assert!(missing(&json!({}), &asked).len() == 2);
        assert!(missing(&json!({}), &[]).is_empty());
        let twice = json!({"dimensions": {"code_quality": {"score": 1}, "CODE-QUALITY": {"score": 2}, "test_quality": {"score": 3}}});
        let problems = missing(&twice, &asked);
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].message.contains("rated 2 times"),
            "{problems:?}"
        );

        let v = canonical(verdict(&[("Code Quality", 80), ("extra", 5)]), &asked);
        assert!(v.dimensions.contains_key("code_quality"));
        assert!(v.dimensions.contains_key("extra"));
        assert!(!v.dimensions.contains_key("Code Quality"));
    }

    #[test]
    fn scores_serialise_as_the_contract_shows() {
        let s = Scoring::default();
        let scores = score(&verdict(&all(92)), &s.asked(false), 75).unwrap();
        let out = serde_json::to_value(&scores).unwrap();
        assert_eq!(
            out["dimensions"]["code_quality"],
            json!({"score": 92, "weight": 2, "min_score": 70, "passed": true, "reason": "code_quality reason"})
        );
        assert_eq!(
            out["dimensions"]["security_performance"]["min_score"],
            json!(null)
        );
        assert_eq!(out["overall"], 92);
        assert_eq!(out["pass_score"], 75);
        assert_eq!(
            out["pass_criteria_met"],
            json!({"all_critical_dimensions_pass": true, "no_blocking_issues": true, "overall_score_above_threshold": true})
        );
        let keys: Vec<&String> = out["dimensions"].as_object().unwrap().keys().collect();
        assert_eq!(keys[0], "requirement_adherence");
    }
}
