//! What a `[[checks.command]]` says about reading its tool: the `parser`
//! of its output (or of the `report` file it writes), the `category` its
//! findings fall in, whether they block, and the priority of the fixes
//! they become. Plain configuration: `settings` fills it, `command` and
//! `messages` act on it.

use serde::{Deserialize, Serialize};

use super::parsers::Parser;

/// What a command checks, in seed 002's words; it orders the fixes its
/// findings become (typecheck first: code that does not compile hides
/// everything else).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Typecheck,
    Lint,
    Test,
    Security,
    Quality,
    Docs,
}

impl Category {
    pub const ALL: [Category; 6] = [
        Category::Typecheck,
        Category::Lint,
        Category::Test,
        Category::Security,
        Category::Quality,
        Category::Docs,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Typecheck => "typecheck",
            Category::Lint => "lint",
            Category::Test => "test",
            Category::Security => "security",
            Category::Quality => "quality",
            Category::Docs => "docs",
        }
    }

    pub fn parse(word: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == word)
    }

    /// Seed 002's fix priorities (lower is first).
    pub fn default_priority(self) -> u32 {
        match self {
            Category::Typecheck => 1,
            Category::Lint => 2,
            Category::Test => 3,
            Category::Security => 4,
            Category::Quality => 5,
            Category::Docs => 6,
        }
    }
}

/// Whether a command's findings block an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Blocking {
    /// Its critical and major findings block, except preexisting ones.
    #[default]
    Changed,
    /// Never: its findings are shown and become no fixes.
    Never,
    /// Preexisting findings block too (`blocking = "all"`).
    All,
}

impl Serialize for Blocking {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Blocking::Changed => s.serialize_bool(true),
            Blocking::Never => s.serialize_bool(false),
            Blocking::All => s.serialize_str("all"),
        }
    }
}

/// How a command's output is read. The default reads nothing: a non-zero
/// exit is one finding with the tail of the output, as before parsers.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Tool {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parser: Option<Parser>,
    /// A file the tool writes, relative to the checkout's root (JUnit and
    /// SARIF reports); it is read instead of the output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<Category>,
    #[serde(skip_serializing_if = "is_default_blocking")]
    pub blocking: Blocking,
    /// The priority of the fixes its findings become; the category's
    /// default when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_priority: Option<u32>,
}

fn is_default_blocking(b: &Blocking) -> bool {
    *b == Blocking::Changed
}

impl Tool {
    /// The priority of a fix for one of its findings.
    pub fn priority(&self) -> u32 {
        self.fix_priority
            .or(self.category.map(Category::default_priority))
            .unwrap_or(DEFAULT_PRIORITY)
    }
}

/// A command without a category or `fix_priority`: with the tests (a
/// failing command is broken behaviour until shown otherwise).
pub const DEFAULT_PRIORITY: u32 = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_follow_the_seed() {
        let order: Vec<u32> = Category::ALL
            .iter()
            .map(|c| c.default_priority())
            .collect();
        assert_eq!(order, [1, 2, 3, 4, 5, 6]);
        for c in Category::ALL {
            assert_eq!(Category::parse(c.as_str()), Some(c));
        }
        let tool = Tool {
            category: Some(Category::Lint),
            ..Tool::default()
        };
        assert_eq!(tool.priority(), 2);
        let tool = Tool {
            fix_priority: Some(9),
            ..tool
        };
        assert_eq!(tool.priority(), 9);
        assert_eq!(Tool::default().priority(), DEFAULT_PRIORITY);
    }
}
