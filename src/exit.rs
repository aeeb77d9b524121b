//! Exit codes, chosen in one place. Scripts depend on these numbers (see the
//! contract's "Exit codes"); across a batch the most severe outcome wins.

/// The outcome of a command, from least to most severe for batch folding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every reviewed task approved, or nothing to review.
    Approved,
    /// At least one task: request_changes (a spec review: needs revision).
    ChangesRequested,
    /// A spec review is blocked: a person must act.
    Blocked,
    /// The model could not be reached or timed out, after retries.
    ModelUnreachable,
    /// The model's output stayed invalid after one corrective retry.
    InvalidOutput,
    /// Bad command-line usage.
    Usage,
    /// Bad input, configuration, git or I/O.
    Error,
}

impl Outcome {
    pub fn code(self) -> u8 {
        match self {
            Outcome::Approved => 0,
            Outcome::Error => 1,
            Outcome::Usage => 2,
            Outcome::ChangesRequested => 50,
            Outcome::Blocked => 51,
            Outcome::ModelUnreachable => 52,
            Outcome::InvalidOutput => 53,
        }
    }

    /// Severity for folding a batch: 1 > 53 > 52 > 51 > 50 > 0 (usage
    /// never occurs inside a batch but ranks with errors).
    fn severity(self) -> u8 {
        match self {
            Outcome::Approved => 0,
            Outcome::ChangesRequested => 1,
            Outcome::Blocked => 2,
            Outcome::ModelUnreachable => 3,
            Outcome::InvalidOutput => 4,
            Outcome::Usage => 5,
            Outcome::Error => 6,
        }
    }

    /// The more severe of two outcomes.
    pub fn worst(self, other: Outcome) -> Outcome {
        if other.severity() > self.severity() {
            other
        } else {
            self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Outcome::*;

    #[test]
    fn batch_folding_follows_the_contract_order() {
        let all = [
            Approved,
            ChangesRequested,
            ModelUnreachable,
            InvalidOutput,
            Error,
        ];
        let folded = all.iter().fold(Approved, |acc, o| acc.worst(*o));
        assert_eq!(folded.code(), 1);
        assert_eq!(ChangesRequested.worst(ModelUnreachable).code(), 52);
        assert_eq!(InvalidOutput.worst(ModelUnreachable).code(), 53);
        assert_eq!(ChangesRequested.worst(Approved).code(), 50);
        assert_eq!(Blocked.worst(ChangesRequested).code(), 51);
        assert_eq!(Blocked.worst(ModelUnreachable).code(), 52);
    }
}
