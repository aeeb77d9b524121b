//! speed: a git-native spec-alignment reviewer.
//!
//! The pipeline, lowest part first: `git`, `tasks`, `specs` and `impact` turn a
//! repository into plain data; `prompt` turns that data into budgeted text;
//! `llm` turns text into text; `verdict` turns text into a decision; `review`
//! orchestrates one task or a batch; `render` prints. `app` is the only place
//! that prints, `main` the only place that exits. A lower part never imports a
//! higher one.

pub mod app;
pub mod checks;
pub mod cli;
pub mod defects;
pub mod exit;
pub mod fsx;
pub mod git;
pub mod hook;
pub mod impact;
pub mod interrupt;
pub mod llm;
pub mod memory;
pub mod paths;
pub mod process;
pub mod prompt;
pub mod render;
pub mod review;
pub mod secrets;
pub mod settings;
pub mod specs;
pub mod syntax;
pub mod tasks;
pub mod verdict;
