//! Git notes: the one ref speed writes (see the module doc of `git`).
//! A note is text attached to a commit under a notes ref; speed keeps its
//! verdicts under `refs/notes/speed` so they travel with the repository
//! (`git push origin refs/notes/speed`), and what they say is the
//! ledger's business (`ledger::notes`). Here: read a note, replace one
//! (git2), and move a notes ref to and from a remote with the `git`
//! command itself, whose configuration holds the remote's URL and
//! credentials (a CI runner's token included).

use std::path::Path;
use std::time::Duration;

use super::{Error, Repository};
use crate::process;

/// A push or a fetch that takes longer than this is stuck.
const NETWORK_TIMEOUT: Duration = Duration::from_secs(600);

/// The variables that would make git act on another repository than the
/// one speed was pointed at (a hook's environment sets some).
const GIT_ENV: [&str; 6] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
];

/// What a fetch or push of notes did, for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Synced {
    /// The remote holds no notes under the ref (a fetch).
    NoneThere,
    /// There was nothing here to push.
    NoneHere,
    /// Already the same on both sides.
    UpToDate,
    /// The ref moved here to the remote's (a fetch), or there to ours.
    FastForward,
    /// Both sides had notes the other lacked: joined line by line.
    Merged,
}

/// A note larger than this is not one speed wrote, and is not read.
const MAX_NOTE: usize = 1 << 20;

impl Repository {
    /// The note on `commit` under `notes_ref`, None when there is none.
    /// A note past 1 MiB is refused (`Error::Note`).
    pub fn note(&self, notes_ref: &str, commit: &str) -> Result<Option<String>, Error> {
        let oid = self.commit(commit)?.id();
        match self.repo.find_note(Some(notes_ref), oid) {
            Ok(note) => {
                let bytes = note.message_bytes();
                if bytes.len() > MAX_NOTE {
                    return Err(Error::Note {
                        commit: commit.to_string(),
                        message: format!("it is larger than {MAX_NOTE} bytes: not read"),
                    });
                }
                Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
            }
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(Error::Note {
                commit: commit.to_string(),
                message: e.message().to_string(),
            }),
        }
    }

    /// Replace the note on `commit` under `notes_ref` with `text`, as a new
    /// commit of the notes ref (by the repository's user, else "speed"
    /// when none is configured, as on a CI runner). The caller serialises
    /// writers: git2 moves the ref without comparing it first.
    pub fn set_note(&self, notes_ref: &str, commit: &str, text: &str) -> Result<(), Error> {
        let oid = self.commit(commit)?.id();
        let signature = self
            .repo
            .signature()
            .or_else(|_| git2::Signature::now("speed", "speed@localhost"))
            .map_err(|e| Error::Note {
                commit: commit.to_string(),
                message: e.message().to_string(),
            })?;
        self.repo
            .note(&signature, &signature, Some(notes_ref), oid, text, true)
            .map(|_| ())
            .map_err(|e| Error::Note {
                commit: commit.to_string(),
                message: e.message().to_string(),
            })
    }
}

/// `git ARGS` in `root`, bounded by `NETWORK_TIMEOUT`, the identity
/// `speed` when the repository has none (a merge of notes is a commit, and
/// a CI runner has no user configured).
fn git(repo: &Repository, args: &[&str]) -> Result<process::Output, Error> {
    let root: &Path = repo.root();
    let mut command = std::process::Command::new("git");
    command.current_dir(root);
    if repo.user().1.is_none() {
        command.args(["-c", "user.name=speed", "-c", "user.email=speed@localhost"]);
    }
    command.args(args);
    for var in GIT_ENV {
        command.env_remove(var);
    }
    // Never a prompt for credentials: there is nobody to answer it in CI,
    // and a hook must not hang.
    command.env("GIT_TERMINAL_PROMPT", "0");
    let limits = process::Limits {
        timeout: NETWORK_TIMEOUT,
        stdout: process::Capture::Tail(64 << 10),
        stderr: process::Capture::Tail(64 << 10),
    };
    process::run(command, Vec::new(), &limits).map_err(|e| Error::Command {
        what: format!("git {}", args.join(" ")),
        message: e.to_string(),
    })
}

fn checked(repo: &Repository, args: &[&str]) -> Result<String, Error> {
    let out = git(repo, args)?;
    if !out.status.success() {
        return Err(Error::Command {
            what: format!("git {}", args.join(" ")),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Repository {
    /// How many commits carry a note under `notes_ref`.
    pub fn notes_count(&self, notes_ref: &str) -> Result<usize, Error> {
        match self.repo.notes(Some(notes_ref)) {
            Ok(notes) => Ok(notes.count()),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(0),
            Err(e) => Err(Error::Note {
                commit: notes_ref.to_string(),
                message: e.message().to_string(),
            }),
        }
    }

    /// The commit a ref points at, None when it does not exist.
    fn ref_target(&self, name: &str) -> Option<String> {
        self.repo
            .find_reference(name)
            .ok()
            .and_then(|r| r.peel_to_commit().ok())
            .map(|c| c.id().to_string())
    }

    /// Fetch `notes_ref` from `remote` and join it with ours: a fast
    /// forward when one side holds all the other has, else a merge that
    /// keeps every line of both sides' notes on a commit (`git notes merge
    /// -s cat_sort_uniq`). The remote's ref is fetched to a ref of its own
    /// first, so ours is never overwritten.
    pub fn fetch_notes(&self, remote: &str, notes_ref: &str) -> Result<Synced, Error> {
        let incoming = format!("{notes_ref}-incoming");
        let spec = format!("+{notes_ref}:{incoming}");
        let out = git(self, &["fetch", "--no-tags", "--", remote, &spec])?;
        if !out.status.success() {
            let message = String::from_utf8_lossy(&out.stderr).trim().to_string();
            if message.contains("couldn't find remote ref") {
                return Ok(Synced::NoneThere);
            }
            return Err(Error::Command {
                what: format!("git fetch {remote} {spec}"),
                message,
            });
        }
        let joined = self.join_notes(notes_ref, &incoming);
        let _ = checked(self, &["update-ref", "-d", &incoming]);
        joined
    }

    fn join_notes(&self, notes_ref: &str, incoming: &str) -> Result<Synced, Error> {
        let Some(theirs) = self.ref_target(incoming) else {
            return Ok(Synced::NoneThere);
        };
        let Some(ours) = self.ref_target(notes_ref) else {
            checked(self, &["update-ref", notes_ref, &theirs])?;
            return Ok(Synced::FastForward);
        };
        if ours == theirs || self.is_ancestor(&theirs, &ours)? {
            return Ok(Synced::UpToDate);
        }
        if self.is_ancestor(&ours, &theirs)? {
            checked(self, &["update-ref", notes_ref, &theirs, &ours])?;
            return Ok(Synced::FastForward);
        }
        let arg = format!("--ref={notes_ref}");
        checked(
            self,
            &[
                "notes",
                &arg,
                "merge",
                "--strategy=cat_sort_uniq",
                "--quiet",
                incoming,
            ],
        )?;
        Ok(Synced::Merged)
    }

    /// Push `notes_ref` to `remote`. When the remote has notes ours lack
    /// (another job pushed first), fetch and join them, then push again,
    /// a few times at most.
    pub fn push_notes(&self, remote: &str, notes_ref: &str) -> Result<Synced, Error> {
        if self.ref_target(notes_ref).is_none() {
            return Ok(Synced::NoneHere);
        }
        let spec = format!("{notes_ref}:{notes_ref}");
        let mut joined = false;
        for _ in 0..3 {
            let out = git(self, &["push", "--porcelain", "--", remote, &spec])?;
            let stdout = String::from_utf8_lossy(&out.stdout).to_string();
            if out.status.success() {
                return Ok(if stdout.contains("[up to date]") {
                    Synced::UpToDate
                } else if joined {
                    Synced::Merged
                } else {
                    Synced::FastForward
                });
            }
            let stderr = String::from_utf8_lossy(&out.stderr).to_string();
            let behind = ["[rejected]", "non-fast-forward", "fetch first"]
                .iter()
                .any(|w| stdout.contains(w) || stderr.contains(w));
            if !behind {
                return Err(Error::Command {
                    what: format!("git push {remote} {spec}"),
                    message: format!("{}{}", stdout.trim(), stderr.trim()),
                });
            }
            self.fetch_notes(remote, notes_ref)?;
            joined = true;
        }
        Err(Error::Command {
            what: format!("git push {remote} {spec}"),
            message: "the remote's notes kept moving while speed joined them: push again".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_written_read_back_and_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let raw = git2::Repository::init(dir.path()).unwrap();
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        let tree = raw.treebuilder(None).unwrap().write().unwrap();
        let tree = raw.find_tree(tree).unwrap();
        let commit = raw
            .commit(Some("HEAD"), &sig, &sig, "c", &tree, &[])
            .unwrap()
            .to_string();
        let repo = Repository::open(dir.path()).unwrap();
        assert_eq!(repo.note("refs/notes/speed", &commit).unwrap(), None);
        repo.set_note("refs/notes/speed", &commit, "one\n").unwrap();
        repo.set_note("refs/notes/speed", &commit, "one\ntwo\n")
            .unwrap();
        assert_eq!(
            repo.note("refs/notes/speed", &commit).unwrap().as_deref(),
            Some("one\ntwo\n")
        );
        // Another ref is another set of notes.
        assert_eq!(repo.note("refs/notes/commits", &commit).unwrap(), None);
    }
}
