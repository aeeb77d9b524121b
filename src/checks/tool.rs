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
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tool {
    pub parser: Option<Parser>,
    /// A file the tool writes, relative to the checkout's root (JUnit and
    /// SARIF reports); it is read instead of the output.
    pub report: Option<String>,
    pub category: Option<Category>,
    pub blocking: Blocking,
    /// The priority of the fixes its findings become; the category's
    /// default when unset.
    pub fix_priority: Option<u32>,
}

/// As the configuration writes it (`parser`, `pattern`, …), only the keys
/// that are set, so a command without them shows as it always did.
impl Serialize for Tool {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        if let Some(parser) = &self.parser {
            map.serialize_entry("parser", parser.name())?;
            if let Parser::Regex(pattern) = parser {
                map.serialize_entry("pattern", pattern.as_str())?;
            }
        }
        if let Some(report) = &self.report {
            map.serialize_entry("report", report)?;
        }
        if let Some(category) = self.category {
            map.serialize_entry("category", category.as_str())?;
        }
        if self.blocking != Blocking::Changed {
            map.serialize_entry("blocking", &self.blocking)?;
        }
        if let Some(priority) = self.fix_priority {
            map.serialize_entry("fix_priority", &priority)?;
        }
        map.end()
    }
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
    fn it_shows_as_the_configuration_writes_it() {
        assert_eq!(
            serde_json::to_value(Tool::default()).unwrap(),
            serde_json::json!({})
        );
        let tool = Tool {
            parser: Some(Parser::Regex(
                crate::checks::parsers::Pattern::new("(?P<message>.*)").unwrap(),
            )),
            blocking: Blocking::All,
            ..Tool::default()
        };
        assert_eq!(
            serde_json::to_value(tool).unwrap(),
            serde_json::json!({"parser": "regex", "pattern": "(?P<message>.*)", "blocking": "all"})
        );
    }

    #[test]
    fn priorities_follow_the_seed() {
        let order: Vec<u32> = Category::ALL.iter().map(|c| c.default_priority()).collect();
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
