//! `[dimensions.*]` and `review.pass_score` resolved into the review's
//! `verdict::Scoring`: the built-in dimensions with what the file changes
//! of them, then the custom ones in the file's order, each value recorded
//! with its source for `speed config`.

use super::file;
use super::{Recorder, Source};
use crate::verdict::dimensions::{self, Dimension, Scoring};

pub(super) fn scoring(r: &mut Recorder, f: &file::File) -> Scoring {
    let pass_score = r.file(
        "review.pass_score",
        f.review.pass_score,
        dimensions::DEFAULT_PASS_SCORE,
    );
    let mut all: Vec<Dimension> = dimensions::builtin();
    for set in &f.dimensions {
        if !all.iter().any(|d| d.name == set.name) {
            all.push(Dimension {
                name: set.name.clone(),
                weight: dimensions::MODERATE,
                min_score: None,
                description: String::new(),
                enabled: true,
            });
        }
    }
    for d in &mut all {
        let set = f.dimensions.iter().find(|s| s.name == d.name);
        let key = |k: &str| format!("dimensions.{}.{k}", d.name);
        d.enabled = r.file(&key("enabled"), set.and_then(|s| s.enabled), d.enabled);
        d.weight = r.file(&key("weight"), set.and_then(|s| s.weight), d.weight);
        d.min_score = r.file(
            &key("min_score"),
            set.and_then(|s| s.min_score).map(Some),
            d.min_score,
        );
        let description = set.and_then(|s| s.description.clone());
        let source = match description {
            Some(_) => r.file.clone(),
            None => Source::Default,
        };
        if let Some(text) = description {
            d.description = text;
        }
        r.record(&key("description"), &d.description, source);
    }
    Scoring {
        dimensions: all,
        pass_score,
    }
}
