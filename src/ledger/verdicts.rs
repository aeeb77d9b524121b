//! The verdicts speed reached on each head commit, kept under
//! `.speed/cache/verdicts/` so the merge gate can tell in milliseconds
//! whether a commit is covered: no index, no tokenizer, no model.
//!
//! One file per head commit (`<commit>.verdicts`) and one per reviewed diff
//! (`diff-<sha256>.verdicts`, for "the same diff against the same spec"):
//! a header line carrying the checksum of the rest, then one JSON record per
//! line, oldest first. A damaged, truncated or unknown file is a miss, never
//! a verdict.
//!
//! The cache is safe to delete: the review log (`.speed/reviews/log.jsonl`)
//! carries `head_commit` on every line, so a head the cache does not know is
//! looked up there and written back. Only the same-diff index is lost with
//! the cache (a rebased branch is then reviewed again).
//!
//! This module stores and finds records; deciding what covers a commit is
//! the gate's job (`crate::hook`), and nothing here calls git or a model.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::fsx;
use crate::verdict;
use crate::work::Work;

use super::Error;
use super::report::Report;
use super::{LOG_FILE, area, now_rfc3339};

pub const DIR: &str = ".speed/cache/verdicts";
const HEADER: &str = "speed-verdicts 1";
/// A file larger than this is not a cache file speed wrote.
const MAX_FILE: u64 = 4 << 20;
/// Records kept per file: a head reviewed more often than this keeps its
/// latest ones (the log keeps them all).
const MAX_RECORDS: usize = 256;
/// How long a write waits for another writer of the cache: writes take
/// milliseconds.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// What speed (or a person, for an override) decided about a head commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    RequestChanges,
    /// An offline review found nothing blocking; nobody checked the spec, so
    /// it covers nothing.
    ChecksPassed,
    /// A person accepted the work despite its review (`speed override`, or a
    /// hook bypassed with a reason).
    Override,
    /// A person confirmed a model's approval that waited for one
    /// (`review.human`, `speed approve`).
    HumanApprove,
    /// A person turned a model's approval down (`speed reject`).
    HumanReject,
    /// A person was asked and decided nothing: the approval still waits.
    Skipped,
}

impl Decision {
    pub fn parse(word: &str) -> Option<Decision> {
        match word {
            "approve" => Some(Decision::Approve),
            "request_changes" => Some(Decision::RequestChanges),
            "checks_passed" => Some(Decision::ChecksPassed),
            "override" => Some(Decision::Override),
            "human_approve" => Some(Decision::HumanApprove),
            "human_reject" => Some(Decision::HumanReject),
            "skipped" => Some(Decision::Skipped),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::RequestChanges => "request_changes",
            Decision::ChecksPassed => "checks_passed",
            Decision::Override => "override",
            Decision::HumanApprove => "human_approve",
            Decision::HumanReject => "human_reject",
            Decision::Skipped => "skipped",
        }
    }

    /// A person's word on a model's approval, rather than a review's.
    pub fn is_human(self) -> bool {
        matches!(
            self,
            Decision::HumanApprove | Decision::HumanReject | Decision::Skipped
        )
    }
}

pub use super::report::SpecFile;

/// One decision about one head commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defect: Option<String>,
    pub head_commit: String,
    pub decision: Decision,
    /// When (RFC 3339).
    pub at: String,
    /// `sha256:<hex>` of the reviewed diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The spec documents the review read at the main branch's commit: the
    /// same diff is covered again only while these are unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub specs: Vec<SpecFile>,
    /// Overrides: who, why, and how (`speed override`, a hook bypass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// An approval that waits for a person (`review.human`): it covers
    /// nothing until a `HumanApprove` record of the same head.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub awaiting_human: bool,
}

impl Record {
    pub fn work(&self) -> Option<Work> {
        match (&self.task, &self.defect) {
            (Some(id), _) => Some(Work::Task {
                id: id.clone(),
                feature: self.feature.clone(),
            }),
            (None, Some(name)) => Some(Work::Defect { name: name.clone() }),
            (None, None) => None,
        }
    }

    pub fn is_for(&self, work: &Work) -> bool {
        self.work().as_ref() == Some(work)
    }

    /// The record a review log line describes: a decision about a task or a
    /// defect at a head commit, from a review that completed (a failed
    /// review decided nothing) or an override.
    pub fn from_log_line(line: &Value) -> Option<Record> {
        let text = |key: &str| line.get(key).and_then(Value::as_str).map(str::to_string);
        let decision = Decision::parse(line.get("decision")?.as_str()?)?;
        if decision != Decision::Override && !line.get("error").is_none_or(Value::is_null) {
            return None;
        }
        let task = match line.get("task") {
            Some(Value::String(id)) => Some(id.clone()),
            Some(Value::Number(id)) => Some(id.to_string()),
            _ => None,
        };
        Some(Record {
            task,
            feature: text("feature"),
            defect: text("defect"),
            head_commit: text("head_commit")?,
            decision,
            at: text("at").unwrap_or_default(),
            diff: line
                .get("hashes")
                .and_then(|h| h.get("diff"))
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
                .map(str::to_string),
            specs: line
                .get("hashes")
                .and_then(|h| h.get("spec_files"))
                .and_then(|f| serde_json::from_value(f.clone()).ok())
                .unwrap_or_default(),
            by: text("by"),
            reason: text("reason"),
            via: text("via"),
            awaiting_human: line.get("human_review").and_then(Value::as_str) == Some("pending"),
        })
    }
}

/// Where a lookup found its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Cache,
    /// The cache did not know the head; the review log did.
    Log,
    /// Neither knew it; a git note under `refs/notes/speed` did (a verdict
    /// reached on another machine).
    Notes,
    Nowhere,
}

/// The records about one piece of work at one head (or one diff), oldest
/// first, and what was odd on the way (a damaged file, an unreadable log).
#[derive(Debug, Clone)]
pub struct Found {
    pub records: Vec<Record>,
    pub source: Source,
    pub notes: Vec<String>,
}

/// Which records may be trusted: a file a commit under check carries could
/// have been written by that commit's author, not by speed.
#[derive(Debug, Clone, Copy)]
pub struct Trust {
    pub cache: bool,
    pub log: bool,
}

/// The verdict cache of one repository.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// `root` is the repository's work-tree root.
    pub fn open(root: &Path) -> Store {
        Store {
            root: root.to_path_buf(),
        }
    }

    fn dir(&self) -> PathBuf {
        self.root.join(DIR)
    }

    fn head_file(&self, commit: &str) -> Option<PathBuf> {
        is_hex(commit).then(|| self.dir().join(format!("{commit}.verdicts")))
    }

    fn diff_file(&self, diff: &str) -> Option<PathBuf> {
        let hex = diff.strip_prefix("sha256:")?;
        is_hex(hex).then(|| self.dir().join(format!("diff-{hex}.verdicts")))
    }

    /// What was decided about `work` at head `commit`: from the cache, else
    /// from the review log (and then written back to the cache).
    pub fn at_head(&self, commit: &str, work: &Work, trust: Trust) -> Found {
        let mut notes = Vec::new();
        if trust.cache {
            if let Some(path) = self.head_file(commit) {
                let records = read_records(&path, &mut notes);
                let mine: Vec<Record> = records.into_iter().filter(|r| r.is_for(work)).collect();
                if !mine.is_empty() {
                    return Found {
                        records: mine,
                        source: Source::Cache,
                        notes,
                    };
                }
            }
        }
        if !trust.log {
            return Found {
                records: Vec::new(),
                source: Source::Nowhere,
                notes,
            };
        }
        let logged = self.logged(commit, &mut notes);
        let mine: Vec<Record> = logged.iter().filter(|r| r.is_for(work)).cloned().collect();
        if mine.is_empty() {
            return Found {
                records: mine,
                source: Source::Nowhere,
                notes,
            };
        }
        if trust.cache {
            if let Err(err) = self.rebuild(commit, logged) {
                notes.push(format!(
                    "could not write the verdict back to the cache: {err}"
                ));
            }
        }
        Found {
            records: mine,
            source: Source::Log,
            notes,
        }
    }

    /// The reviews of `work` whose diff hashed to `diff`, whatever their head.
    pub fn with_diff(&self, diff: &str, work: &Work) -> Found {
        let mut notes = Vec::new();
        let records: Vec<Record> = match self.diff_file(diff) {
            Some(path) => read_records(&path, &mut notes)
                .into_iter()
                .filter(|r| r.is_for(work))
                .collect(),
            None => Vec::new(),
        };
        let source = if records.is_empty() {
            Source::Nowhere
        } else {
            Source::Cache
        };
        Found {
            records,
            source,
            notes,
        }
    }

    /// Keep a decision: under its head, and a review's also under its diff.
    pub fn add(&self, record: &Record) -> Result<(), Error> {
        let Some(head) = self.head_file(&record.head_commit) else {
            return Err(Error::Input {
                path: self.dir(),
                message: format!("{:?} is not a commit id", record.head_commit),
            });
        };
        self.append(&head, std::slice::from_ref(record))?;
        // A person's word is on one head, like an override: not on a diff.
        let reviewed = matches!(
            record.decision,
            Decision::Approve | Decision::RequestChanges
        );
        if let (true, Some(diff)) = (reviewed, record.diff.as_deref()) {
            if let Some(path) = self.diff_file(diff) {
                self.append(&path, std::slice::from_ref(record))?;
            }
        }
        Ok(())
    }

    /// The decisions the log holds about `commit`, oldest first. Only lines
    /// holding the commit's id are parsed, so a long log costs a byte search.
    fn logged(&self, commit: &str, notes: &mut Vec<String>) -> Vec<Record> {
        let path = self.root.join(LOG_FILE);
        let bytes = match read_regular(&path, u64::MAX) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Vec::new(),
            Err(why) => {
                notes.push(format!("{}: {why}", path.display()));
                return Vec::new();
            }
        };
        let mut records = Vec::new();
        let mut last_line_start = usize::MAX;
        for at in memchr::memmem::find_iter(&bytes, commit.as_bytes()) {
            let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
            if start == last_line_start {
                continue;
            }
            last_line_start = start;
            let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
            let Ok(line) = serde_json::from_slice::<Value>(&bytes[start..end]) else {
                continue;
            };
            if let Some(record) = Record::from_log_line(&line) {
                if record.head_commit == commit {
                    records.push(record);
                }
            }
        }
        records
    }

    /// Write a head's file afresh from the log's records about it.
    fn rebuild(&self, commit: &str, records: Vec<Record>) -> Result<(), Error> {
        match self.head_file(commit) {
            Some(path) => {
                let _lock = self.lock()?;
                self.write(&path, &records)
            }
            None => Ok(()),
        }
    }

    /// Read, add, write back, under the cache's lock: two reviews of
    /// different tasks at one head must not lose each other's record.
    fn append(&self, path: &Path, new: &[Record]) -> Result<(), Error> {
        let _lock = self.lock()?;
        let mut records = read_records(path, &mut Vec::new());
        records.extend_from_slice(new);
        self.write(path, &records)
    }

    fn lock(&self) -> Result<fsx::Lock, Error> {
        let area = area(&self.root);
        fsx::create_dir_all(&area, &self.dir())?;
        Ok(fsx::Lock::acquire(
            &area,
            &self.dir().join(".lock"),
            LOCK_WAIT,
        )?)
    }

    /// Written through `fsx`: inside `.speed/` only, replaced atomically.
    fn write(&self, path: &Path, records: &[Record]) -> Result<(), Error> {
        let area = area(&self.root);
        fsx::create_dir_all(&area, &self.dir())?;
        ignore_in_git(&area, &self.root.join(".speed/cache"))?;
        let keep = &records[records.len().saturating_sub(MAX_RECORDS)..];
        Ok(fsx::write_atomic(&area, path, &encode(keep))?)
    }
}

/// Keep a completed review's decision about a task's head (after its log
/// line is written, so the log stays the fuller record). It is a cache: a
/// failure to write it costs a lookup in the log later, not the review.
pub fn keep_review(root: &Path, work: Option<Work>, report: &Report) {
    let Some(work) = work else {
        return;
    };
    let decision = match report.verdict {
        Some(verdict::Kind::Approve) => Decision::Approve,
        Some(verdict::Kind::RequestChanges) => Decision::RequestChanges,
        Some(verdict::Kind::ChecksPassed) => Decision::ChecksPassed,
        None => return,
    };
    let (task, feature, defect) = match work {
        Work::Task { id, feature } => (Some(id), feature, None),
        Work::Defect { name } => (None, None, Some(name)),
    };
    let record = Record {
        task,
        feature,
        defect,
        head_commit: report.head_commit.clone(),
        decision,
        at: now_rfc3339(),
        diff: Some(report.hashes.diff.clone()).filter(|d| !d.is_empty()),
        specs: report.hashes.spec_files.clone(),
        by: None,
        reason: None,
        via: None,
        awaiting_human: report.human_review.as_ref().is_some_and(|h| h.is_pending()),
    };
    if let Err(err) = Store::open(root).add(&record) {
        tracing::warn!("the verdict cache was not updated: {err}");
    }
}

/// A header line with the checksum of the body, then one record per line.
fn encode(records: &[Record]) -> Vec<u8> {
    let mut body = String::new();
    for record in records {
        // A record is plain strings and enums: it always serialises.
        body.push_str(&serde_json::to_string(record).unwrap_or_default());
        body.push('\n');
    }
    let mut out = format!("{HEADER} {}\n", checksum(body.as_bytes())).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// The records of a file whose checksum holds; none otherwise.
fn decode(bytes: &[u8]) -> Result<Vec<Record>, &'static str> {
    let newline = memchr::memchr(b'\n', bytes).ok_or("no header line")?;
    let header = std::str::from_utf8(&bytes[..newline]).map_err(|_| "no header line")?;
    let sum = header
        .strip_prefix(HEADER)
        .and_then(|rest| rest.strip_prefix(' '))
        .ok_or("not a verdict file of this version")?;
    let body = &bytes[newline + 1..];
    if checksum(body) != sum {
        return Err("its checksum does not match (damaged or edited)");
    }
    body.split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).map_err(|_| "a record does not parse"))
        .collect()
}

fn checksum(body: &[u8]) -> String {
    crate::digest::sha256(body)
}

/// A missing file is no records; a damaged one is no records and a note.
fn read_records(path: &Path, notes: &mut Vec<String>) -> Vec<Record> {
    match read_regular(path, MAX_FILE) {
        Ok(None) => Vec::new(),
        Ok(Some(bytes)) => decode(&bytes).unwrap_or_else(|why| {
            notes.push(format!("{} ignored: {why}", path.display()));
            Vec::new()
        }),
        Err(why) => {
            notes.push(format!("{} ignored: {why}", path.display()));
            Vec::new()
        }
    }
}

/// A regular file's bytes (None when absent). Anything else at the path (a
/// folder, a pipe that would block the read forever, a device) is refused,
/// and so is a file past `limit` bytes.
pub(super) fn read_regular(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, String> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    if !meta.is_file() {
        return Err("not a regular file".to_string());
    }
    if meta.len() > limit {
        return Err(format!("larger than {limit} bytes"));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    fs::File::open(path)
        .and_then(|f| f.take(limit).read_to_end(&mut bytes))
        .map_err(|e| e.to_string())?;
    Ok(Some(bytes))
}

/// A `.gitignore` of `*` in the cache root, as the impact cache writes, so
/// the cache never shows in `git status` or lands in a commit.
pub(super) fn ignore_in_git(area: &Path, cache_root: &Path) -> Result<(), Error> {
    Ok(fsx::ignore_in_git(
        area,
        cache_root,
        "this folder is a cache, safe to delete.",
    )?)
}

/// Whether a spec file's bytes are the ones a record's hash was taken of:
/// the hash of the bytes (as speed records it), or of the text as an older
/// speed hashed it (the same for a file that is valid UTF-8).
pub fn spec_matches(recorded: &str, bytes: &[u8]) -> bool {
    recorded == crate::digest::sha256(bytes)
        || recorded == crate::digest::sha256_text(&String::from_utf8_lossy(bytes))
}

fn is_hex(text: &str) -> bool {
    (7..=64).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "1111111111111111111111111111111111111111";
    const DIFF: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    fn task(id: &str) -> Work {
        Work::Task {
            id: id.to_string(),
            feature: Some("cat".to_string()),
        }
    }

    fn record(id: &str, decision: Decision) -> Record {
        Record {
            task: Some(id.to_string()),
            feature: Some("cat".to_string()),
            defect: None,
            head_commit: HEAD.to_string(),
            decision,
            at: "2025-01-02T03:04:05Z".to_string(),
            diff: Some(DIFF.to_string()),
            specs: vec![SpecFile {
                path: "specs/product/cat.md".to_string(),
                sha256: "sha256:bb".to_string(),
            }],
            by: None,
            reason: None,
            via: None,
            awaiting_human: false,
        }
    }

    const TRUSTED: Trust = Trust {
        cache: true,
        log: true,
    };

    #[test]
    fn records_are_found_by_head_and_by_diff_for_their_work_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        store.add(&record("3", Decision::RequestChanges)).unwrap();
        store.add(&record("3", Decision::Approve)).unwrap();
        store.add(&record("4", Decision::Approve)).unwrap();

        let found = store.at_head(HEAD, &task("3"), TRUSTED);
        assert_eq!(found.source, Source::Cache);
        let decisions: Vec<Decision> = found.records.iter().map(|r| r.decision).collect();
        assert_eq!(decisions, [Decision::RequestChanges, Decision::Approve]);
        assert_eq!(store.with_diff(DIFF, &task("4")).records.len(), 1);
        assert_eq!(
            store.at_head(HEAD, &task("5"), TRUSTED).source,
            Source::Nowhere
        );
        assert!(dir.path().join(".speed/cache/.gitignore").is_file());
    }

    #[test]
    fn an_override_is_kept_under_its_head_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        store.add(&record("3", Decision::Override)).unwrap();
        assert_eq!(store.at_head(HEAD, &task("3"), TRUSTED).records.len(), 1);
        assert!(store.with_diff(DIFF, &task("3")).records.is_empty());
    }

    #[test]
    fn a_damaged_file_is_a_miss_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        store.add(&record("3", Decision::Approve)).unwrap();
        let path = store.head_file(HEAD).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        // Turn the request into an approval by hand: the checksum catches it.
        fs::write(&path, text.replace("approve", "override")).unwrap();
        let found = store.at_head(HEAD, &task("3"), TRUSTED);
        assert_eq!(found.source, Source::Nowhere);
        assert!(found.notes[0].contains("checksum"), "{:?}", found.notes);

        fs::write(&path, &text[..text.len() - 5]).unwrap();
        assert!(store.at_head(HEAD, &task("3"), TRUSTED).records.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_in_place_of_a_file_is_refused_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        fs::create_dir_all(store.dir()).unwrap();
        let path = store.head_file(HEAD).unwrap();
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let found = store.at_head(HEAD, &task("3"), TRUSTED);
        assert!(found.records.is_empty());
        assert!(
            found.notes[0].contains("not a regular file"),
            "{:?}",
            found.notes
        );
    }

    #[test]
    fn a_deleted_cache_is_rebuilt_from_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        let log = dir.path().join(LOG_FILE);
        fs::create_dir_all(log.parent().unwrap()).unwrap();
        let lines = [
            serde_json::json!({"task": "3", "feature": "cat", "head_commit": HEAD,
                "decision": "approve", "at": "t1", "hashes": {"diff": DIFF}, "error": null}),
            // A failed review decided nothing.
            serde_json::json!({"task": "3", "feature": "cat", "head_commit": HEAD,
                "decision": "approve", "at": "t2", "error": "the guardian could not confirm"}),
            serde_json::json!({"task": "4", "feature": "cat", "head_commit": "2222222222222222222222222222222222222222",
                "decision": "approve", "at": "t3", "parent": HEAD}),
            serde_json::json!({"task": 3, "feature": "cat", "head_commit": HEAD,
                "decision": "override", "at": "t4", "by": "Ann", "reason": "prototype"}),
        ];
        let text: String = lines
            .iter()
            .map(|l| format!("{l}\nnot json {HEAD}\n"))
            .collect();
        fs::write(&log, text).unwrap();

        let found = store.at_head(HEAD, &task("3"), TRUSTED);
        assert_eq!(found.source, Source::Log);
        let got: Vec<(&str, Decision)> = found
            .records
            .iter()
            .map(|r| (r.at.as_str(), r.decision))
            .collect();
        assert_eq!(got, [("t1", Decision::Approve), ("t4", Decision::Override)]);
        assert_eq!(found.records[1].by.as_deref(), Some("Ann"));
        // Written back: the next lookup is the cache's.
        assert_eq!(
            store.at_head(HEAD, &task("3"), TRUSTED).source,
            Source::Cache
        );
    }

    #[test]
    fn untrusted_sources_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path());
        store.add(&record("3", Decision::Approve)).unwrap();
        let none = Trust {
            cache: false,
            log: false,
        };
        assert_eq!(
            store.at_head(HEAD, &task("3"), none).source,
            Source::Nowhere
        );
    }

    #[test]
    fn ids_that_are_not_hex_name_no_file() {
        let store = Store::open(Path::new("/nonexistent"));
        assert!(store.head_file("../../etc/passwd").is_none());
        assert!(store.diff_file("sha256:../x").is_none());
        assert!(store.diff_file(DIFF).is_some());
    }
}
