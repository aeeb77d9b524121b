//! Commands: one function per command; the only place that prints.
