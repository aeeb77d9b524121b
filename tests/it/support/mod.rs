//! Shared helpers for the integration tests: running the real `speed` binary
//! with a scrubbed environment (`speed`), and a loopback HTTP server that
//! plays the model (`model_server`).
#![allow(dead_code, unused_imports)]

pub mod batch_api;
pub mod git;
pub mod model_server;
pub mod repo;
pub mod runner;
pub mod speed;
pub mod verdicts;
