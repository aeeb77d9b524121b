//! impact

#[derive(Debug, Clone, serde::Serialize)]
pub struct Impact;
