//! The reviser: a command (`[spec_review] reviser = ["claude", "-p"]`, or
//! `--reviser`) that reads the spec, the PRD and the feedback on stdin, as
//! the command provider writes a conversation (`=== USER ===` and the
//! text), and writes the revised spec on stdout. It runs through
//! `crate::process` like the command provider: no shell, in the
//! repository's root, a time limit, its process group killed when it ends,
//! its output capped.
//!
//! What it returns replaces a spec in the working tree, so it is checked
//! first (`accept`): not empty, text, Markdown with headings, no
//! commentary before the spec's first heading, no conversation echoed, not
//! the spec unchanged, and no heading dropped that the feedback did not
//! name (a section the feedback names may be rewritten, moved or split).

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use super::answer::Feedback;
use crate::process::{self, Capture, Limits};
use crate::specs::{self, Document, Section};

/// How much of the reviser's stderr goes into an error.
const STDERR_TAIL_BYTES: usize = 2048;

/// A configured reviser command.
#[derive(Debug, Clone)]
pub struct Reviser {
    pub argv: Vec<String>,
    pub timeout: Duration,
    /// Its stdout past this many bytes fails the revision.
    pub max_bytes: usize,
    /// Where it runs: the repository's root.
    pub dir: PathBuf,
}

impl Reviser {
    /// `reviser = ["claude", "-p"]` as people read it.
    pub fn shown(&self) -> String {
        self.argv.join(" ")
    }

    /// Runs the reviser on `input`; its stdout, or why there is none.
    pub fn run(&self, input: &str) -> Result<String, String> {
        let shown = self.shown();
        let (program, args) = self
            .argv
            .split_first()
            .ok_or_else(|| "the reviser command is empty".to_string())?;
        let mut command = std::process::Command::new(program);
        command.args(args).current_dir(&self.dir);
        let stdin = format!("=== USER ===\n{}\n", input.trim_end());
        let output = process::run(
            command,
            stdin.into_bytes(),
            &Limits {
                timeout: self.timeout,
                stdout: Capture::Upto(self.max_bytes),
                stderr: Capture::Tail(STDERR_TAIL_BYTES),
            },
        )
        .map_err(|err| format!("the reviser `{shown}` failed: {err}"))?;
        if !output.status.success() {
            return Err(format!(
                "the reviser `{shown}` failed ({}); stderr ends: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        String::from_utf8(output.stdout)
            .map_err(|_| format!("the reviser `{shown}` wrote something that is not UTF-8 text"))
    }
}

/// The revised spec to write, or why `output` cannot replace `original`.
pub fn accept(original: &Document, output: &str, feedback: &[Feedback]) -> Result<String, String> {
    let text = unwrap_fence(original, output);
    if text.trim().is_empty() {
        return Err("it returned nothing".to_string());
    }
    if text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err("it returned control characters, not a Markdown text".to_string());
    }
    let trimmed = text.trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && serde_json::from_str::<serde_json::Value>(trimmed).is_ok()
    {
        return Err("it returned JSON, not a Markdown spec".to_string());
    }
    if text.lines().any(|l| {
        matches!(
            l.trim(),
            "=== USER ===" | "=== ASSISTANT ===" | "=== SYSTEM ==="
        )
    }) {
        return Err(
            "it echoed the conversation's markers instead of returning the spec".to_string(),
        );
    }
    let revised = specs::parse(&original.path, text);
    let headed = |doc: &Document| doc.sections.iter().any(|s| s.level > 0);
    if headed(original) && !headed(&revised) {
        return Err("it has no Markdown heading, so it is not the spec".to_string());
    }
    if preamble(original).is_empty() && !preamble(&revised).is_empty() {
        return Err(format!(
            "it starts with text the spec did not have before its first heading (\"{}\"): commentary, not the spec",
            clip(&preamble(&revised), 80)
        ));
    }
    if text.trim_end() == original.text.trim_end() {
        return Err("it returned the spec unchanged".to_string());
    }
    let dropped = dropped_headings(original, &revised, feedback);
    if !dropped.is_empty() {
        return Err(format!(
            "it drops headings the feedback did not name: {}",
            dropped.join("; ")
        ));
    }
    let mut text = text.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// The text inside one fence around the whole output (```markdown …```),
/// unless the spec itself starts with a fence.
fn unwrap_fence<'a>(original: &Document, output: &'a str) -> &'a str {
    let trimmed = output.trim();
    let first = trimmed.lines().next().unwrap_or("").trim();
    let opener = ["```", "~~~"].into_iter().find(|f| first.starts_with(f));
    let (Some(fence), false) = (opener, original.text.trim_start().starts_with(['`', '~'])) else {
        return output;
    };
    let language = first
        .trim_start_matches(fence.chars().next().unwrap_or('`'))
        .trim();
    if !matches!(language, "" | "markdown" | "md") || !trimmed.ends_with(fence) {
        return output;
    }
    let body = &trimmed[first.len()..trimmed.len() - fence.len()];
    body.trim_start_matches(['\r', '\n'])
}

fn preamble(doc: &Document) -> String {
    doc.sections
        .iter()
        .find(|s| s.level == 0)
        .map(|s| s.text.trim().to_string())
        .unwrap_or_default()
}

/// Headings of `original` missing from `revised` (by title) that no
/// feedback item names, itself or through a section above it.
fn dropped_headings(original: &Document, revised: &Document, feedback: &[Feedback]) -> Vec<String> {
    let kept: HashSet<String> = revised
        .sections
        .iter()
        .filter(|s| s.level > 0)
        .map(|s| normal(s.title()))
        .collect();
    let named: Vec<&Section> = feedback
        .iter()
        .filter_map(|f| specs::find_section(original, &f.section))
        .collect();
    let under_named = |section: &Section| {
        named.iter().any(|n| {
            n.level > 0
                && section.titles.len() >= n.titles.len()
                && section.titles[..n.titles.len()] == n.titles[..]
        })
    };
    original
        .sections
        .iter()
        .filter(|s| s.level > 0 && !kept.contains(&normal(s.title())) && !under_named(s))
        .map(Section::heading_path)
        .collect()
}

/// A title as headings are compared: lower case, blanks collapsed,
/// emphasis and code markers dropped.
fn normal(title: &str) -> String {
    title
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !matches!(c, '*' | '`' | '_'))
        .flat_map(char::to_lowercase)
        .collect()
}

fn clip(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    match line.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "# Fines\n\n## Charging\n25 cents a day.\n\n## Cap\nAt most the price.\n\n### Currency\nCents.\n";

    fn doc() -> Document {
        specs::parse("specs/fines.md", SPEC)
    }

    fn fb(section: &str) -> Vec<Feedback> {
        vec![Feedback {
            section: section.into(),
            issue: "i".into(),
            suggestion: "s".into(),
        }]
    }

    #[test]
    fn a_revision_that_keeps_the_headings_is_accepted_and_a_fence_is_unwrapped() {
        let revised = SPEC.replace(
            "25 cents a day.",
            "25 cents per day late, from the day after the due date.",
        );
        assert_eq!(accept(&doc(), &revised, &fb("Charging")).unwrap(), revised);
        let fenced = format!("```markdown\n{revised}```\n");
        assert_eq!(accept(&doc(), &fenced, &fb("Charging")).unwrap(), revised);
    }

    #[test]
    fn garbage_is_refused_with_the_reason() {
        let refuse = |output: &str| accept(&doc(), output, &fb("Charging")).unwrap_err();
        assert_eq!(refuse("  \n"), "it returned nothing");
        assert!(refuse("{\"spec\": \"# Fines\"}").contains("JSON"));
        assert!(refuse("Sure! I revised the spec.").contains("no Markdown heading"));
        assert!(refuse(&format!("Here is the revised spec:\n\n{SPEC}")).contains("commentary"));
        assert!(refuse(&format!("=== USER ===\n{SPEC}")).contains("markers"));
        assert!(refuse(SPEC).contains("unchanged"));
        assert!(refuse("# Fines\u{0}\n").contains("control characters"));
    }

    #[test]
    fn only_the_headings_the_feedback_names_may_go() {
        let without_cap = "# Fines\n\n## Charging\n25 cents a day, at most the price, in cents.\n";
        let err = accept(&doc(), without_cap, &fb("Charging")).unwrap_err();
        assert_eq!(
            err,
            "it drops headings the feedback did not name: Fines > Cap; Fines > Cap > Currency"
        );
        // Naming Cap lets it (and its subsection) be merged elsewhere.
        assert!(accept(&doc(), without_cap, &fb("Cap")).is_ok());
        // A heading moved under another parent is kept.
        let moved =
            "# Fines\n\n## Charging\n25 cents.\n\n### Currency\nCents.\n\n## Cap\nAt most.\n";
        assert!(accept(&doc(), moved, &fb("Charging")).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn the_reviser_reads_the_conversation_and_its_failures_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let reviser = |script: &str| Reviser {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            timeout: Duration::from_secs(10),
            max_bytes: 1024,
            dir: dir.path().to_path_buf(),
        };
        assert_eq!(
            reviser("cat").run("spec\n").unwrap(),
            "=== USER ===\nspec\n"
        );
        let err = reviser("echo broken >&2; exit 3").run("x").unwrap_err();
        assert!(
            err.contains("failed (exit status: 3)") && err.contains("broken"),
            "{err}"
        );
        let err = reviser("yes spec").run("x").unwrap_err();
        assert!(err.contains("passed the limit of 1024 bytes"), "{err}");
        let mut slow = reviser("sleep 5");
        slow.timeout = Duration::from_millis(200);
        assert!(slow.run("x").unwrap_err().contains("did not finish within"));
        let err = reviser("x").run("x");
        assert!(err.is_err());
    }
}
