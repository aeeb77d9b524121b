//! Helpers shared by integration tests; each test crate includes them with
//! `mod support;` and uses what it needs.

pub mod model_server;
