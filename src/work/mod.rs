//! The subject of a review and its diff: what is reviewed (a task, a
//! branch with its specs and criteria, the fix of a defect), which piece of
//! work the merge gate knows it by, and the branch, base and diff resolved
//! from git objects (stacked on an unmerged dependency's head when the
//! branch builds on one).
//!
//! Both `review` and `hook` stand on this; it knows nothing of prompts,
//! models or verdicts, and writes nothing.

mod resolve;
mod standing;

use std::path::PathBuf;

use crate::defects::{self, Defect};
use crate::tasks::{self, Criterion, Task};

pub use resolve::{Resolved, resolve};
pub use standing::{Merged, NOTHING_IMPLEMENTED, Standing, holds_already, reviewed_head, standing};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Git(#[from] crate::git::Error),
    #[error("{subject}: {source}")]
    BranchMissing {
        subject: String,
        branch: String,
        source: Box<crate::git::Error>,
    },
}

/// What to review.
#[derive(Debug, Clone)]
pub enum Subject {
    Task(Box<Task>),
    Branch {
        branch: String,
        /// `PATH[#Section]` as given on the command line.
        specs: Vec<String>,
        criteria: Vec<Criterion>,
        /// The file the criteria were read from (`--criteria`).
        criteria_file: Option<PathBuf>,
    },
    /// The fix of a defect, on the branch its state names.
    Defect(Box<DefectReview>),
}

impl Subject {
    /// "task 3" or "branch feature/x", for messages.
    pub fn label(&self) -> String {
        match self {
            Subject::Task(task) => format!("task {}", task.id),
            Subject::Branch { branch, .. } => format!("branch {branch}"),
            Subject::Defect(review) => review.defect.label(),
        }
    }

    pub fn task(&self) -> Option<&Task> {
        match self {
            Subject::Task(task) => Some(task),
            Subject::Branch { .. } | Subject::Defect(_) => None,
        }
    }

    /// The piece of work the merge gate knows this subject by; None for a
    /// branch reviewed without a task.
    pub fn work(&self) -> Option<Work> {
        match self {
            Subject::Task(task) => Some(Work::of_task(task)),
            Subject::Defect(review) => Some(Work::Defect {
                name: review.defect.name.clone(),
            }),
            Subject::Branch { .. } => None,
        }
    }

    pub fn defect(&self) -> Option<&DefectReview> {
        match self {
            Subject::Defect(review) => Some(review),
            Subject::Task(_) | Subject::Branch { .. } => None,
        }
    }

    /// The branch under review.
    pub fn branch(&self) -> &str {
        match self {
            Subject::Task(task) => &task.branch,
            Subject::Branch { branch, .. } => branch,
            Subject::Defect(review) => &review.defect.branch,
        }
    }

    /// The declared file scope: a task's, or the triage's affected files
    /// of a defect (a branch has none).
    pub fn scope(&self) -> tasks::Scope {
        match self {
            Subject::Defect(review) => tasks::Scope {
                modify: review.defect.triage.affected_files.clone(),
                ..tasks::Scope::default()
            },
            _ => self.task().map(|t| t.scope.clone()).unwrap_or_default(),
        }
    }

    /// The acceptance criteria as the prompt lists them.
    pub fn criteria(&self) -> &[Criterion] {
        match self {
            Subject::Task(task) => &task.criteria,
            Subject::Branch { criteria, .. } => criteria,
            Subject::Defect(review) => &review.criteria,
        }
    }
}

/// A defect to review, with what the review was asked to do with it.
#[derive(Debug, Clone)]
pub struct DefectReview {
    pub defect: Defect,
    /// The defect-fix criteria, as the prompt lists them and the verdict
    /// must rate them.
    pub criteria: Vec<Criterion>,
    /// `--update-state`.
    pub update_state: bool,
}

impl DefectReview {
    pub fn new(defect: Defect, update_state: bool) -> DefectReview {
        let criteria = defects::CRITERIA
            .iter()
            .map(|(id, text)| Criterion {
                id: id.to_string(),
                text: text.to_string(),
                verify_by: None,
            })
            .collect();
        DefectReview {
            defect,
            criteria,
            update_state,
        }
    }
}

/// The piece of work a verdict is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Work {
    Task { id: String, feature: Option<String> },
    Defect { name: String },
}

impl Work {
    pub fn of_task(task: &Task) -> Work {
        Work::Task {
            id: task.id.clone(),
            feature: task.feature.clone(),
        }
    }

    /// "task 3 (feature catalog)", "task 3", "defect login-crash".
    pub fn label(&self) -> String {
        match self {
            Work::Task {
                id,
                feature: Some(feature),
            } => format!("task {id} (feature {feature})"),
            Work::Task { id, feature: None } => format!("task {id}"),
            Work::Defect { name } => format!("defect {name}"),
        }
    }
}
