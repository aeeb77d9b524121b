//! `[hook]`: how the git hooks decide. This part owns the type and the
//! contract's defaults; `settings` fills it from the config file.

use std::time::Duration;

use serde::Serialize;

/// The most a hook's own check may take; with `hook.review_on_miss`, the
/// review it runs too.
pub const DEFAULT_TIMEOUT_SECS: f64 = 60.0;
pub const DEFAULT_REVIEW_TIMEOUT_SECS: f64 = 900.0;
/// The most the user's own hook (`<name>.local`) may take.
pub const DEFAULT_LOCAL_TIMEOUT_SECS: f64 = 900.0;

/// `allow` or `block`, for `hook.unknown` and `hook.on_error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AllowOrBlock {
    Allow,
    Block,
}

/// `[hook]`: how the git hooks decide.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// On a head no approval covers, review it (a model call) instead of
    /// blocking at once.
    pub review_on_miss: bool,
    /// Commits that belong to no task.
    pub unknown: AllowOrBlock,
    /// When the hook itself fails (no repository state, unreadable task).
    pub on_error: AllowOrBlock,
    /// The most the hook's own check may take (a review on a miss too).
    pub timeout: Duration,
    /// The most the user's own hook (`<name>.local`) may take.
    pub local_timeout: Duration,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            review_on_miss: false,
            unknown: AllowOrBlock::Allow,
            on_error: AllowOrBlock::Block,
            timeout: Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS),
            local_timeout: Duration::from_secs_f64(DEFAULT_LOCAL_TIMEOUT_SECS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_contract() {
        let hook = Policy::default();
        assert!(!hook.review_on_miss);
        assert_eq!(
            (hook.unknown, hook.on_error),
            (AllowOrBlock::Allow, AllowOrBlock::Block)
        );
    }
}
