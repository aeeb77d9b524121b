//! The integration tests, in one binary: each `tests/*.rs` file would be a
//! separate crate linking the whole library again, which was most of a fresh
//! `cargo test`'s time. One module per area.

mod support;

mod batch;
mod breaking_rows;
mod budget;
mod check_runs;
mod checks;
mod ci;
mod code_checks;
mod config;
mod daemons;
mod defects;
mod docs;
mod dry_run;
mod error_discarded;
mod example_repo;
mod fixes;
mod formats;
mod gate;
mod guardian;
mod hardening;
mod history;
mod hooks;
mod human;
mod impact_fixtures;
mod impact_review;
mod incremental;
mod integrity;
mod layers;
mod lifecycle;
mod llm_providers;
mod merged;
mod notes;
mod onboard;
mod orchestrator;
mod pages;
mod parse_once;
mod parts;
mod parts_report;
mod provider_batch;
mod quality;
mod reconcile;
mod record;
mod release;
mod review;
mod safety_net;
mod schemas;
mod spec_review;
mod spec_rules;
mod specs_in_practice;
mod terminal;
mod test_weakened;
mod tool_checks;
mod trees;
