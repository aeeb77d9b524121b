//! speed: a git-native spec-alignment reviewer.
//!
//! The parts, lowest first; a part imports only parts below it, which
//! `tests/it/layers.rs` checks from the code's own paths:
//!
//! - `severity`, `digest`, `exit`, `memory`, `paths`, `interrupt`: words and
//!   small facilities every part shares; `fsx` (every write, confined to
//!   `.speed/`) and `process` (children in their own group, capped, timed);
//! - `git`, `specs`, `secrets`, `tasks`: the repository, the spec, secrets
//!   redaction, the orchestrator's task files, as plain data;
//! - `syntax`, the one tree-sitter front end (languages, grammars, parsers)
//!   under `impact` (the blast radius) and `checks` (speed's own findings),
//!   `defects` (the orchestrator's defect folders and a fix's facts);
//! - `prompt` turns data into budgeted text, `llm` text into text, `verdict`
//!   text into a checked answer;
//! - `spec_review`: the spec review loop (speed's spec checks, the model's
//!   scores, the reviser, the session), on `prompt`, `llm` and `verdict`;
//! - `work` (the subject of a review and its diff) and `ledger` (reports,
//!   the log, the verdict cache, overrides), below both `review` and `hook`;
//! - `history` reads the ledger back (a subject's log lines, statistics,
//!   the diff a saved report was about); `fixes` (the fix queue a review's
//!   findings become, and `speed fix run`'s agent in a temporary worktree)
//!   stands above it, below `review`;
//! - `review` (the pipeline as named stages, deciding in one place) and
//!   `hook` (the merge gate);
//! - `render` prints reports, `cli` holds the clap types, `settings`
//!   resolves flags, environment and config into each part's own
//!   configuration, `onboard` (`speed init`, `speed doctor`) judges what
//!   settings resolved, `app` runs a command and is the only place that prints;
//!   `main` the only place that exits.

pub mod app;
pub mod checks;
pub mod cli;
pub mod defects;
pub mod digest;
pub mod exit;
pub mod fixes;
pub mod fsx;
pub mod git;
pub mod history;
pub mod hook;
pub mod impact;
pub mod interrupt;
pub mod ledger;
pub mod llm;
pub mod memory;
pub mod numbers;
pub mod onboard;
pub mod paths;
pub mod process;
pub mod prompt;
pub mod render;
pub mod review;
pub mod secrets;
pub mod settings;
pub mod severity;
pub mod spec_review;
pub mod specs;
pub mod syntax;
pub mod tasks;
pub mod verdict;
pub mod work;
