//! A spec review's session, `.speed/spec-reviews/<feature>.json`, read for
//! `speed show --spec FEATURE`. `speed spec review` writes it; this only
//! reads it, as a JSON object (its shape is the contract's "Spec review";
//! the printers read it leniently).

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use crate::ledger::{self, Error};

pub const SESSIONS_DIR: &str = ".speed/spec-reviews";

/// The largest session read; one holds a few iterations of feedback.
const MAX_BYTES: u64 = 64 << 20;

/// The session of `feature` and its path relative to the root.
pub fn load(root: &Path, feature: &str) -> Result<(Value, String), Error> {
    let relative = format!("{SESSIONS_DIR}/{feature}.json");
    let path = root.join(&relative);
    let input = |message: String| Error::Input {
        path: path.clone(),
        message,
    };
    let plain = !feature.is_empty()
        && !feature.starts_with('.')
        && feature
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !plain {
        return Err(Error::NotReviewed(format!(
            "{feature:?} is not a feature name (letters, digits, '-', '_' and '.'), so it has no spec review session"
        )));
    }
    let Some(file) = ledger::open_own(root, &path)? else {
        return Err(Error::NotReviewed(format!(
            "feature {feature} has no spec review session ({relative} does not exist; `speed spec review {feature}` makes it)"
        )));
    };
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| input(format!("cannot read it: {e}")))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(input(format!(
            "this session no longer parses: larger than {} MiB",
            MAX_BYTES >> 20
        )));
    }
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| input(format!("this session no longer parses: {e}")))?;
    if !value.is_object() {
        return Err(input(
            "this session no longer parses: not a JSON object".to_string(),
        ));
    }
    Ok((value, relative))
}
