//! Shared helpers for the integration tests: running the real `speed` binary
//! with a scrubbed environment, and (in `model_server`) a loopback HTTP server
//! that plays the model.
#![allow(dead_code)]

pub mod speed;
