//! `speed init` and `speed doctor`: run them (`onboard`) and print what
//! they found. init reports on stderr, as `cargo init` and `speed hook
//! install` do; doctor's report is the command's result, on stdout.

use std::fmt::Write as _;
use std::path::Path;

use super::{Colors, note, out};
use crate::exit::Outcome;
use crate::hook::install::Action;
use crate::onboard::detect::Provider;
use crate::onboard::doctor::{self, Level};
use crate::onboard::init::{self, Outcome as Written};
use crate::onboard::templates;
use crate::render::Style;
use crate::settings::{CONFIG_PATH, DoctorSettings};

pub fn init_command(dir: &Path, hooks: bool, colors: Colors) -> anyhow::Result<Outcome> {
    let env = |key: &str| std::env::var(key).ok();
    let report = init::init(dir, hooks, &env)?;
    note(&init_text(&report, colors.stderr));
    match &report.hooks {
        Some(Err(why)) => {
            eprintln!("error: the hooks were not installed: {why}");
            Ok(Outcome::Error)
        }
        _ => Ok(Outcome::Approved),
    }
}

fn init_text(report: &init::Report, style: Style) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{} in {}\n",
        style.bold("speed init"),
        report.root.display()
    );
    let width = report.files.iter().map(|f| f.path.len()).max().unwrap_or(0);
    let mut wrote = false;
    for file in &report.files {
        let (verb, what) = match &file.outcome {
            Written::Created => {
                wrote = true;
                ("created", what_it_is(&file.path, report))
            }
            Written::Exists => ("exists ", "left as it is".to_string()),
            Written::Appended(lines) => {
                wrote = true;
                ("updated", format!("added {}", lines.join(", ")))
            }
            Written::Unchanged => (
                "exists ",
                "already ignores speed's runtime state".to_string(),
            ),
            Written::Skipped(why) => ("skipped", why.clone()),
        };
        let _ = writeln!(text, "  {verb} {:width$}  {what}", file.path);
    }
    if let Some(found) = &report.found {
        text.push('\n');
        let mut looked = found.looked.join("; ");
        if !looked.is_empty() {
            looked = format!(" ({looked})");
        }
        let _ = writeln!(text, "Model: {}{looked}.", init::describe(&found.provider));
        if let Provider::None = found.provider {
            let _ = writeln!(
                text,
                "  {CONFIG_PATH} holds the lines to uncomment for Anthropic, OpenAI, a local server or a command."
            );
        }
    }
    let mut suggested = Vec::new();
    if report.languages.rust {
        suggested.push(format!(
            "Rust: clippy{} and cargo test{}",
            installed(report.tools.cargo && report.tools.clippy),
            installed(report.tools.cargo)
        ));
    }
    if report.languages.python {
        suggested.push(format!(
            "Python: ruff{} and pytest{}",
            installed(report.tools.ruff),
            installed(report.tools.pytest)
        ));
    }
    if !suggested.is_empty() && report.found.is_some() {
        let _ = writeln!(text, "Checks: {}.", suggested.join("; "));
    }
    for notice in &report.notices {
        let _ = writeln!(text, "{} {notice}", style.yellow("note:"));
    }
    if !report.task_files.is_empty() {
        let _ = writeln!(
            text,
            "Task files: {} found (for example {}).",
            report.task_files.len(),
            report.task_files[0]
        );
    }
    let mut hooks_changed = false;
    if let Some(Ok(actions)) = &report.hooks {
        for action in actions {
            hooks_changed |= !matches!(action, Action::Unchanged(_));
            let _ = writeln!(text, "hooks: {}", hook_action(action));
        }
    }
    if !wrote {
        let _ = writeln!(
            text,
            "\n{}: what speed init writes is here already.",
            if hooks_changed {
                "No other file was written"
            } else {
                "Nothing was written"
            }
        );
    }
    text.push_str(&next_steps(report, style));
    text
}

fn installed(commented_in: bool) -> &'static str {
    if commented_in {
        ""
    } else {
        " (not installed here: commented out)"
    }
}

fn what_it_is(path: &str, report: &init::Report) -> String {
    match path {
        CONFIG_PATH => "the configuration: which model reviews, which checks run".to_string(),
        templates::VISION => "the product vision the guardian checks approvals against".to_string(),
        templates::TASK_TEMPLATE => "a task file to copy as .speed/tasks/1.json".to_string(),
        p if p == report.spec => {
            "the spec template: replace it with your product's spec".to_string()
        }
        _ => String::new(),
    }
}

fn hook_action(action: &Action) -> String {
    match action {
        Action::Installed(path) => format!("installed {}", path.display()),
        Action::Updated(path) => format!("updated {}", path.display()),
        Action::Unchanged(path) => format!("{} is up to date", path.display()),
        Action::KeptLocal(from, to) => format!(
            "kept your {} as {} (speed runs it first)",
            from.display(),
            to.display()
        ),
        Action::SkippedForeign(path) => format!(
            "left your {} alone (`speed hook install --force` keeps it as .local and runs it first)",
            path.display()
        ),
        Action::Removed(path) | Action::LeftForeign(path) => path.display().to_string(),
        Action::Restored(from, to) => format!("put back {} as {}", from.display(), to.display()),
    }
}

fn next_steps(report: &init::Report, style: Style) -> String {
    let main = report.main_branch.as_deref().unwrap_or("main");
    let on_main = report.head_branch.as_deref() == Some(main) || report.main_branch.is_none();
    let spec = &report.spec;
    let mut text = format!("\n{}\n", style.bold("Next:"));
    let mut step = 0;
    let mut next = || {
        step += 1;
        step
    };
    if report.committed_on_main {
        let _ = writeln!(
            text,
            "  {}. The configuration, {spec} and {} are committed on {main}: speed reads them at its commit, so commit what you change in them there.",
            next(),
            templates::VISION
        );
    } else {
        let _ = writeln!(
            text,
            "  {}. Write the spec, {spec} (its comments say how), and the product vision, {}.",
            next(),
            templates::VISION
        );
        let switch = if on_main {
            String::new()
        } else {
            format!(" (`git switch {main}` first: HEAD is not on it)")
        };
        let _ = writeln!(
            text,
            "  {}. Commit them and the configuration on {main}{switch}: speed reads them at {main}'s commit.",
            next()
        );
        let _ = writeln!(
            text,
            "       git add {CONFIG_PATH} .gitignore specs && git commit -m \"speed: configuration and specs\""
        );
    }
    let _ = writeln!(
        text,
        "  {}. speed doctor        (says whether a review would work here, and what to fix)",
        next()
    );
    let _ = writeln!(text, "  {}. Review a branch against the spec:", next());
    let _ = writeln!(text, "       speed review --branch BRANCH --spec {spec}");
    if report.task_files.is_empty() {
        let _ = writeln!(
            text,
            "     or with task files (copy {} to .speed/tasks/1.json): speed review --task-id 1",
            templates::TASK_TEMPLATE
        );
    } else {
        let _ = writeln!(
            text,
            "     or your tasks: speed review --task-id ID (every done task: speed review)"
        );
    }
    text
}

pub fn doctor_command(
    dir: &Path,
    settings: &DoctorSettings,
    colors: Colors,
) -> anyhow::Result<Outcome> {
    let env = |key: &str| std::env::var(key).ok();
    let inputs = doctor::Inputs {
        dir,
        settings,
        env: &env,
        this_speed: std::env::current_exe().ok(),
        progress: &|step: &str| eprintln!("speed doctor: {step}"),
    };
    let report = doctor::doctor(&inputs)?;
    out(&doctor_text(&report, colors.stdout));
    Ok(if report.passed() {
        Outcome::Approved
    } else {
        Outcome::Error
    })
}

fn doctor_text(report: &doctor::Report, style: Style) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{} in {}",
        style.bold("speed doctor"),
        report.root.display()
    );
    let mut area = None;
    for finding in &report.findings {
        if area != Some(finding.area) {
            area = Some(finding.area);
            let _ = writeln!(text, "\n{}", style.bold(finding.area.as_str()));
        }
        let mark = match finding.level {
            Level::Ok => style.green("✓"),
            Level::Note => style.dim("·"),
            Level::Warning => style.yellow("!"),
            Level::Problem => style.red("✗"),
        };
        let label = match finding.level {
            Level::Warning => "warning: ",
            Level::Problem => "problem: ",
            _ => "",
        };
        let mut lines = finding.text.lines();
        let _ = writeln!(text, "  {mark} {label}{}", lines.next().unwrap_or_default());
        for line in lines {
            let _ = writeln!(text, "      {line}");
        }
        if let Some(fix) = &finding.fix {
            let _ = writeln!(text, "      → {fix}");
        }
    }
    let problems = report.count(Level::Problem);
    let warnings = report.count(Level::Warning);
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let verdict = match (problems, warnings) {
        (0, 0) => "a review would work here".to_string(),
        (0, w) if report.strict => format!("{} (--strict fails on them)", plural(w, "warning")),
        (0, w) => format!(
            "a review would work here; {} worth fixing",
            plural(w, "warning")
        ),
        (p, 0) => format!(
            "{}: a review here would fail or mislead",
            plural(p, "problem")
        ),
        (p, w) => format!(
            "{} and {}: a review here would fail or mislead",
            plural(p, "problem"),
            plural(w, "warning")
        ),
    };
    let _ = writeln!(
        text,
        "\n{} ({:.1} s)",
        if report.passed() {
            style.green(&verdict)
        } else {
            style.red(&verdict)
        },
        report.duration.as_secs_f64()
    );
    text
}
