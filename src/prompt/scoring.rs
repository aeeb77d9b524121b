//! What decides, as the instructions state it: each quality dimension the
//! review rates, with its weight and its minimum beside what it covers, and
//! the pass score the weighted overall is held to. A reviewer that knows
//! the thresholds gives scores and a verdict that agree the first time
//! (a `test_quality` of 68 under a minimum of 70 is not an approval, and
//! the model is told so before it answers, not after).
//!
//! Pure text from plain data: the pipeline resolves the configuration.

/// The dimensions a review asks to be rated, and the pass score.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scoring {
    pub dimensions: Vec<Rating>,
    /// `review.pass_score`: the weighted overall must reach it.
    pub pass_score: u32,
}

/// One dimension as the prompt states it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rating {
    pub name: String,
    /// What it covers; may be empty (a custom dimension without one).
    pub description: String,
    pub weight: u32,
    /// None: no minimum.
    pub min_score: Option<u32>,
}

impl Scoring {
    /// The text of the instructions' step on dimensions: how to rate, what
    /// speed holds the scores to, then one line per dimension.
    pub fn render(&self) -> String {
        if self.dimensions.is_empty() {
            return "`dimensions`: none is rated in this review.".to_string();
        }
        let mut out = format!(
            "`dimensions`: rate every dimension below with an integer `score` from 0 to 100 and a one-line `reason`, and name in an issue's `dimension` the one it bears on. speed holds each score to its minimum and the weighted overall to {} (review.pass_score): under either, an approval is overruled. Rate what you saw: a score under its minimum means you request changes and name the blocking issue.",
            self.pass_score
        );
        for d in &self.dimensions {
            let minimum = match d.min_score {
                Some(min) => format!("minimum {min}"),
                None => "no minimum".to_string(),
            };
            let description = one_line(&d.description);
            out.push_str(&format!(
                "\n   - {} (weight {}, {minimum})",
                d.name, d.weight
            ));
            if !description.is_empty() {
                out.push_str(": ");
                out.push_str(&description);
            }
        }
        out
    }

    /// The texts the prompt shows, for choosing a fence tag none holds.
    pub(crate) fn texts(&self) -> impl Iterator<Item = &str> {
        self.dimensions
            .iter()
            .flat_map(|d| [d.name.as_str(), d.description.as_str()])
    }
}

/// A configured description on one line: a line break in it would read as
/// the start of another instruction.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rating(name: &str, weight: u32, min: Option<u32>, description: &str) -> Rating {
        Rating {
            name: name.into(),
            description: description.into(),
            weight,
            min_score: min,
        }
    }

    #[test]
    fn each_dimension_is_stated_with_its_minimum_and_the_pass_score_once() {
        let scoring = Scoring {
            dimensions: vec![
                rating(
                    "test_quality",
                    2,
                    Some(70),
                    "Tests validate\n the behaviour.",
                ),
                rating("security_performance", 1, None, ""),
            ],
            pass_score: 80,
        };
        let text = scoring.render();
        assert!(
            text.contains("weighted overall to 80 (review.pass_score)"),
            "{text}"
        );
        assert!(
            text.contains(
                "\n   - test_quality (weight 2, minimum 70): Tests validate the behaviour."
            ),
            "{text}"
        );
        assert!(
            text.ends_with("\n   - security_performance (weight 1, no minimum)"),
            "{text}"
        );
        assert_eq!(
            Scoring::default().render(),
            "`dimensions`: none is rated in this review."
        );
    }
}
