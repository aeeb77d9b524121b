//! The statistics of the review log (`speed stats`), from its lines alone:
//! how many reviews and subjects, how often a subject is approved at its
//! first review and eventually, how many reviews an approval takes, how
//! many tasks failed at `review.max_revisions`, what stood in the way most
//! often, tokens, cost at the configured prices, and how long reviews take;
//! the same per feature and per ISO week.
//!
//! A review counts in the week and feature of its line. A subject (a task,
//! a defect, a branch) counts in its feature and in the week of its first
//! review in the lines read, and its figures follow its decided reviews in
//! the order written: the first decides "approved at first review"; the
//! last judgement, a review's or a person's (`speed approve`, `speed
//! reject`; an override accepts work, it judges none), "approved
//! eventually" when it is an approval that stands (a model's approval a
//! person must still confirm is not yet one); the decided reviews up to that approval "reviews to
//! approval"; the last task status a line left "failed at max_revisions".
//! Failed reviews (no decision) count as reviews, with their tokens and
//! time, but decide nothing. Lines of older speeds without `blocking` give
//! the reasons they can: their overrules and the guardian's outcome.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::ledger::blocking::Reason;
use crate::ledger::history::{Entry, Kind, Subject};

use super::calendar;

/// The key of reviews and subjects that belong to no feature.
pub const NO_FEATURE: &str = "(none)";

/// `[llm] price_input_per_mtok` and `price_output_per_mtok`, with the
/// discounts for cached input and batches.
pub type Prices = crate::llm::cost::Prices;

/// Everything `speed stats --format json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    #[serde(flatten)]
    pub all: Summary,
    pub by_feature: BTreeMap<String, Summary>,
    /// Oldest first.
    pub by_week: Vec<Week>,
    /// Lines of the log that were not speed's.
    pub skipped_lines: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Week {
    /// `2026-W10`.
    pub week: String,
    /// Its Monday, `2026-03-02`.
    pub starts: String,
    #[serde(flatten)]
    pub summary: Summary,
}

/// The figures of one group of lines.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub reviews: usize,
    pub subjects: usize,
    pub approval_rate: ApprovalRate,
    pub mean_reviews_to_approval: Option<f64>,
    pub failed_at_max_revisions: usize,
    /// Most frequent first: the number of decided reviews each stood in.
    pub blocking_reasons: Vec<ReasonCount>,
    pub tokens: Tokens,
    /// None when no prices are configured.
    pub cost: Option<Cost>,
    pub duration_ms: Durations,
    /// Every line by its decision (`failed` for a review that failed),
    /// overrides and a person's decisions included.
    pub decisions: BTreeMap<String, usize>,
    pub failed_reviews: usize,
}

/// Fractions of the subjects with a decided review, 0 to 1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ApprovalRate {
    pub first_review: Option<f64>,
    pub eventual: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReasonCount {
    pub kind: String,
    pub name: String,
    pub count: usize,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    /// The parts of `input` the providers read from and wrote to their
    /// prompt caches.
    pub cache_read: u64,
    pub cache_write: u64,
    pub per_review: PerReview,
    /// Reviews whose provider reported no usage (a command such as
    /// `claude -p`): their figures are speed's own count of what was sent
    /// and answered (an older line's: of the prompt only, output 0).
    pub estimated_reviews: usize,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PerReview {
    pub input: f64,
    pub output: f64,
}

/// In the prices' currency: each line's cost as it recorded it (its cache
/// and batch discounts applied), or, on a line that recorded none, its
/// tokens at the configured prices. Lines record their cost, so it is
/// known even when the prices are no longer configured; then the lines
/// that recorded none are counted in `unpriced`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cost {
    pub input: f64,
    pub output: f64,
    pub total: f64,
    pub per_review: f64,
    /// The configured prices, if any.
    pub prices: Option<Prices>,
    /// Reviews with no recorded cost and no prices to reckon it by.
    pub unpriced: usize,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Durations {
    pub p50: Option<u64>,
    pub p90: Option<u64>,
}

/// One line as the figures need it.
struct Line {
    feature: usize,
    /// The Monday of its week, in days since the epoch.
    week: i64,
    decision: usize,
    kind: Kind,
    tokens: (u64, u64),
    /// speed's own count of the prompt, on an older line whose provider
    /// reported no usage at all (else 0: a newer line's figures are
    /// speed's count already, `counted_by: "speed"`).
    counted: u64,
    /// Its figures are speed's count, not the provider's.
    estimated: bool,
    /// Read from and written to the prompt cache.
    cache: (u64, u64),
    /// As the line recorded it.
    cost: Option<crate::llm::cost::Cost>,
    duration: Option<u64>,
    reasons: Vec<usize>,
}

/// One subject as the figures need it.
#[derive(Default)]
struct Facts {
    feature: usize,
    first_week: i64,
    decided: usize,
    first_approved: Option<bool>,
    /// Approved at the end: the last decision, whoever made it (a
    /// review, a person, an override), is an approval that stands.
    approved_now: bool,
    /// Decided reviews up to that approval.
    approved_after: Option<usize>,
    last_status: Option<String>,
}

/// Lines added one by one (the log is read once), figures at the end.
#[derive(Default)]
pub struct Tally {
    lines: Vec<Line>,
    subjects: HashMap<Subject, Facts>,
    features: Intern<String>,
    decisions: Intern<String>,
    reasons: Intern<Reason>,
}

/// Each distinct value once, by number.
struct Intern<T> {
    ids: HashMap<T, usize>,
    values: Vec<T>,
}

impl<T> Default for Intern<T> {
    fn default() -> Self {
        Intern {
            ids: HashMap::new(),
            values: Vec::new(),
        }
    }
}

impl<T: std::hash::Hash + Eq + Clone> Intern<T> {
    /// Its number; a value is copied only the first time it is seen (this
    /// runs for every line of a long log).
    fn id<Q>(&mut self, value: &Q) -> usize
    where
        T: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ToOwned<Owned = T> + ?Sized,
    {
        if let Some(id) = self.ids.get(value) {
            return *id;
        }
        let id = self.values.len();
        self.values.push(value.to_owned());
        self.ids.insert(value.to_owned(), id);
        id
    }
}

impl Tally {
    pub fn add(&mut self, entry: Entry) {
        let kind = entry.kind();
        let feature = self.features.id(entry
            .feature
            .as_deref()
            .filter(|f| !f.is_empty())
            .unwrap_or(NO_FEATURE));
        let week = calendar::iso_week(calendar::day_of(entry.time)).1;
        let decision = self.decisions.id(entry.decision_word());
        let reasons = match (kind, &entry.blocking) {
            (Kind::Decided, Some(reasons)) => reasons.iter().map(|r| self.reasons.id(r)).collect(),
            (Kind::Decided, None) => older_reasons(&entry)
                .iter()
                .map(|r| self.reasons.id(r))
                .collect(),
            _ => Vec::new(),
        };
        // A review makes a subject; a person's word or an override
        // changes one that was reviewed.
        let facts = match kind {
            Kind::Other => self.subjects.get_mut(&entry.subject()),
            _ => Some(
                self.subjects
                    .entry(entry.subject())
                    .or_insert_with(|| Facts {
                        feature,
                        first_week: week,
                        ..Facts::default()
                    }),
            ),
        };
        if let Some(facts) = facts {
            if kind == Kind::Decided {
                facts.decided += 1;
                facts.first_approved.get_or_insert(entry.approved());
            }
            match entry.approves() {
                Some(true) => {
                    if !facts.approved_now {
                        facts.approved_after = Some(facts.decided);
                    }
                    facts.approved_now = true;
                }
                Some(false) => {
                    facts.approved_now = false;
                    facts.approved_after = None;
                }
                None => {}
            }
            if let Some(status) = entry.task_status.clone() {
                facts.last_status = Some(status);
            }
        }
        self.lines.push(Line {
            feature,
            week,
            decision,
            kind,
            tokens: (entry.tokens.prompt, entry.tokens.completion),
            counted: match (entry.tokens.prompt, entry.tokens.completion) {
                (0, 0) => entry.tokens.counted,
                _ => 0,
            },
            estimated: entry.tokens.counted_by.as_deref() == Some("speed")
                || ((entry.tokens.prompt, entry.tokens.completion) == (0, 0)
                    && entry.tokens.counted > 0),
            cache: (entry.tokens.cache_read, entry.tokens.cache_write),
            cost: entry.cost,
            duration: entry.duration_ms,
            reasons,
        });
    }

    pub fn finish(self, prices: Option<Prices>, skipped_lines: usize) -> Stats {
        let facts: Vec<&Facts> = self.subjects.values().collect();
        let summarize = |lines: &[&Line], subjects: &[&Facts]| {
            summary(lines, subjects, prices, &self.decisions, &self.reasons)
        };
        let lines: Vec<&Line> = self.lines.iter().collect();
        let all = summarize(&lines, &facts);
        // Grouped in one pass each: a log of many features or weeks costs
        // no more than one of few.
        let mut feature_lines: Vec<Vec<&Line>> = vec![Vec::new(); self.features.values.len()];
        let mut feature_facts: Vec<Vec<&Facts>> = vec![Vec::new(); self.features.values.len()];
        let mut week_lines: BTreeMap<i64, (Vec<&Line>, Vec<&Facts>)> = BTreeMap::new();
        for line in &lines {
            feature_lines[line.feature].push(line);
            week_lines.entry(line.week).or_default().0.push(line);
        }
        for f in &facts {
            feature_facts[f.feature].push(f);
            week_lines.entry(f.first_week).or_default().1.push(f);
        }
        let by_feature = self
            .features
            .values
            .iter()
            .enumerate()
            .map(|(id, name)| {
                (
                    name.clone(),
                    summarize(&feature_lines[id], &feature_facts[id]),
                )
            })
            .collect();
        let by_week = week_lines
            .into_iter()
            .map(|(monday, (lines, subjects))| Week {
                week: calendar::iso_week(monday).0,
                starts: calendar::date(monday),
                summary: summarize(&lines, &subjects),
            })
            .collect();
        Stats {
            all,
            by_feature,
            by_week,
            skipped_lines,
        }
    }
}

/// What stood in the way of a decided review of an older speed, which did
/// not record `blocking`: what its overrules and guardian say.
fn older_reasons(entry: &Entry) -> Vec<Reason> {
    let mut out: Vec<Reason> = entry
        .overrules
        .iter()
        .map(|rule| Reason {
            kind: "overrule".to_string(),
            name: rule.clone(),
        })
        .collect();
    if let Some(status @ ("rejected" | "flagged")) = entry.guardian.as_deref() {
        out.push(Reason {
            kind: "guardian".to_string(),
            name: status.to_string(),
        });
    }
    out.sort();
    out.dedup();
    out
}

/// What the reviews cost: each line's recorded cost, else its tokens at
/// `prices`. None when nothing is known (no prices, no recorded cost).
fn cost(reviews: &[&&Line], prices: Option<Prices>) -> Option<Cost> {
    if prices.is_none() && !reviews.iter().any(|l| l.cost.is_some()) {
        return None;
    }
    let mut unpriced = 0;
    let spent = reviews
        .iter()
        .fold(crate::llm::cost::Cost::default(), |sum, l| {
            let line = l.cost.or_else(|| {
                let usage = crate::llm::cost::Usage {
                    input: l.tokens.0,
                    output: l.tokens.1,
                    cache_read: l.cache.0,
                    cache_write: l.cache.1,
                    batch: false,
                };
                prices.map(|p| crate::llm::cost::cost(&usage, &p))
            });
            match line {
                Some(line) => sum.plus(line),
                None => {
                    unpriced += 1;
                    sum
                }
            }
        });
    let total = spent.input + spent.output;
    Some(Cost {
        input: round(spent.input, 6),
        output: round(spent.output, 6),
        total: round(total, 6),
        // Over the reviews whose cost is known.
        per_review: match reviews.len() - unpriced {
            0 => 0.0,
            priced => round(total / priced as f64, 6),
        },
        prices,
        unpriced,
    })
}

fn summary(
    lines: &[&Line],
    subjects: &[&Facts],
    prices: Option<Prices>,
    decisions: &Intern<String>,
    reasons: &Intern<Reason>,
) -> Summary {
    let reviews: Vec<&&Line> = lines.iter().filter(|l| l.kind != Kind::Other).collect();
    let decided: Vec<&&Facts> = subjects.iter().filter(|f| f.decided > 0).collect();
    let approved: Vec<usize> = decided
        .iter()
        .filter(|f| f.approved_now)
        .filter_map(|f| f.approved_after)
        .collect();
    let share = |n: usize| (!decided.is_empty()).then(|| round(n as f64 / decided.len() as f64, 4));

    let mut counts: HashMap<usize, usize> = HashMap::new();
    for line in &reviews {
        for id in &line.reasons {
            *counts.entry(*id).or_default() += 1;
        }
    }
    let mut blocking_reasons: Vec<ReasonCount> = counts
        .iter()
        .map(|(id, n)| ReasonCount {
            kind: reasons.values[*id].kind.clone(),
            name: reasons.values[*id].name.clone(),
            count: *n,
        })
        .collect();
    blocking_reasons.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| (&a.kind, &a.name).cmp(&(&b.kind, &b.name)))
    });

    let input: u64 = reviews.iter().map(|l| l.tokens.0 + l.counted).sum();
    let output: u64 = reviews.iter().map(|l| l.tokens.1).sum();
    let per = |total: u64| {
        if reviews.is_empty() {
            0.0
        } else {
            round(total as f64 / reviews.len() as f64, 1)
        }
    };
    let cost = cost(&reviews, prices);

    let mut durations: Vec<u64> = reviews.iter().filter_map(|l| l.duration).collect();
    durations.sort_unstable();
    let mut by_decision = BTreeMap::new();
    for line in lines {
        *by_decision
            .entry(decisions.values[line.decision].clone())
            .or_insert(0) += 1;
    }
    Summary {
        reviews: reviews.len(),
        subjects: subjects.len(),
        approval_rate: ApprovalRate {
            first_review: share(
                decided
                    .iter()
                    .filter(|f| f.first_approved == Some(true))
                    .count(),
            ),
            eventual: share(approved.len()),
        },
        mean_reviews_to_approval: (!approved.is_empty()).then(|| {
            round(
                approved.iter().sum::<usize>() as f64 / approved.len() as f64,
                2,
            )
        }),
        failed_at_max_revisions: subjects
            .iter()
            .filter(|f| f.last_status.as_deref() == Some("failed"))
            .count(),
        blocking_reasons,
        tokens: Tokens {
            input,
            output,
            cache_read: reviews.iter().map(|l| l.cache.0).sum(),
            cache_write: reviews.iter().map(|l| l.cache.1).sum(),
            per_review: PerReview {
                input: per(input),
                output: per(output),
            },
            estimated_reviews: reviews.iter().filter(|l| l.estimated).count(),
        },
        cost,
        duration_ms: Durations {
            p50: percentile(&durations, 50),
            p90: percentile(&durations, 90),
        },
        decisions: by_decision,
        failed_reviews: reviews.iter().filter(|l| l.kind == Kind::Failed).count(),
    }
}

/// The nearest-rank percentile of sorted values.
fn percentile(sorted: &[u64], p: usize) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    Some(sorted[rank - 1])
}

fn round(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::history::scan_reader;
    use std::path::Path;

    fn stats(log: &str, prices: Option<Prices>) -> Stats {
        let mut tally = Tally::default();
        let scanned =
            scan_reader(log.as_bytes(), Path::new("log"), |l| tally.add(l.entry)).unwrap();
        tally.finish(prices, scanned.skipped)
    }

    /// Task 1 approved at once; task 2 sent back twice (the second time
    /// failing at max_revisions), then approved after a person's override;
    /// a branch review that failed; a torn line.
    const LOG: &str = r#"{"at":"2026-03-02T10:00:00Z","task":"1","feature":"cat","decision":"approve","tokens":{"prompt":1000,"completion":100},"duration_ms":1000,"blocking":[{"kind":"guardian","name":"flagged"}]}
{"at":"2026-03-02T11:00:00Z","task":"2","feature":"cat","decision":"request_changes","tokens":{"prompt":2000,"completion":200},"duration_ms":3000,"overrules":["check_failed"],"guardian":"rejected"}
{"at":"2026-03-10T09:00:00Z","task":"2","feature":"cat","decision":"request_changes","tokens":{"prompt":2000,"completion":200},"duration_ms":5000,"blocking":[{"kind":"check","name":"scope"},{"kind":"overrule","name":"check_failed"}],"task_status":"failed","revision_count":3}
{"at":"2026-03-10T09:30:00Z","task":"2","feature":"cat","decision":"override","by":"ann","reason":"fine"}
{"at":"2026-03-10T10:00:00Z","branch":"x","decision":null,"error":"unreachable","tokens":{"prompt":0,"completion":0},"duration_ms":9000}
{"at":"2026-03-10T10:0
"#;

    #[test]
    fn approved_eventually_is_the_last_judgement_a_review_or_a_person_made() {
        // 1: approved, then rejected at a new head (pending); 2: approved,
        // waiting for a person, who rejects it (failed); 3: waiting, then
        // confirmed; 4: rejected once, then approved.
        let log = r#"{"at":"2026-03-02T10:00:00Z","task":"1","decision":"approve"}
{"at":"2026-03-02T11:00:00Z","task":"1","decision":"request_changes","task_status":"pending"}
{"at":"2026-03-02T10:00:00Z","task":"2","decision":"approve","human_review":"pending"}
{"at":"2026-03-02T10:05:00Z","task":"2","decision":"human_reject","task_status":"failed","revision_count":3}
{"at":"2026-03-02T10:00:00Z","task":"3","decision":"approve","human_review":"pending"}
{"at":"2026-03-02T10:05:00Z","task":"3","decision":"human_approve"}
{"at":"2026-03-02T10:00:00Z","task":"4","decision":"request_changes","task_status":"pending"}
{"at":"2026-03-02T11:00:00Z","task":"4","decision":"approve"}
"#;
        let all = stats(log, None).all;
        assert_eq!(all.subjects, 4);
        assert_eq!(all.approval_rate.eventual, Some(0.5), "tasks 3 and 4");
        assert_eq!(
            all.approval_rate.first_review,
            Some(0.75),
            "the first review's verdict: tasks 1, 2, 3"
        );
        assert_eq!(all.mean_reviews_to_approval, Some(1.5), "(1 + 2) / 2");
        assert_eq!(all.failed_at_max_revisions, 1);
    }

    #[test]
    fn a_defect_counts_under_the_feature_its_line_names() {
        let log = r#"{"at":"2026-03-02T10:00:00Z","defect":"crash","feature":"cat","decision":"approve"}
"#;
        let s = stats(log, None);
        assert_eq!(s.by_feature["cat"].subjects, 1);
        assert!(!s.by_feature.contains_key(NO_FEATURE));
    }

    #[test]
    fn speeds_count_stands_in_only_for_a_line_with_no_usage_at_all() {
        let log = r#"{"at":"2026-03-02T10:00:00Z","task":"1","decision":"approve","tokens":{"prompt":0,"completion":0,"counted":3000}}
{"at":"2026-03-02T11:00:00Z","task":"2","decision":"approve","tokens":{"prompt":1000,"completion":100,"counted":900}}
{"at":"2026-03-02T12:00:00Z","task":"3","decision":"approve","tokens":{"prompt":0,"completion":0}}
"#;
        let t = stats(log, None).all.tokens;
        assert_eq!((t.input, t.output, t.estimated_reviews), (4000, 100, 1));
    }

    #[test]
    fn a_recorded_cost_is_summed_as_recorded_and_cached_tokens_are_counted() {
        let log = r#"{"at":"2026-03-02T10:00:00Z","task":"1","decision":"approve","tokens":{"prompt":10000,"completion":1000,"cache_read":8000,"cache_write":0},"cost":{"input":0.0042,"output":0.0075,"total":0.0117}}
{"at":"2026-03-02T11:00:00Z","task":"2","decision":"approve","tokens":{"prompt":10000,"completion":1000,"cache_read":8000,"cache_write":0}}
"#;
        let prices = Prices {
            input_per_mtok: 3.0,
            output_per_mtok: 15.0,
            cache_read_discount: 0.9,
            batch_discount: 0.5,
        };
        let s = stats(log, Some(prices));
        assert_eq!(
            (s.all.tokens.cache_read, s.all.tokens.cache_write),
            (16000, 0)
        );
        let cost = s.all.cost.unwrap();
        // The first line's own (a batch's, say); the second priced now:
        // 2,000 fresh at 3.0, 8,000 cached at 0.3, 1,000 out at 15.0.
        let second = (2000.0 * 3.0 + 8000.0 * 0.3 + 1000.0 * 15.0) / 1e6;
        assert!((cost.total - (0.0117 + second)).abs() < 1e-9, "{cost:?}");
        assert_eq!((cost.prices, cost.unpriced), (Some(prices), 0));

        // The prices no longer configured: what the lines recorded still
        // counts, and the line that recorded nothing is counted apart.
        let cost = stats(log, None).all.cost.unwrap();
        assert_eq!((cost.total, cost.prices, cost.unpriced), (0.0117, None, 1));
        assert_eq!(cost.per_review, 0.0117);
    }

    #[test]
    fn figures_follow_the_lines() {
        let prices = Prices {
            input_per_mtok: 3.0,
            output_per_mtok: 15.0,
            cache_read_discount: 0.9,
            batch_discount: 0.5,
        };
        let s = stats(LOG, Some(prices));
        assert_eq!(s.skipped_lines, 1);
        let all = &s.all;
        assert_eq!((all.reviews, all.subjects, all.failed_reviews), (4, 3, 1));
        assert_eq!(all.approval_rate.first_review, Some(0.5));
        assert_eq!(
            all.approval_rate.eventual,
            Some(0.5),
            "an override is no approval"
        );
        assert_eq!(all.mean_reviews_to_approval, Some(1.0));
        assert_eq!(all.failed_at_max_revisions, 1);
        let reasons: Vec<(&str, &str, usize)> = all
            .blocking_reasons
            .iter()
            .map(|r| (r.kind.as_str(), r.name.as_str(), r.count))
            .collect();
        assert_eq!(
            reasons,
            [
                ("overrule", "check_failed", 2),
                ("check", "scope", 1),
                ("guardian", "flagged", 1),
                ("guardian", "rejected", 1)
            ]
        );
        assert_eq!((all.tokens.input, all.tokens.output), (5000, 500));
        assert_eq!(all.tokens.per_review.input, 1250.0);
        let cost = all.cost.unwrap();
        assert_eq!(cost.total, 0.0225);
        assert_eq!(cost.per_review, 0.005625);
        assert_eq!(
            (all.duration_ms.p50, all.duration_ms.p90),
            (Some(3000), Some(9000))
        );
        assert_eq!(all.decisions["override"], 1);
        assert_eq!(all.decisions["failed"], 1);

        let cat = &s.by_feature["cat"];
        assert_eq!((cat.reviews, cat.subjects), (3, 2));
        assert_eq!(s.by_feature[NO_FEATURE].reviews, 1);
        let weeks: Vec<(&str, &str, usize, usize)> = s
            .by_week
            .iter()
            .map(|w| {
                (
                    w.week.as_str(),
                    w.starts.as_str(),
                    w.summary.reviews,
                    w.summary.subjects,
                )
            })
            .collect();
        assert_eq!(
            weeks,
            [
                ("2026-W10", "2026-03-02", 2, 2),
                ("2026-W11", "2026-03-09", 2, 1)
            ]
        );
    }

    #[test]
    fn no_prices_no_cost_and_an_empty_log_has_no_rates() {
        let s = stats("", None);
        assert_eq!(s.all.reviews, 0);
        assert_eq!(s.all.approval_rate, ApprovalRate::default());
        assert_eq!(s.all.cost, None);
        assert_eq!(s.all.duration_ms, Durations::default());
        assert!(s.by_week.is_empty());
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<u64> = (1..=10).collect();
        assert_eq!(percentile(&v, 50), Some(5));
        assert_eq!(percentile(&v, 90), Some(9));
        assert_eq!(percentile(&[7], 90), Some(7));
    }
}
