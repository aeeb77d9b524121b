//! What the repository says: git's state (main found, shallow, detached),
//! where the configuration is (committed on main, differing), the specs
//! and the vision at main's commit, the hooks and the `speed` they run,
//! and whether the task files can be read.

use std::path::Path;

use super::{Findings, Inputs};
use crate::git::{MainBranch, Repository, short};
use crate::hook::{self, install};
use crate::onboard::detect;
use crate::review;
use crate::settings::{self, CONFIG_PATH, DoctorSettings};
use crate::specs;
use crate::tasks;

/// Markers of the texts `speed init` writes, to tell a template nobody
/// has filled in yet.
const SPEC_TEMPLATE_MARKER: &str = "speed init wrote this template";
const VISION_TEMPLATE_MARKER: &str = "speed init wrote this file";

/// The main branch (as a review would find it), shallow clones, a
/// detached HEAD.
pub(super) fn git(
    repo: &Repository,
    review: Option<&review::Config>,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut Findings,
) -> Option<MainBranch> {
    out.ok(format!("repository at {}", repo.root().display()));
    let main = match review {
        Some(review) => Ok(review.main.clone()),
        None => {
            let named = env("MAIN_BRANCH").filter(|v| !v.trim().is_empty());
            repo.resolve_main(named.as_deref())
                .map_err(|e| e.to_string())
        }
    };
    let main = match main {
        Ok(main) => {
            out.ok(format!(
                "main branch: {} at {}",
                main.name,
                short(&main.commit)
            ));
            Some(main)
        }
        Err(why) => {
            out.problem(
                format!("no main branch: {why}"),
                "create it (a first commit on `main`), fetch it (`git fetch origin main`), or name it with git.main_branch in .speed/config.toml or MAIN_BRANCH",
            );
            None
        }
    };
    if repo.is_shallow() {
        out.warn(
            "this is a shallow clone: the merge base of a branch and main may be missing, and a review then fails",
            "`git fetch --unshallow`; in CI, check out with the whole history (actions/checkout `fetch-depth: 0`)",
        );
    }
    if repo.head_detached() {
        out.warn(
            "HEAD is detached: reviews read the configuration and specs at main's commit, never the working tree's copies",
            "`git switch main` to edit the configuration or specs; in CI a detached HEAD is normal",
        );
    } else if let (Some(branch), Some(main)) = (repo.current_branch(), &main) {
        if branch != main.name {
            out.note(format!(
                "HEAD is on `{branch}`: reviews read the configuration and specs at {}, not in this working tree",
                main.name
            ));
        }
    }
    main
}

/// The configuration: valid, committed on main, the working tree's copy
/// the same.
pub(super) fn config(
    repo: &Repository,
    main: Option<&MainBranch>,
    settings: &DoctorSettings,
    out: &mut Findings,
) {
    if let Some(flag) = &settings.config_flag {
        out.note(format!(
            "the configuration is {} (--config): main's {CONFIG_PATH} is not used",
            flag.display()
        ));
        if let Err(why) = &settings.review {
            out.problem(why.clone(), "fix the file");
        }
        return;
    }
    let tree_path = repo.root().join(CONFIG_PATH);
    let tree = std::fs::read(&tree_path).ok();
    let committed = main.and_then(|m| repo.read_file(&m.commit, CONFIG_PATH).ok().flatten());
    let mut invalid = false;
    for (bytes, name) in [
        (
            tree.as_deref(),
            format!("{CONFIG_PATH} in the working tree"),
        ),
        (
            committed.as_deref(),
            main.map(|m| format!("{CONFIG_PATH} at {} ({})", m.name, short(&m.commit)))
                .unwrap_or_default(),
        ),
    ] {
        let Some(bytes) = bytes else { continue };
        let checked = match std::str::from_utf8(bytes) {
            Ok(text) => settings::check_config(text, &name).map_err(|e| e.to_string()),
            Err(_) => Err(format!("{name} is not UTF-8 text")),
        };
        if let Err(why) = checked {
            invalid = true;
            out.problem(
                format!("the configuration is not valid: {why}"),
                "fix the keys named (docs/configuration.md lists every key); `speed config` shows the result",
            );
        }
        if tree.as_deref() == committed.as_deref() {
            break;
        }
    }
    if let (Err(why), false) = (&settings.review, invalid) {
        out.problem(
            format!("a review cannot read its settings: {why}"),
            "fix what is named; `speed config` shows the settings",
        );
    }
    let ignored = repo.is_ignored(CONFIG_PATH);
    match (&tree, &committed, main) {
        (None, None, _) => out.problem(
            format!("there is no {CONFIG_PATH} on main: reviews ask no model (offline: speed's own checks alone, never an approval), whatever this machine has"),
            "`speed init` writes one for the model found on this machine; commit it on main",
        ),
        (Some(_), None, Some(main)) => {
            let mut fix = format!(
                "commit it on {}: `git add {CONFIG_PATH} && git commit` there",
                main.name
            );
            if ignored {
                fix = format!(
                    "git ignores it: commit it on {} with `git add -f {CONFIG_PATH}`",
                    main.name
                );
            }
            out.problem(
                format!(
                    "{CONFIG_PATH} is not committed on {}: reviews of other branches, the hooks and CI read main's commit, where there is none",
                    main.name
                ),
                fix,
            );
        }
        (Some(_), None, None) => {}
        (tree, Some(_), Some(main)) => {
            if !invalid {
                out.ok(format!(
                    "{CONFIG_PATH} is committed on {} ({})",
                    main.name,
                    short(&main.commit)
                ));
            }
            match tree {
                None => out.warn(
                    format!("{CONFIG_PATH} is deleted in the working tree but committed on {}: reviews use main's", main.name),
                    format!("restore it (`git checkout {} -- {CONFIG_PATH}`) or commit the deletion on {}", main.name, main.name),
                ),
                Some(t) if Some(t) != committed.as_ref() => out.warn(
                    format!(
                        "the working tree's {CONFIG_PATH} differs from {}'s: reviews of other branches, the hooks and CI use {}'s",
                        main.name, main.name
                    ),
                    format!("commit the change on {} (`git diff {} -- {CONFIG_PATH}` shows it)", main.name, main.name),
                ),
                Some(_) => {}
            }
        }
        // Nothing is committed without a main branch to commit it on.
        (_, Some(_), None) => {}
    }
}

/// The specs at main's commit: found, with sections, not the template;
/// the vision named by `guardian.vision_file`.
pub(super) fn specs(
    repo: &Repository,
    main: Option<&MainBranch>,
    review: Option<&review::Config>,
    out: &mut Findings,
) {
    let Some(main) = main else {
        out.note("not checked: there is no main branch to read them at");
        return;
    };
    let files = repo.list_files(&main.commit).unwrap_or_default();
    let mut specs: Vec<&str> = files
        .iter()
        .map(|f| f.path.as_str())
        .filter(|p| p.starts_with("specs/") && p.ends_with(".md"))
        .collect();
    specs.sort();
    let vision = review
        .map(|r| r.guardian.vision_file.clone())
        .unwrap_or_else(|| settings::DEFAULT_VISION_FILE.to_string());
    let features = feature_specs(repo.root());
    let product: Vec<&str> = specs.iter().copied().filter(|p| *p != vision).collect();
    if product.is_empty() && features.is_empty() {
        let in_tree = repo.root().join("specs").is_dir();
        out.warn(
            format!(
                "no spec is committed on {}: a review needs the spec its change is judged against",
                main.name
            ),
            if in_tree {
                format!(
                    "commit the specs under specs/ on {} (reviews read them at main's commit)",
                    main.name
                )
            } else {
                "write one under specs/product/ (`speed init` writes a template) and commit it on main"
                    .to_string()
            },
        );
    } else {
        out.ok(format!(
            "{} spec file{} under specs/ at {}",
            product.len(),
            if product.len() == 1 { "" } else { "s" },
            main.name
        ));
    }
    for path in &product {
        let Ok(Some(bytes)) = repo.read_file(&main.commit, path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let doc = specs::parse(path, &text);
        let headed = doc.sections.iter().filter(|s| s.level > 0).count();
        if text.contains(SPEC_TEMPLATE_MARKER) && text.contains("Members find books by title") {
            out.warn(
                format!("{path} is still the template `speed init` wrote"),
                "replace its example sections with your product's requirements",
            );
        } else if headed == 0 {
            out.warn(
                format!("{path} has no headings: it is one section, so quotes and references cannot name a part of it"),
                "give each feature or behaviour a `## heading`",
            );
        }
    }
    for (feature, path) in &features {
        match repo.read_file(&main.commit, path) {
            Ok(Some(_)) => {}
            _ => out.warn(
                format!(
                    "feature {feature}'s spec_path names {path}, which is not committed on {}",
                    main.name
                ),
                format!("commit {path} on {}, or correct spec_path", main.name),
            ),
        }
    }
    let guardian_on = review.is_none_or(|r| r.guardian.enabled);
    match repo.read_file(&main.commit, &vision) {
        Ok(Some(bytes)) => {
            let text = String::from_utf8_lossy(&bytes);
            if text.contains(VISION_TEMPLATE_MARKER) && text.contains("is for …") {
                out.warn(
                    format!("the vision {vision} is still the template `speed init` wrote"),
                    "say what the product is for and what it must never become",
                );
            } else {
                out.ok(format!("the product vision: {vision}"));
            }
        }
        _ if !guardian_on => out.note(format!(
            "no product vision at {vision}; the guardian is off"
        )),
        _ => out.warn(
            format!(
                "the product vision {vision} (guardian.vision_file) is not committed on {}: the guardian checks approvals without it",
                main.name
            ),
            format!("write {vision} and commit it on {}", main.name),
        ),
    }
}

/// Each feature's `spec_path`, in either layout.
fn feature_specs(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for layout in [".speed/features", ".speed/shared/features"] {
        let Ok(entries) = std::fs::read_dir(root.join(layout)) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(text) = std::fs::read_to_string(entry.path().join("spec_path")) else {
                continue;
            };
            if let Some(line) = text.lines().map(str::trim).find(|l| !l.is_empty()) {
                out.push((
                    entry.file_name().to_string_lossy().into_owned(),
                    line.to_string(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// speed's hooks: installed, and the `speed` they would run.
pub(super) fn hooks(repo: &Repository, inputs: &Inputs, out: &mut Findings) {
    let dir = match repo.hooks_dir() {
        Ok(dir) => dir,
        Err(e) => {
            out.warn(
                format!("cannot tell where git runs hooks from: {e}"),
                "check core.hooksPath",
            );
            return;
        }
    };
    let mut ours = Vec::new();
    let mut missing = Vec::new();
    let mut foreign = Vec::new();
    for name in hook::HOOKS {
        match install::owner(&dir.join(name)) {
            Ok(Some(true)) => ours.push(name),
            Ok(Some(false)) => foreign.push(name),
            Ok(None) => missing.push(name),
            Err(e) => out.warn(
                format!("cannot read {}: {e}", dir.join(name).display()),
                "check its permissions",
            ),
        }
    }
    let installed = !ours.is_empty();
    if !installed {
        out.note(format!(
            "speed's hooks are not installed in {}: git merges task work into main whether or not it was approved",
            dir.display()
        ));
        if !foreign.is_empty() {
            out.note(format!(
                "hooks of your own are there: {} (`speed hook install --force` keeps each as <name>.local and runs it first)",
                foreign.join(", ")
            ));
        }
        out.note("`speed hook install` (or `speed init --hooks`) installs the merge gate");
    } else {
        let required: Vec<&&str> = missing.iter().filter(|n| !hook::optional(n)).collect();
        if required.is_empty() {
            out.ok(format!(
                "installed in {}: {}",
                dir.display(),
                ours.join(", ")
            ));
        } else {
            out.warn(
                format!(
                    "only some of speed's hooks are installed in {}: {} missing",
                    dir.display(),
                    required
                        .iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "`speed hook install`",
            );
        }
    }
    // The program the scripts run: $SPEED_BIN, else `git config
    // speed.bin`, else `speed` on PATH (see `install::script`).
    let (program, how) = match ((inputs.env)("SPEED_BIN"), repo.config_value("speed.bin")) {
        (Some(bin), _) if !bin.trim().is_empty() => (bin, "SPEED_BIN"),
        (_, Some(bin)) => (bin, "git config speed.bin"),
        _ => ("speed".to_string(), "PATH"),
    };
    match detect::which(&program, inputs.env) {
        Some(found) => {
            let same = inputs.this_speed.as_ref().is_some_and(|this| {
                std::fs::canonicalize(this).ok() == std::fs::canonicalize(&found).ok()
            });
            if same || inputs.this_speed.is_none() {
                out.ok(format!("the hooks run {} (from {how})", found.display()));
            } else {
                out.note(format!(
                    "the hooks run {} (from {how}), not this speed ({})",
                    found.display(),
                    inputs
                        .this_speed
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default()
                ));
            }
        }
        None => {
            let text = format!(
                "the hooks cannot run speed: `{program}` (from {how}) is not found on the PATH they see"
            );
            let fix = "put speed on PATH (`cargo install` puts it in ~/.cargo/bin), or `git config speed.bin /path/to/speed` (GUI clients often have a short PATH)";
            if installed {
                out.problem(format!("{text}, so they block every merge into main"), fix);
            } else {
                out.note(format!(
                    "{text} (it matters once they are installed): {fix}"
                ));
            }
        }
    }
}

/// Task files: how many, and any that cannot be read.
pub(super) fn tasks(root: &Path, out: &mut Findings) {
    match tasks::Store::open(root).scan() {
        Ok((tasks, broken)) => {
            if tasks.is_empty() && broken.is_empty() {
                out.note("none: review branches with `speed review --branch B --spec PATH`, or write task files (.speed/tasks/<id>.json)");
            } else if !tasks.is_empty() {
                let done = tasks
                    .iter()
                    .filter(|t| t.status == tasks::Status::Done)
                    .count();
                out.ok(format!(
                    "{} task file{} read ({done} done)",
                    tasks.len(),
                    if tasks.len() == 1 { "" } else { "s" }
                ));
            }
            for err in broken.iter().take(10) {
                out.warn(
                    format!("a task file cannot be read: {err}"),
                    "fix it: batch mode reports it and reviews the others",
                );
            }
            if broken.len() > 10 {
                out.warn(
                    format!("{} more task files cannot be read", broken.len() - 10),
                    "`speed review --dry-run` names each",
                );
            }
        }
        Err(err) => out.warn(
            format!("the task folders cannot be listed: {err}"),
            "check the permissions of .speed/",
        ),
    }
}
