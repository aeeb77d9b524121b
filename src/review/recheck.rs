//! speed's checks at another commit of a subject's branch, run as a review
//! runs them (the same diff base, the built-in checks, the command checks
//! with their base-commit confirmation) but with no model and nothing
//! recorded: how `speed fix run` looks for a finding again at the commit
//! an agent made.

use crate::checks::Finding;
use crate::work::Subject;

use super::Error;
use super::context::Context;
use super::decide;
use super::prepare::{self, Read};

/// The findings of speed's checks for `subject` with its branch at
/// `commit`.
pub fn checks_at(ctx: &Context, subject: Subject, commit: &str) -> Result<Vec<Finding>, Error> {
    let subject = at_commit(subject, commit);
    match prepare::read(ctx, subject)? {
        Read::NothingImplemented(empty) => {
            let (finding, _) = decide::nothing_implemented(ctx, &empty.subject, &empty.resolved);
            Ok(finding.into_iter().collect())
        }
        Read::Inputs(inputs) => Ok(prepare::prepare(ctx, *inputs)?.facts.checks),
    }
}

/// The subject with its branch replaced by a commit.
fn at_commit(subject: Subject, commit: &str) -> Subject {
    match subject {
        Subject::Task(mut task) => {
            task.branch = commit.to_string();
            Subject::Task(task)
        }
        Subject::Defect(mut review) => {
            review.defect.branch = commit.to_string();
            Subject::Defect(review)
        }
        Subject::Branch {
            specs,
            criteria,
            criteria_file,
            ..
        } => Subject::Branch {
            branch: commit.to_string(),
            specs,
            criteria,
            criteria_file,
        },
    }
}
