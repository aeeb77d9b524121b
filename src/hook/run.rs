//! What a hook script calls, `speed hook run <name> [ARGS]`, up to the gate:
//! which hook it is, what git gave it (arguments, the pushed refs on standard
//! input), the user's own hook kept as `<name>.local` (run first, with the
//! same arguments and input, under a time limit), and what the merge or
//! push brings into the main branch.

use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::git::{MainBranch, Repository};
use crate::process;

use super::Error;
use super::gate::Incoming;

/// Standard input past this size is not what git gives a hook.
const MAX_INPUT: u64 = 16 << 20;

/// A hook speed runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    PreMergeCommit,
    /// Guards only the conclusion of a merge (`git commit` while
    /// `MERGE_HEAD` exists), which git does not pass through
    /// pre-merge-commit: after a conflict, or after pre-merge-commit blocked.
    PreCommit,
    PrePush,
}

impl Hook {
    pub fn parse(name: &str) -> Result<Hook, Error> {
        match name {
            "pre-merge-commit" => Ok(Hook::PreMergeCommit),
            "pre-commit" => Ok(Hook::PreCommit),
            "pre-push" => Ok(Hook::PrePush),
            _ => Err(Error::UnknownHook {
                name: name.to_string(),
            }),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Hook::PreMergeCommit => "pre-merge-commit",
            Hook::PreCommit => "pre-commit",
            Hook::PrePush => "pre-push",
        }
    }

    /// What it guards, for messages: "merge" or "push".
    pub fn verb(self) -> &'static str {
        match self {
            Hook::PreMergeCommit | Hook::PreCommit => "merge",
            Hook::PrePush => "push",
        }
    }

    /// Whether git gives this hook data on standard input.
    pub fn reads_input(self) -> bool {
        self == Hook::PrePush
    }
}

/// One line git gives pre-push: `<local ref> <local sha> <remote ref> <remote sha>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedRef {
    pub local_ref: String,
    pub local_sha: String,
    pub remote_ref: String,
    pub remote_sha: String,
}

impl PushedRef {
    /// A deletion pushes no commit.
    pub fn deletes(&self) -> bool {
        is_zero(&self.local_sha)
    }

    /// The remote has no such branch yet.
    pub fn creates(&self) -> bool {
        is_zero(&self.remote_sha)
    }
}

fn is_zero(sha: &str) -> bool {
    !sha.is_empty() && sha.bytes().all(|b| b == b'0')
}

fn is_sha(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The pushed refs, one per non-blank line. The local ref may hold spaces
/// (`(delete)` or an odd name), so a line is split from the right.
pub fn parse_pushed(text: &str) -> Result<Vec<PushedRef>, Error> {
    let mut refs = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = || Error::Input {
            hook: "pre-push".to_string(),
            message: format!(
                "standard input line {}: expected `<local ref> <local sha> <remote ref> <remote sha>`, got {:?}",
                n + 1,
                line.chars().take(200).collect::<String>()
            ),
        };
        let mut parts = line.trim_end().rsplitn(4, ' ');
        let (Some(remote_sha), Some(remote_ref), Some(local_sha), Some(local_ref)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        if !is_sha(local_sha) || !is_sha(remote_sha) || remote_ref.is_empty() {
            return Err(bad());
        }
        refs.push(PushedRef {
            local_ref: local_ref.to_string(),
            local_sha: local_sha.to_ascii_lowercase(),
            remote_ref: remote_ref.to_string(),
            remote_sha: remote_sha.to_ascii_lowercase(),
        });
    }
    Ok(refs)
}

/// The pushed ref as the pre-commit framework describes it in its
/// environment (it reads git's input itself and passes the first ref on).
pub fn pushed_from_pre_commit(env: &dyn Fn(&str) -> Option<String>) -> Option<PushedRef> {
    let to = env("PRE_COMMIT_TO_REF").filter(|s| is_sha(s))?;
    Some(PushedRef {
        local_ref: env("PRE_COMMIT_LOCAL_BRANCH").unwrap_or_default(),
        local_sha: to,
        remote_ref: env("PRE_COMMIT_REMOTE_BRANCH")?,
        remote_sha: env("PRE_COMMIT_FROM_REF")
            .filter(|s| is_sha(s))
            .unwrap_or_else(|| "0".repeat(40)),
    })
}

/// What a merge (pre-merge-commit, pre-commit) or a push (pre-push, with
/// its arguments and the refs git wrote on its input; under the pre-commit
/// framework, from its variables) brings into the main branch. `vars` is
/// the environment.
pub fn incoming(
    repo: &Repository,
    main: &MainBranch,
    hook: Hook,
    args: &[String],
    input: &[u8],
    vars: &[(String, String)],
) -> Result<Vec<Incoming>, Error> {
    let env = |key: &str| vars.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    match hook {
        Hook::PreMergeCommit | Hook::PreCommit => Ok(merge_incoming(repo, main, hook, vars)?
            .into_iter()
            .collect()),
        Hook::PrePush => {
            let (remote, pushed) = match pushed_from_pre_commit(&env) {
                Some(pushed) if env("PRE_COMMIT").as_deref() == Some("1") => (
                    env("PRE_COMMIT_REMOTE_NAME").unwrap_or_else(|| "origin".to_string()),
                    vec![pushed],
                ),
                _ => (
                    args.first()
                        .cloned()
                        .unwrap_or_else(|| "origin".to_string()),
                    parse_pushed(&String::from_utf8_lossy(input))?,
                ),
            };
            push_incoming(repo, main, &remote, &pushed)
        }
    }
}

/// What a merge brings into the main branch; None when HEAD is not the main
/// branch, or (for pre-commit) when no merge is being concluded.
///
/// git runs pre-merge-commit before it writes `MERGE_HEAD` (it writes it
/// only when the merge stops, and `git commit` then concludes it, running
/// pre-commit); what it does set are `GITHEAD_<commit>` variables naming
/// each commit being merged. Either is read; for pre-merge-commit, finding
/// neither while HEAD is the main branch is an error, never a pass.
pub fn merge_incoming(
    repo: &Repository,
    main: &MainBranch,
    hook: Hook,
    vars: &[(String, String)],
) -> Result<Option<Incoming>, Error> {
    if repo.current_branch().as_deref() != Some(main.name.as_str()) {
        return Ok(None);
    }
    let mut tips = repo.merge_heads()?;
    if tips.is_empty() && hook == Hook::PreMergeCommit {
        tips = vars
            .iter()
            .filter_map(|(key, _)| key.strip_prefix("GITHEAD_"))
            .filter(|id| is_sha(id))
            .map(str::to_ascii_lowercase)
            .collect();
        tips.sort();
        tips.dedup();
        if tips.is_empty() {
            return Err(Error::Input {
                hook: hook.name().to_string(),
                message: "cannot tell which commits this merge brings in: git set neither MERGE_HEAD nor GITHEAD_<commit>".to_string(),
            });
        }
    }
    if tips.is_empty() {
        return Ok(None);
    }
    Ok(Some(Incoming {
        tips,
        known: repo.head_commit().into_iter().collect(),
    }))
}

/// What each pushed ref that updates the remote's main branch brings in:
/// the commits the remote did not have (its old commit, or for a new branch
/// what the remote was last seen to have).
pub fn push_incoming(
    repo: &Repository,
    main: &MainBranch,
    remote: &str,
    pushed: &[PushedRef],
) -> Result<Vec<Incoming>, Error> {
    let branch = main
        .name
        .strip_prefix(&format!("{remote}/"))
        .unwrap_or(&main.name);
    let target = format!("refs/heads/{branch}");
    let mut out = Vec::new();
    for r in pushed {
        if r.remote_ref != target || r.deletes() {
            continue;
        }
        let known = if !r.creates() && repo.has_commit(&r.remote_sha) {
            vec![r.remote_sha.clone()]
        } else {
            repo.remote_tips(remote)?
        };
        out.push(Incoming {
            tips: vec![r.local_sha.clone()],
            known,
        });
    }
    Ok(out)
}

/// Standard input, for a hook git gives input to; nothing when it is a
/// terminal (a person running the hook by hand).
pub fn read_input() -> Result<Vec<u8>, Error> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(Vec::new());
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .take(MAX_INPUT + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| Error::Io {
            path: "standard input".into(),
            source,
        })?;
    if bytes.len() as u64 > MAX_INPUT {
        return Err(Error::Input {
            hook: "pre-push".to_string(),
            message: format!("standard input is larger than {MAX_INPUT} bytes"),
        });
    }
    Ok(bytes)
}

/// How the user's own hook ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Local {
    Passed,
    /// Its exit code (None when a signal ended it).
    Failed(Option<i32>),
    TimedOut(Duration),
    /// Git would not run it either (it is not executable): skipped.
    NotExecutable,
}

/// Run the user's hook at `path` with git's arguments and, when given, the
/// input git gave (otherwise it inherits speed's standard input), in the
/// current folder; stop it after `limit`.
///
/// It runs as a `process::Group`, so that stopping it stops what it started
/// too (a test run left behind would keep git's output open, and whoever
/// reads it, a script running `git merge`, would wait for it), and Ctrl-C
/// or speed's own end stops it the same way.
pub fn run_local(
    path: &Path,
    args: &[String],
    input: Option<&[u8]>,
    limit: Duration,
) -> Result<Local, Error> {
    if !executable(path) {
        return Ok(Local::NotExecutable);
    }
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut command = Command::new(path);
    command.args(args).stdin(match input {
        Some(_) => Stdio::piped(),
        None => Stdio::inherit(),
    });
    let mut group = process::Group::spawn(command).map_err(io)?;
    if let (Some(bytes), Some(mut stdin)) = (input, group.child().stdin.take()) {
        let bytes = bytes.to_vec();
        // A hook that does not read its input must not block speed on a
        // full pipe; a hook that exits early closes it (ignored).
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
    }
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        if group.exited().map_err(io)? {
            let status = group.finish().map_err(io)?;
            return Ok(match status.code() {
                Some(0) => Local::Passed,
                code => Local::Failed(code),
            });
        }
        if started.elapsed() >= limit {
            group.kill();
            let _ = group.finish();
            return Ok(Local::TimedOut(limit));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

#[cfg(unix)]
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn executable(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const Z: &str = "0000000000000000000000000000000000000000";

    #[test]
    fn pushed_refs_parse_from_the_right() {
        let text =
            format!("refs/heads/main {A} refs/heads/main {Z}\n\n(delete) {Z} refs/heads/old {A}\n");
        let refs = parse_pushed(&text).unwrap();
        assert_eq!(refs.len(), 2);
        assert!(refs[0].creates() && !refs[0].deletes());
        assert_eq!(refs[1].local_ref, "(delete)");
        assert!(refs[1].deletes());
        for bad in ["refs/heads/main", "a b c d", &format!("x {A} y zz")] {
            let err = parse_pushed(bad).unwrap_err().to_string();
            assert!(err.contains("line 1"), "{err}");
        }
    }

    #[test]
    fn pre_commit_environment_gives_one_ref() {
        let env = |key: &str| match key {
            "PRE_COMMIT_TO_REF" => Some(A.to_string()),
            "PRE_COMMIT_REMOTE_BRANCH" => Some("refs/heads/main".to_string()),
            _ => None,
        };
        let r = pushed_from_pre_commit(&env).unwrap();
        assert_eq!(r.remote_ref, "refs/heads/main");
        assert!(r.creates());
        assert!(pushed_from_pre_commit(&|_| None).is_none());
    }

    #[cfg(unix)]
    #[test]
    fn a_local_hook_sees_arguments_and_input_and_is_stopped_in_time() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("seen");
        let hook = dir.path().join("pre-push.local");
        std::fs::write(
            &hook,
            format!(
                "#!/bin/sh\necho \"$@\" > {0}\ncat >> {0}\nexit 3\n",
                out.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        let got = run_local(
            &hook,
            &["origin".into(), "url".into()],
            Some(b"line\n"),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(got, Local::Failed(Some(3)));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "origin url\nline\n");

        std::fs::write(&hook, "#!/bin/sh\nsleep 30\n").unwrap();
        let started = Instant::now();
        let got = run_local(&hook, &[], None, Duration::from_millis(200)).unwrap();
        assert!(matches!(got, Local::TimedOut(_)), "{got:?}");
        assert!(started.elapsed() < Duration::from_secs(5));

        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(
            run_local(&hook, &[], None, Duration::from_secs(1)).unwrap(),
            Local::NotExecutable
        );
    }
}
