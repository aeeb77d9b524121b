//! prompt
