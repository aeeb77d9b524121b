//! impact
