//! speed's hook scripts: written into the folder git runs hooks from, and
//! taken out again, without ever losing a hook speed did not write.
//!
//! A script is speed's when it holds `MARKER` on a line of its own. Any
//! other file (or link) at a hook's path is someone else's: `install`
//! refuses to touch it unless forced, and then keeps it as `<name>.local`,
//! which `speed hook run` runs first; `uninstall` puts it back. Both can be
//! run any number of times.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::{Error, HOOKS, optional};

/// The line that marks a hook script as speed's.
pub const MARKER: &str =
    "# speed-hook: written by `speed hook install`; `speed hook uninstall` removes it.";

/// What install or uninstall did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Installed(PathBuf),
    /// Speed's script was there already, now rewritten to this version.
    Updated(PathBuf),
    Unchanged(PathBuf),
    /// Someone else's hook moved aside (`--force`): from, to.
    KeptLocal(PathBuf, PathBuf),
    Removed(PathBuf),
    /// Someone else's hook put back: from, to.
    Restored(PathBuf, PathBuf),
    /// Someone else's hook, left alone by uninstall.
    LeftForeign(PathBuf),
    /// Someone else's hook at an optional hook's place, left alone by an
    /// install without `--force`.
    SkippedForeign(PathBuf),
}

/// The path of the hook speed runs before its own check.
pub fn local_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.local"))
}

/// The script speed installs as `name`.
pub fn script(name: &str) -> String {
    let verb = match name {
        "pre-push" => "push",
        "pre-commit" => "commit",
        _ => "merge",
    };
    format!(
        r#"#!/bin/sh
{MARKER}
# Edits here are lost when speed reinstalls it: put your own checks in
# {name}.local, which speed runs first with the same arguments and input.
# speed is $SPEED_BIN, else `git config speed.bin`, else found on PATH.
speed="${{SPEED_BIN:-}}"
if [ -z "$speed" ]; then
    speed="$(git config --get speed.bin 2>/dev/null)" || speed=""
fi
if [ -z "$speed" ]; then
    speed=speed
fi
if ! command -v "$speed" >/dev/null 2>&1; then
    echo "speed {name} hook: cannot run '$speed': put speed on PATH, or set SPEED_BIN or 'git config speed.bin /path/to/speed'. The {verb} is blocked." >&2
    exit 1
fi
exec "$speed" hook run {name} "$@"
"#
    )
}

/// Whether the file at `path` is speed's script. None when nothing is
/// there. A link is never speed's (speed writes files).
pub fn owner(path: &Path) -> Result<Option<bool>, Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    if !meta.is_file() {
        return Ok(Some(false));
    }
    let mut head = Vec::new();
    fs::File::open(path)
        .and_then(|f| f.take(64 * 1024).read_to_end(&mut head))
        .map_err(io)?;
    let text = String::from_utf8_lossy(&head);
    Ok(Some(text.lines().any(|line| line.trim_end() == MARKER)))
}

/// Write speed's hooks into `dir`. Someone else's hook is refused, naming
/// it, unless `force`, which moves it to `<name>.local`; at an optional
/// hook's place it is left alone instead. Nothing is written when any hook
/// would be refused.
pub fn install(dir: &Path, force: bool) -> Result<Vec<Action>, Error> {
    for name in HOOKS {
        let path = dir.join(name);
        let local = local_path(dir, name);
        if owner(&path)? == Some(false) {
            if !force && optional(name) {
                continue;
            }
            if !force {
                return Err(Error::Foreign { path, local });
            }
            if owner(&local)?.is_some() {
                return Err(Error::LocalTaken { path, local });
            }
        }
    }
    fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut done = Vec::new();
    for name in HOOKS {
        let path = dir.join(name);
        let text = script(name);
        match owner(&path)? {
            Some(false) if !force => done.push(Action::SkippedForeign(path)),
            Some(false) => {
                let local = local_path(dir, name);
                rename(&path, &local)?;
                done.push(Action::KeptLocal(path.clone(), local));
                write_script(dir, &path, &text)?;
                done.push(Action::Installed(path));
            }
            Some(true) if fs::read_to_string(&path).is_ok_and(|t| t == text) => {
                done.push(Action::Unchanged(path));
            }
            Some(true) => {
                write_script(dir, &path, &text)?;
                done.push(Action::Updated(path));
            }
            None => {
                write_script(dir, &path, &text)?;
                done.push(Action::Installed(path));
            }
        }
    }
    Ok(done)
}

/// Remove speed's hooks from `dir` and put back what `install --force`
/// kept aside. Someone else's hook is left where it is.
pub fn uninstall(dir: &Path) -> Result<Vec<Action>, Error> {
    let mut done = Vec::new();
    for name in HOOKS {
        let path = dir.join(name);
        let local = local_path(dir, name);
        match owner(&path)? {
            Some(false) => {
                done.push(Action::LeftForeign(path));
                continue;
            }
            Some(true) => {
                fs::remove_file(&path).map_err(|source| Error::Io {
                    path: path.clone(),
                    source,
                })?;
                done.push(Action::Removed(path.clone()));
            }
            None => {}
        }
        if owner(&local)?.is_some() {
            rename(&local, &path)?;
            done.push(Action::Restored(local, path));
        }
    }
    Ok(done)
}

fn rename(from: &Path, to: &Path) -> Result<(), Error> {
    fs::rename(from, to).map_err(|source| Error::Io {
        path: from.to_path_buf(),
        source,
    })
}

/// An executable script, replaced atomically so git never runs half of one.
fn write_script(dir: &Path, path: &Path, text: &str) -> Result<(), Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".speed-hook-")
        .tempfile_in(dir)
        .map_err(io)?;
    tmp.write_all(text.as_bytes()).map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).map_err(io)?;
    }
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn install_twice_then_uninstall_twice_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("hooks");
        let first = install(&dir, false).unwrap();
        assert!(matches!(first[0], Action::Installed(_)), "{first:?}");
        assert_eq!(names(&dir), ["pre-commit", "pre-merge-commit", "pre-push"]);
        let again = install(&dir, false).unwrap();
        assert!(
            again.iter().all(|a| matches!(a, Action::Unchanged(_))),
            "{again:?}"
        );
        let text = fs::read_to_string(dir.join("pre-push")).unwrap();
        assert!(text.starts_with("#!/bin/sh\n"));
        assert!(text.contains("exec \"$speed\" hook run pre-push \"$@\""));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(dir.join("pre-push"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o755);
        }
        assert_eq!(uninstall(&dir).unwrap().len(), 3);
        assert!(names(&dir).is_empty());
        assert!(uninstall(&dir).unwrap().is_empty());
    }

    #[test]
    fn a_foreign_hook_is_refused_kept_with_force_and_restored() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::write(dir.join("pre-push"), "#!/bin/sh\nexit 0\n").unwrap();
        match install(dir, false) {
            Err(Error::Foreign { path, .. }) => assert_eq!(path, dir.join("pre-push")),
            other => panic!("expected a refusal, got {other:?}"),
        }
        // Nothing was written, not even the hook that was free.
        assert_eq!(names(dir), ["pre-push"]);

        install(dir, true).unwrap();
        assert_eq!(
            names(dir),
            [
                "pre-commit",
                "pre-merge-commit",
                "pre-push",
                "pre-push.local"
            ]
        );
        assert_eq!(
            fs::read_to_string(dir.join("pre-push.local")).unwrap(),
            "#!/bin/sh\nexit 0\n"
        );
        // Forcing again finds speed's own hook: the kept one stays kept.
        install(dir, true).unwrap();
        assert_eq!(
            fs::read_to_string(dir.join("pre-push.local")).unwrap(),
            "#!/bin/sh\nexit 0\n"
        );

        uninstall(dir).unwrap();
        assert_eq!(names(dir), ["pre-push"]);
        assert_eq!(
            fs::read_to_string(dir.join("pre-push")).unwrap(),
            "#!/bin/sh\nexit 0\n"
        );
    }

    #[test]
    fn a_foreign_pre_commit_hook_is_left_alone_without_force() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::write(dir.join("pre-commit"), "framework\n").unwrap();
        let done = install(dir, false).unwrap();
        assert!(done.contains(&Action::SkippedForeign(dir.join("pre-commit"))));
        assert_eq!(names(dir), ["pre-commit", "pre-merge-commit", "pre-push"]);
        assert_eq!(
            fs::read_to_string(dir.join("pre-commit")).unwrap(),
            "framework\n"
        );
        assert_eq!(owner(&dir.join("pre-push")).unwrap(), Some(true));
        // Forcing chains it like any other hook.
        install(dir, true).unwrap();
        assert_eq!(
            fs::read_to_string(dir.join("pre-commit.local")).unwrap(),
            "framework\n"
        );
        uninstall(dir).unwrap();
        assert_eq!(names(dir), ["pre-commit"]);
    }

    #[test]
    fn force_never_overwrites_a_kept_hook() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::write(dir.join("pre-merge-commit"), "mine\n").unwrap();
        fs::write(dir.join("pre-merge-commit.local"), "older\n").unwrap();
        assert!(matches!(install(dir, true), Err(Error::LocalTaken { .. })));
        assert_eq!(
            fs::read_to_string(dir.join("pre-merge-commit")).unwrap(),
            "mine\n"
        );
    }

    #[test]
    fn uninstall_leaves_a_foreign_hook_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::write(dir.join("pre-push"), "theirs\n").unwrap();
        let done = uninstall(dir).unwrap();
        assert_eq!(done, [Action::LeftForeign(dir.join("pre-push"))]);
        assert_eq!(
            fs::read_to_string(dir.join("pre-push")).unwrap(),
            "theirs\n"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_never_speeds() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::write(dir.join("real"), script("pre-push")).unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("pre-push")).unwrap();
        assert_eq!(owner(&dir.join("pre-push")).unwrap(), Some(false));
    }
}
