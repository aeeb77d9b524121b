//! Reading the review log back: each line of `.speed/reviews/log.jsonl` as
//! a typed `Entry`, in the order written. The log is a record, not an
//! input that could approve anything, and it may hold anything: a line
//! torn by a crash, bytes that are not text, a line of megabytes, a line
//! someone else appended. Such a line is skipped and counted, never fatal;
//! a line longer than `MAX_LINE` is skipped without being held in memory.
//!
//! Every line speed has written reads: reviews (decided or failed), a
//! person's overrides and a hook's bypasses, lines of older speeds without
//! the keys added since (they take their empty value).

use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::{Deserialize, Deserializer};

use super::blocking::Reason;
use super::{Error, LOG_FILE, open_own};

/// Past this a line is not speed's (its own lines are a few kilobytes).
pub const MAX_LINE: usize = 1 << 20;

/// One line of the log, typed. Keys it does not name are passed over.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Entry {
    /// When it was recorded (RFC 3339), as written.
    pub at: String,
    /// `at` in seconds since the Unix epoch.
    #[serde(skip)]
    pub time: i64,
    pub task: Option<String>,
    pub feature: Option<String>,
    pub branch: Option<String>,
    pub defect: Option<String>,
    pub head_commit: Option<String>,
    pub decision: Decision,
    pub model_verdict: Option<String>,
    pub model: Model,
    pub tokens: Tokens,
    pub guardian: Option<String>,
    pub overrules: Vec<String>,
    /// None on a line written before speed recorded it.
    pub blocking: Option<Vec<Reason>>,
    pub task_status: Option<String>,
    pub revision_count: Option<u32>,
    pub overall_score: Option<f64>,
    pub duration_ms: Option<u64>,
    pub report: Option<String>,
    pub error: Option<String>,
    /// Who decided an override or a bypass, why, and how.
    pub by: Option<String>,
    pub reason: Option<String>,
    pub via: Option<String>,
    /// A bypass that could not tell which work it let in: the commits.
    pub commits: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Model {
    pub provider: Option<String>,
    pub name: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct Tokens {
    pub prompt: u64,
    pub completion: u64,
}

/// The line's `decision`: a word, `null` (a review that failed), or no
/// such key (not a line of speed's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Decision {
    #[default]
    Missing,
    Failed,
    Word(String),
}

impl<'de> Deserialize<'de> for Decision {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Decision, D::Error> {
        Ok(match Option::<String>::deserialize(d)? {
            None => Decision::Failed,
            Some(word) => Decision::Word(word),
        })
    }
}

/// What a line records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A review speed decided: approve, request_changes or checks_passed.
    Decided,
    /// A review that failed (the model unreachable, its answer invalid).
    Failed,
    /// Anything else speed logs: an override or bypass, a person's
    /// approval or rejection.
    Other,
}

/// Whose a line is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Subject {
    Task {
        feature: Option<String>,
        id: String,
    },
    Defect(String),
    Branch(String),
    /// A bypass that names only commits.
    Unknown,
}

impl Subject {
    /// `library-catalog/2`, `task 2`, `defect NAME`, `branch B`, as the
    /// terminal names them elsewhere.
    pub fn label(&self) -> String {
        match self {
            Subject::Task {
                feature: Some(f),
                id,
            } if !f.is_empty() => format!("{f}/{id}"),
            Subject::Task { id, .. } => format!("task {id}"),
            Subject::Defect(name) => format!("defect {name}"),
            Subject::Branch(branch) => format!("branch {branch}"),
            Subject::Unknown => "(commits)".to_string(),
        }
    }
}

impl Entry {
    pub fn kind(&self) -> Kind {
        match &self.decision {
            Decision::Word(w)
                if matches!(w.as_str(), "approve" | "request_changes" | "checks_passed") =>
            {
                Kind::Decided
            }
            Decision::Failed => Kind::Failed,
            _ => Kind::Other,
        }
    }

    /// Whether the line is a review (decided or failed).
    pub fn is_review(&self) -> bool {
        self.kind() != Kind::Other
    }

    /// The decision's word; `failed` for a review that failed.
    pub fn decision_word(&self) -> &str {
        match &self.decision {
            Decision::Word(w) => w,
            Decision::Failed => "failed",
            Decision::Missing => "",
        }
    }

    pub fn approved(&self) -> bool {
        self.decision == Decision::Word("approve".to_string())
    }

    pub fn subject(&self) -> Subject {
        let given = |v: &Option<String>| v.as_deref().filter(|s| !s.is_empty()).map(str::to_string);
        if let Some(id) = given(&self.task) {
            return Subject::Task {
                feature: given(&self.feature),
                id,
            };
        }
        if let Some(name) = given(&self.defect) {
            return Subject::Defect(name);
        }
        match given(&self.branch) {
            Some(branch) => Subject::Branch(branch),
            None => Subject::Unknown,
        }
    }

    /// A line of speed's: an object with a time and a decision key.
    fn parse(bytes: &[u8]) -> Option<Entry> {
        let mut entry: Entry = serde_json::from_slice(bytes).ok()?;
        if entry.decision == Decision::Missing {
            return None;
        }
        let time = humantime::parse_rfc3339_weak(entry.at.trim()).ok()?;
        entry.time = match time.duration_since(std::time::UNIX_EPOCH) {
            Ok(since) => i64::try_from(since.as_secs()).ok()?,
            Err(before) => -i64::try_from(before.duration().as_secs()).ok()?,
        };
        Some(entry)
    }
}

/// A line read: its entry and its bytes as written.
pub struct Line<'a> {
    pub entry: Entry,
    pub raw: &'a [u8],
}

/// What a scan read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scanned {
    /// Lines of speed's, handed to the caller.
    pub read: usize,
    /// Lines skipped: torn, not text, not JSON, not speed's, too long.
    pub skipped: usize,
}

/// Hands every line of speed's in the repository's log to `each`, oldest
/// first. No log is an empty one.
pub fn scan(root: &Path, each: impl FnMut(Line<'_>)) -> Result<Scanned, Error> {
    let path = root.join(LOG_FILE);
    let Some(file) = open_own(root, &path)? else {
        return Ok(Scanned::default());
    };
    scan_reader(BufReader::with_capacity(1 << 16, file), &path, each)
}

/// `scan` over any reader; `path` names it in errors.
pub fn scan_reader(
    mut reader: impl BufRead,
    path: &Path,
    mut each: impl FnMut(Line<'_>),
) -> Result<Scanned, Error> {
    let mut scanned = Scanned::default();
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        let (complete, too_long) = read_line(&mut reader, &mut line).map_err(|e| Error::Input {
            path: path.to_path_buf(),
            message: format!("cannot read it: {e}"),
        })?;
        if !complete && line.is_empty() && !too_long {
            return Ok(scanned);
        }
        let bytes = trim(&line);
        if bytes.is_empty() && !too_long {
            if !complete {
                return Ok(scanned);
            }
            continue;
        }
        match (too_long, Entry::parse(bytes)) {
            (false, Some(entry)) => {
                scanned.read += 1;
                each(Line { entry, raw: bytes });
            }
            _ => scanned.skipped += 1,
        }
        if !complete {
            return Ok(scanned);
        }
    }
}

/// Reads up to the next newline into `line`, holding at most `MAX_LINE`
/// bytes of it: (whether a newline ended it, whether it was longer).
fn read_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<(bool, bool)> {
    let mut too_long = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok((false, too_long));
        }
        let (taken, found) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let content = &buf[..if found { taken - 1 } else { taken }];
        if !too_long {
            if line.len() + content.len() > MAX_LINE {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(content);
            }
        }
        reader.consume(taken);
        if found {
            return Ok((true, too_long));
        }
    }
}

fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_text(bytes: &[u8]) -> (Vec<Entry>, Scanned) {
        let mut entries = Vec::new();
        let scanned = scan_reader(bytes, Path::new("log.jsonl"), |line| {
            entries.push(line.entry)
        })
        .unwrap();
        (entries, scanned)
    }

    const REVIEW: &str = r#"{"at":"2026-03-02T10:00:00.000Z","task":"2","feature":"cat","decision":"request_changes","tokens":{"prompt":100,"completion":20},"overrules":["check_failed"],"duration_ms":1200}"#;

    #[test]
    fn lines_of_every_kind_read_and_junk_is_counted() {
        let mut log = Vec::new();
        log.extend_from_slice(REVIEW.as_bytes());
        log.push(b'\n');
        log.extend_from_slice(b"{\"at\":\"2026-03-02T10:00:01Z\",\"task\":\"2\",\"decis");
        log.push(b'\n');
        log.extend_from_slice(&[0xff, 0xfe, 0x00, b'{', b'\n']);
        log.extend_from_slice(b"[1,2,3]\n{\"hello\":\"world\"}\n\n   \n");
        log.extend_from_slice(br#"{"at":"yesterday","decision":"approve"}"#);
        log.push(b'\n');
        log.extend_from_slice(br#"{"at":"2026-03-02T11:00:00Z","task":"2","decision":"override","by":"ann","reason":"ok","via":"speed override","hashes":{"diff":null}}"#);
        log.push(b'\n');
        log.extend_from_slice(br#"{"at":"2026-03-02T12:00:00Z","commits":["abc"],"decision":"override","by":"bo","reason":"r","via":"SPEED_SKIP_HOOK"}"#);
        log.push(b'\n');
        log.extend_from_slice(br#"{"at":"2026-03-02T13:00:00Z","branch":"x","decision":null,"error":"model unreachable"}"#);
        let (entries, scanned) = scan_text(&log);
        assert_eq!(
            scanned,
            Scanned {
                read: 4,
                skipped: 5
            }
        );
        assert_eq!(entries[0].kind(), Kind::Decided);
        assert_eq!(entries[0].tokens.prompt, 100);
        assert_eq!(entries[0].blocking, None, "an old line has no reasons");
        assert_eq!(entries[1].kind(), Kind::Other);
        assert_eq!(entries[1].decision_word(), "override");
        assert_eq!(entries[2].subject(), Subject::Unknown);
        assert_eq!(entries[3].kind(), Kind::Failed);
        assert_eq!(entries[3].subject(), Subject::Branch("x".to_string()));
        assert_eq!(entries[0].time, 1_772_445_600);
    }

    #[test]
    fn a_huge_line_is_skipped_without_being_held() {
        let mut log = vec![b'{'; MAX_LINE * 3];
        log.push(b'\n');
        log.extend_from_slice(REVIEW.as_bytes());
        let (entries, scanned) = scan_text(&log);
        assert_eq!(
            scanned,
            Scanned {
                read: 1,
                skipped: 1
            }
        );
        assert_eq!(entries[0].task.as_deref(), Some("2"));
    }

    #[test]
    fn a_line_with_a_wrong_type_is_not_speeds() {
        let line =
            br#"{"at":"2026-03-02T10:00:00Z","decision":"approve","tokens":{"prompt":"many"}}"#;
        let (entries, scanned) = scan_text(line);
        assert!(entries.is_empty());
        assert_eq!(scanned.skipped, 1);
    }
}
