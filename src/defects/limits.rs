//! `[defect]`: what a defect fix may touch before speed calls it large or
//! out of scope. This part owns the type and the contract's defaults;
//! `settings` fills it from the config file.

pub const DEFAULT_DEFECT_MAX_LINES: usize = 100;
pub const DEFAULT_DEFECT_MAX_FILES: usize = 3;
/// The contract's example; `.speed/` is always exempt besides these.
pub const DEFAULT_DEFECT_EXEMPT: &[&str] = &[
    "tests/**",
    "**/test_*.py",
    "*.lock",
    "package.json",
    "requirements.txt",
];

/// `[defect]`: what a defect fix may touch before speed calls it large or
/// out of scope.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub max_lines: usize,
    pub max_files: usize,
    /// Globs (checked to compile with `globset`) of paths never counted as
    /// scope violations.
    pub exempt: Vec<String>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_lines: DEFAULT_DEFECT_MAX_LINES,
            max_files: DEFAULT_DEFECT_MAX_FILES,
            exempt: DEFAULT_DEFECT_EXEMPT
                .iter()
                .map(|g| g.to_string())
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_contract() {
        let defect = Limits::default();
        assert_eq!((defect.max_lines, defect.max_files), (100, 3));
    }

    #[test]
    fn default_exempt_globs_compile() {
        for glob in DEFAULT_DEFECT_EXEMPT {
            globset::Glob::new(glob).unwrap();
        }
    }
}
