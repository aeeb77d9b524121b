//! Writes confined to one folder (the repository's `.speed/`), and nowhere
//! else.
//!
//! Everything speed writes goes through here: task files, review reports,
//! the log, nits, the cache, locks. A path may pass through a symbolic link
//! only while the link resolves inside the folder the write is confined to;
//! a `.speed/reviews/log.jsonl` checked in as a link to `~/.bashrc` or to a
//! source file of the repository is refused, naming the link, before
//! anything is written.
//!
//! Files are replaced atomically (a temporary file in the same folder,
//! fsync, rename), reports get names no other writer can take, log lines are
//! appended with one write each under a file lock, and a per-task lock
//! (`Lock`) keeps two reviews of one task apart. Temporary files are named
//! `.speed-tmp-<pid>-…`: an interrupted run removes its own (through
//! `interrupt`), and the next run that writes into a folder removes those a
//! dead process left there.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use crate::interrupt;

/// What every temporary file written here starts with.
const TEMP_PREFIX: &str = ".speed-tmp-";

/// A temporary file older than this is debris even when its pid is alive
/// again (pids are reused): a write takes milliseconds.
const STALE_AFTER: Duration = Duration::from_secs(3600);

/// How often a busy lock is tried again.
const LOCK_POLL: Duration = Duration::from_millis(50);

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "refusing to write {}: {} is a symbolic link to {target}, outside {}; speed writes only inside that folder",
        path.display(), link.display(), area.display()
    )]
    Escapes {
        path: PathBuf,
        link: PathBuf,
        /// Where the link leads, or what it names when that does not exist.
        target: String,
        area: PathBuf,
    },
    #[error("refusing to write {}: it is not inside {}", path.display(), area.display())]
    Outside { path: PathBuf, area: PathBuf },
    #[error("cannot write {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is held by another speed process ({holder})", path.display())]
    Busy { path: PathBuf, holder: String },
}

impl Error {
    fn io(path: &Path, source: io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// For callers whose errors carry an `io::Error` and name the path
/// themselves.
impl From<Error> for io::Error {
    fn from(err: Error) -> io::Error {
        match err {
            Error::Io { source, .. } => source,
            Error::Busy { .. } => io::Error::new(io::ErrorKind::WouldBlock, err.to_string()),
            other => io::Error::new(io::ErrorKind::PermissionDenied, other.to_string()),
        }
    }
}

/// The real path a write of `path` would reach, checked to stay inside
/// `area`. `path` is absolute under `area` or relative to it, without `..`.
/// The parent of `area` is trusted (it is the repository root); `area`
/// itself and everything below it may be links only into `area`. Parts of
/// the path that do not exist yet are returned as they are, to be created.
pub fn confine(area: &Path, path: &Path) -> Result<PathBuf, Error> {
    let outside = || Error::Outside {
        path: path.to_path_buf(),
        area: area.to_path_buf(),
    };
    let relative = if path.is_absolute() {
        path.strip_prefix(area).map_err(|_| outside())?
    } else {
        path
    };
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(outside());
    }
    let (Some(parent), Some(name)) = (area.parent(), area.file_name()) else {
        return Err(outside());
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let real_area = fs::canonicalize(parent)
        .map_err(|source| Error::io(parent, source))?
        .join(name);

    let mut current = real_area
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let steps = std::iter::once(Path::new(name)).chain(relative.iter().map(Path::new));
    let steps: Vec<&Path> = steps.collect();
    for (i, step) in steps.iter().enumerate() {
        let next = current.join(step);
        match fs::symlink_metadata(&next) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Ok(steps[i..].iter().fold(current, |p, s| p.join(s)));
            }
            Err(source) => return Err(Error::io(&next, source)),
            Ok(meta) if meta.file_type().is_symlink() => {
                let escapes = |target: String| Error::Escapes {
                    path: path.to_path_buf(),
                    link: next.clone(),
                    target,
                    area: area.to_path_buf(),
                };
                let target = match fs::canonicalize(&next) {
                    Ok(target) => target,
                    Err(_) => {
                        let named = fs::read_link(&next)
                            .map(|t| format!("{} (which does not exist)", t.display()))
                            .unwrap_or_else(|_| "an unreadable target".to_string());
                        return Err(escapes(named));
                    }
                };
                // `area` itself may not be a link at all: nothing is inside
                // it but itself.
                if i == 0 || !target.starts_with(&real_area) {
                    return Err(escapes(target.display().to_string()));
                }
                current = target;
            }
            Ok(_) => current = next,
        }
    }
    Ok(current)
}

/// Creates `dir` and its missing parents inside `area`; returns its real
/// path.
pub fn create_dir_all(area: &Path, dir: &Path) -> Result<PathBuf, Error> {
    let real = confine(area, dir)?;
    // Every existing part was checked by `confine`; the parts created here
    // are new folders, not links.
    fs::create_dir_all(&real).map_err(|source| Error::io(dir, source))?;
    Ok(real)
}

/// Writes `dir/.gitignore` holding `*` (after a comment saying `why`),
/// unless one is there already: speed's own runtime state under `.speed/`
/// (reviews, the cache, the fix queue, spec review sessions, their locks)
/// never shows in `git status` nor lands in a commit, the way cargo keeps
/// `target/` out. Task files, events and specs are not speed's to hide.
pub fn ignore_in_git(area: &Path, dir: &Path, why: &str) -> Result<(), Error> {
    let path = dir.join(".gitignore");
    if path.exists() {
        return Ok(());
    }
    create_dir_all(area, dir)?;
    write_atomic(
        area,
        &path,
        format!("# Written by speed: {why}\n*\n").as_bytes(),
    )
}

/// Replaces (or creates) `path` with `bytes`: readers see the old file or
/// the whole new one. An existing file keeps its permissions.
pub fn write_atomic(area: &Path, path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let real = confine(area, path)?;
    let dir = parent_dir(area, path, &real)?;
    let temp = Temp::write(&dir, path, bytes, fs::metadata(&real).ok())?;
    temp.file
        .persist(&real)
        .map_err(|err| Error::io(path, err.error))?;
    sync_dir(&dir).map_err(|source| Error::io(path, source))
}

/// Creates `path` holding `bytes` only when nothing is there: true when
/// it was written, false (nothing written) when a file, a folder or a link
/// is there already, even one another process created at the same instant.
/// What a person wrote is never replaced.
pub fn write_if_absent(area: &Path, path: &Path, bytes: &[u8]) -> Result<bool, Error> {
    let real = confine(area, path)?;
    if fs::symlink_metadata(&real).is_ok() {
        return Ok(false);
    }
    let dir = parent_dir(area, path, &real)?;
    let Temp { file, _cleanup } = Temp::write(&dir, path, bytes, None)?;
    match file.persist_noclobber(&real) {
        Ok(_) => {
            sync_dir(&dir).map_err(|source| Error::io(path, source))?;
            Ok(true)
        }
        Err(err) if err.error.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(err) => Err(Error::io(path, err.error)),
    }
}

/// Writes `bytes` to a new file in `dir` named `name(1)`, or `name(2)`, …
/// when that name is taken, even by another process at the same instant.
/// Returns the path written.
pub fn write_new(
    area: &Path,
    dir: &Path,
    name: &dyn Fn(u32) -> String,
    bytes: &[u8],
) -> Result<PathBuf, Error> {
    let real_dir = create_dir_all(area, dir)?;
    sweep_once(area, dir);
    // `_cleanup` lives until the file has its name.
    let Temp {
        file: mut temp,
        _cleanup,
    } = Temp::write(&real_dir, dir, bytes, None)?;
    for n in 1..=10_000 {
        let path = real_dir.join(name(n));
        match temp.persist_noclobber(&path) {
            Ok(_) => {
                sync_dir(&real_dir).map_err(|source| Error::io(&path, source))?;
                return Ok(dir.join(name(n)));
            }
            Err(err) if err.error.kind() == io::ErrorKind::AlreadyExists => temp = err.file,
            Err(err) => return Err(Error::io(&path, err.error)),
        }
    }
    Err(Error::io(
        dir,
        io::Error::new(io::ErrorKind::AlreadyExists, "no free file name"),
    ))
}

/// Appends `line` and a newline to `path` with one write, under an
/// exclusive file lock, so concurrent writers never interleave. When the
/// file does not end in a newline (a crash tore its last line), one is
/// written first, so the torn line does not swallow this one.
pub fn append_line(area: &Path, path: &Path, line: &str) -> Result<(), Error> {
    let real = confine(area, path)?;
    parent_dir(area, path, &real)?;
    let file = open_no_follow(&real, true).map_err(|source| Error::io(path, source))?;
    let _locked = flock(&file, true).map_err(|source| Error::io(path, source))?;
    let length = file
        .metadata()
        .map_err(|source| Error::io(path, source))?
        .len();
    let mut text = String::with_capacity(line.len() + 2);
    if length > 0 && last_byte(&file, length).map_err(|source| Error::io(path, source))? != b'\n' {
        text.push('\n');
    }
    // A line is one record: a newline inside it would split it in two.
    text.push_str(&line.replace('\n', " "));
    text.push('\n');
    (&file)
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_data())
        .map_err(|source| Error::io(path, source))
}

/// Removes the temporary files of dead processes from `dir`; returns how
/// many. A missing folder has none.
pub fn sweep(area: &Path, dir: &Path) -> Result<usize, Error> {
    let real = confine(area, dir)?;
    let entries = match fs::read_dir(&real) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(source) => return Err(Error::io(dir, source)),
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(TEMP_PREFIX)) else {
            continue;
        };
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        let old = meta
            .modified()
            .ok()
            .and_then(|at| SystemTime::now().duration_since(at).ok())
            .is_some_and(|age| age > STALE_AFTER);
        if old || !pid.is_some_and(alive) {
            match fs::remove_file(entry.path()) {
                Ok(()) => removed += 1,
                Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                Err(source) => return Err(Error::io(&entry.path(), source)),
            }
        }
    }
    Ok(removed)
}

/// `sweep`, once per folder and process, before the first write there. A
/// failed sweep leaves debris, not a failed write: it is logged.
pub fn sweep_once(area: &Path, dir: &Path) {
    static SWEPT: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    let first = SWEPT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .get_or_insert_with(HashSet::new)
        .insert(dir.to_path_buf());
    if first {
        match sweep(area, dir) {
            Ok(0) => {}
            Ok(n) => tracing::info!("removed {n} stale temporary files from {}", dir.display()),
            Err(err) => tracing::warn!("could not remove stale temporary files: {err}"),
        }
    }
}

/// An exclusive lock on a file under `area`, held until dropped (or until
/// the process ends, however it ends: the system releases it).
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

impl Lock {
    /// Takes the lock on `path`, waiting up to `wait` for another process
    /// to release it; `Error::Busy` says who holds it.
    pub fn acquire(area: &Path, path: &Path, wait: Duration) -> Result<Lock, Error> {
        let real = confine(area, path)?;
        parent_dir(area, path, &real)?;
        let file = open_no_follow(&real, false).map_err(|source| Error::io(path, source))?;
        let deadline = Instant::now() + wait;
        loop {
            match flock(&file, false) {
                Ok(Some(())) => break,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(LOCK_POLL),
                Ok(None) => {
                    let mut holder = String::new();
                    (&file).read_to_string(&mut holder).ok();
                    let holder = holder.trim();
                    return Err(Error::Busy {
                        path: path.to_path_buf(),
                        holder: if holder.is_empty() {
                            "unknown".to_string()
                        } else {
                            holder.to_string()
                        },
                    });
                }
                Err(source) => return Err(Error::io(path, source)),
            }
        }
        // Who holds it, for whoever finds it busy.
        let holder = format!(
            "pid {}, since {}",
            std::process::id(),
            humantime::format_rfc3339_seconds(SystemTime::now())
        );
        file.set_len(0)
            .and_then(|()| write_at_start(&file, holder.as_bytes()))
            .map_err(|source| Error::io(path, source))?;
        Ok(Lock { _file: file })
    }
}

/// A temporary file being written, removed on interrupt.
struct Temp {
    file: tempfile::NamedTempFile,
    _cleanup: interrupt::Cleanup,
}

impl Temp {
    /// A complete, synced temporary file in `dir` holding `bytes`, with the
    /// permissions of `like` when given.
    fn write(
        dir: &Path,
        shown: &Path,
        bytes: &[u8],
        like: Option<fs::Metadata>,
    ) -> Result<Temp, Error> {
        let failed = |source| Error::io(shown, source);
        let prefix = format!("{TEMP_PREFIX}{}-", std::process::id());
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Like any file a program creates (the umask applies), not the
            // owner-only mode of a temporary file.
            builder.permissions(fs::Permissions::from_mode(0o666));
        }
        let mut file = builder.tempfile_in(dir).map_err(failed)?;
        let path = file.path().to_path_buf();
        let cleanup = interrupt::on_interrupt(move || {
            fs::remove_file(&path).ok();
        });
        file.write_all(bytes).map_err(failed)?;
        if let Some(meta) = like {
            fs::set_permissions(file.path(), meta.permissions()).map_err(failed)?;
        }
        file.as_file().sync_all().map_err(failed)?;
        Ok(Temp {
            file,
            _cleanup: cleanup,
        })
    }
}

/// The real folder that will hold `real`, created if missing, and swept.
fn parent_dir(area: &Path, path: &Path, real: &Path) -> Result<PathBuf, Error> {
    let Some(parent) = path.parent() else {
        return Err(Error::Outside {
            path: path.to_path_buf(),
            area: area.to_path_buf(),
        });
    };
    if real.parent().is_some_and(Path::is_dir) {
        sweep_once(area, parent);
        return Ok(real.parent().map(Path::to_path_buf).unwrap_or_default());
    }
    let dir = create_dir_all(area, parent)?;
    sweep_once(area, parent);
    Ok(dir)
}

/// Opens a file for appending (or reading and writing), creating it, and
/// refusing a link swapped in since `confine` looked.
fn open_no_follow(path: &Path, append: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).create(true);
    if append {
        options.append(true);
    } else {
        options.write(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o666).custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)
}

/// An exclusive `flock` on `file`, released when the file is closed.
/// Blocking, or trying once (`Ok(None)`: someone else holds it).
#[cfg(unix)]
fn flock(file: &File, wait: bool) -> io::Result<Option<()>> {
    use std::os::fd::AsRawFd;
    let operation = if wait {
        libc::LOCK_EX
    } else {
        libc::LOCK_EX | libc::LOCK_NB
    };
    loop {
        // SAFETY: flock(2) on a descriptor the File owns.
        if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
            return Ok(Some(()));
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::Interrupted => {}
            io::ErrorKind::WouldBlock => return Ok(None),
            _ => return Err(err),
        }
    }
}

#[cfg(not(unix))]
fn flock(_: &File, _: bool) -> io::Result<Option<()>> {
    Ok(Some(()))
}

#[cfg(unix)]
fn last_byte(file: &File, length: u64) -> io::Result<u8> {
    use std::os::unix::fs::FileExt;
    let mut byte = [0u8];
    file.read_exact_at(&mut byte, length - 1)?;
    Ok(byte[0])
}

#[cfg(not(unix))]
fn last_byte(_: &File, _: u64) -> io::Result<u8> {
    Ok(b'\n')
}

#[cfg(unix)]
fn write_at_start(file: &File, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(bytes, 0)
}

#[cfg(not(unix))]
fn write_at_start(mut file: &File, bytes: &[u8]) -> io::Result<()> {
    file.write_all(bytes)
}

/// Makes a rename durable.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_: &Path) -> io::Result<()> {
    // Folders cannot be opened for fsync here; the rename is atomic already.
    Ok(())
}

/// Whether a process with this pid exists (one we may not signal counts).
#[cfg(unix)]
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    unsafe {
        libc::kill(pid, 0) == 0
            || io::Error::last_os_error().kind() == io::ErrorKind::PermissionDenied
    }
}

#[cfg(not(unix))]
fn alive(_: u32) -> bool {
    true
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Repo {
        _dir: tempfile::TempDir,
        root: PathBuf,
        speed: PathBuf,
        /// A folder outside the repository.
        outside: PathBuf,
    }

    fn repo() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let speed = root.join(".speed");
        let outside = dir.path().join("outside");
        fs::create_dir_all(speed.join("reviews")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        Repo {
            _dir: dir,
            root,
            speed,
            outside,
        }
    }

    #[test]
    fn writes_inside_the_area_and_creates_folders() {
        let r = repo();
        write_atomic(&r.speed, &r.speed.join("cache/x/y.bin"), b"hello").unwrap();
        assert_eq!(fs::read(r.speed.join("cache/x/y.bin")).unwrap(), b"hello");
        write_atomic(&r.speed, Path::new("reviews/n.json"), b"{}").unwrap();
        assert_eq!(fs::read(r.speed.join("reviews/n.json")).unwrap(), b"{}");
    }

    #[test]
    fn a_link_leading_out_is_refused_for_every_kind_of_write() {
        let r = repo();
        let target = r.outside.join("bashrc");
        fs::write(&target, "original\n").unwrap();
        let log = r.speed.join("reviews/log.jsonl");
        symlink(&target, &log).unwrap();

        let err = append_line(&r.speed, &log, "{}").unwrap_err();
        assert!(matches!(err, Error::Escapes { .. }), "{err:?}");
        let message = err.to_string();
        assert!(message.contains("log.jsonl"), "{message}");
        assert!(message.contains("symbolic link"), "{message}");
        assert!(matches!(
            write_atomic(&r.speed, &log, b"x"),
            Err(Error::Escapes { .. })
        ));
        assert!(matches!(
            Lock::acquire(&r.speed, &log, Duration::ZERO),
            Err(Error::Escapes { .. })
        ));
        assert_eq!(fs::read_to_string(&target).unwrap(), "original\n");
        assert!(fs::symlink_metadata(&log).unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_linked_folder_leading_out_is_refused_and_nothing_is_created_there() {
        let r = repo();
        symlink(&r.outside, r.speed.join("cache")).unwrap();
        let err = write_atomic(&r.speed, &r.speed.join("cache/impact/p.pack"), b"x").unwrap_err();
        assert!(matches!(err, Error::Escapes { .. }), "{err:?}");
        assert_eq!(fs::read_dir(&r.outside).unwrap().count(), 0);
        // The area itself as a link, even to a folder inside the repository.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        fs::create_dir_all(root.join("elsewhere")).unwrap();
        symlink(root.join("elsewhere"), root.join(".speed")).unwrap();
        let err = write_atomic(&root.join(".speed"), Path::new("tasks/1.json"), b"{}").unwrap_err();
        assert!(matches!(err, Error::Escapes { .. }), "{err:?}");
    }

    #[test]
    fn a_link_to_a_source_file_of_the_repository_is_refused_too() {
        let r = repo();
        fs::write(r.root.join("build.sh"), "echo build\n").unwrap();
        symlink("../../build.sh", r.speed.join("reviews/log.jsonl")).unwrap();
        let err = append_line(&r.speed, &r.speed.join("reviews/log.jsonl"), "{}").unwrap_err();
        assert!(matches!(err, Error::Escapes { .. }), "{err:?}");
        assert_eq!(
            fs::read_to_string(r.root.join("build.sh")).unwrap(),
            "echo build\n"
        );
    }

    #[test]
    fn a_dangling_link_is_refused_and_its_target_not_created() {
        let r = repo();
        let target = r.outside.join("new-file");
        symlink(&target, r.speed.join("reviews/nits.json")).unwrap();
        let err = write_atomic(&r.speed, &r.speed.join("reviews/nits.json"), b"[]").unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        assert!(!target.exists());
    }

    #[test]
    fn links_that_stay_inside_the_area_are_followed() {
        let r = repo();
        fs::create_dir_all(r.speed.join("features/alpha/tasks")).unwrap();
        symlink("features/alpha/tasks", r.speed.join("tasks")).unwrap();
        write_atomic(&r.speed, &r.speed.join("tasks/1.json"), b"{}").unwrap();
        assert_eq!(
            fs::read(r.speed.join("features/alpha/tasks/1.json")).unwrap(),
            b"{}"
        );
        assert!(
            fs::symlink_metadata(r.speed.join("tasks"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn paths_with_dot_dot_or_outside_the_area_are_refused() {
        let r = repo();
        for path in [
            r.speed.join("../x"),
            r.root.join("src/main.rs"),
            PathBuf::from("a/../../b"),
        ] {
            assert!(
                matches!(
                    write_atomic(&r.speed, &path, b"x"),
                    Err(Error::Outside { .. })
                ),
                "{}",
                path.display()
            );
        }
    }

    #[test]
    fn a_torn_last_line_does_not_swallow_the_next() {
        let r = repo();
        let log = r.speed.join("reviews/log.jsonl");
        fs::write(&log, "{\"a\":1}\n{\"b\":").unwrap();
        append_line(&r.speed, &log, "{\"c\":3}").unwrap();
        append_line(&r.speed, &log, "{\"d\":4}").unwrap();
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            "{\"a\":1}\n{\"b\":\n{\"c\":3}\n{\"d\":4}\n"
        );
    }

    #[test]
    fn concurrent_appends_keep_every_line_whole() {
        let r = repo();
        let log = r.speed.join("reviews/log.jsonl");
        let line = "x".repeat(10_000);
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    for _ in 0..20 {
                        append_line(&r.speed, &log, &line).unwrap();
                    }
                });
            }
        });
        let text = fs::read_to_string(&log).unwrap();
        assert_eq!(text.lines().count(), 160);
        assert!(text.lines().all(|l| l == line));
    }

    #[test]
    fn new_files_never_take_a_name_already_taken() {
        let r = repo();
        let dir = r.speed.join("reviews");
        let name = |n: u32| {
            if n == 1 {
                "r.json".to_string()
            } else {
                format!("r-{n}.json")
            }
        };
        let written: Vec<PathBuf> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let dir = &dir;
                    let speed = &r.speed;
                    scope.spawn(move || {
                        write_new(speed, dir, &name, format!("{i}").as_bytes()).unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let unique: HashSet<&PathBuf> = written.iter().collect();
        assert_eq!(unique.len(), 8);
        let mut contents: Vec<String> = written
            .iter()
            .map(|p| fs::read_to_string(p).unwrap())
            .collect();
        contents.sort();
        assert_eq!(contents, ["0", "1", "2", "3", "4", "5", "6", "7"]);
    }

    #[test]
    fn an_existing_file_keeps_its_mode_and_a_new_one_is_not_private() {
        use std::os::unix::fs::PermissionsExt;
        let r = repo();
        let path = r.speed.join("reviews/kept.json");
        fs::write(&path, "{}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&r.speed, &path, b"[]").unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o640
        );
        let fresh = r.speed.join("reviews/fresh.json");
        write_atomic(&r.speed, &fresh, b"[]").unwrap();
        assert_ne!(
            fs::metadata(&fresh).unwrap().permissions().mode() & 0o044,
            0
        );
    }

    #[test]
    fn stale_temporary_files_of_dead_processes_are_swept_and_live_ones_kept() {
        let r = repo();
        let dir = r.speed.join("reviews");
        // A pid no process has: above the kernel's maximum.
        let dead = dir.join(format!("{TEMP_PREFIX}4194305-abc.tmp"));
        let live = dir.join(format!("{TEMP_PREFIX}{}-abc.tmp", std::process::id()));
        let other = dir.join("report.json");
        for path in [&dead, &live, &other] {
            fs::write(path, "x").unwrap();
        }
        assert_eq!(sweep(&r.speed, &dir).unwrap(), 1);
        assert!(!dead.exists());
        assert!(live.exists() && other.exists());
    }

    #[test]
    fn a_lock_is_exclusive_across_open_files_and_says_who_holds_it() {
        let r = repo();
        let path = r.speed.join("reviews/locks/task-1.lock");
        let held = Lock::acquire(&r.speed, &path, Duration::ZERO).unwrap();
        let started = Instant::now();
        let err = Lock::acquire(&r.speed, &path, Duration::from_millis(200)).unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(200));
        match &err {
            Error::Busy { holder, .. } => {
                assert!(
                    holder.contains(&format!("pid {}", std::process::id())),
                    "{holder}"
                )
            }
            other => panic!("expected busy, got {other:?}"),
        }
        drop(held);
        // Not `Duration::ZERO`: a test running beside this one may fork to
        // spawn a process, and until that child execs it shares our open
        // file (close-on-exec closes it only at exec), so the lock can
        // outlive `drop` by a moment.
        Lock::acquire(&r.speed, &path, Duration::from_secs(10)).unwrap();
    }
}
