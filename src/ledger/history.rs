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
    /// What the review cost at the prices of its time, its discounts
    /// applied (None without prices, or before speed recorded it).
    pub cost: Option<crate::llm::cost::Cost>,
    pub guardian: Option<String>,
    pub overrules: Vec<String>,
    /// None on a line written before speed recorded it.
    pub blocking: Option<Vec<Reason>>,
    pub task_status: Option<String>,
    pub revision_count: Option<u32>,
    /// What a request for changes asked for: `implementation`, `plan`
    /// (re-plan), `nothing_implemented` (None on older lines).
    pub rejection: Option<String>,
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
    /// A model's approval that waits for a person: `pending`.
    pub human_review: Option<String>,
    /// The number of the decision's entry in the task's `review_history`
    /// (None for a failed review, a skip, a defect, or an older line).
    pub attempt: Option<u32>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Model {
    pub provider: Option<String>,
    pub name: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Tokens {
    pub prompt: u64,
    pub completion: u64,
    /// The parts of `prompt` read from and written to the provider's
    /// prompt cache (0 on a line written before speed recorded them).
    pub cache_read: u64,
    pub cache_write: u64,
    /// speed's own count of the prompt it assembled (0 on older lines).
    pub counted: u64,
    /// `speed` when the provider reported no usage and `prompt` and
    /// `completion` are speed's count (None on older lines).
    pub counted_by: Option<String>,
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

    /// What the line leaves the subject's approval at: Some(true) for an
    /// approval that stands (a model's no person waits on, a person's
    /// confirmation), Some(false) for a rejection (a review's, a
    /// person's), None for what is no review's judgement (a failed review,
    /// a skip, checks that passed offline, an override: a person accepting
    /// the work despite its review).
    pub fn approves(&self) -> Option<bool> {
        match self.decision_word() {
            "approve" => Some(self.human_review.as_deref() != Some("pending")),
            "human_approve" => Some(true),
            "request_changes" | "human_reject" => Some(false),
            _ => None,
        }
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
        entry.time = seconds(entry.at.trim())?;
        Some(entry)
    }
}

/// Seconds since the epoch of an RFC 3339 time. speed writes
/// `2026-03-02T10:00:00.000Z`, read here without a parser's generality
/// (this runs once per line of a long log); anything else goes to one.
fn seconds(at: &str) -> Option<i64> {
    let b = at.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(range)?;
        part.iter().try_fold(0i64, |n, c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let utc = b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b.last() == Some(&b'Z')
        && (b.len() == 20
            || (b.len() > 21
                && b[19] == b'.'
                && b[20..b.len() - 1].iter().all(u8::is_ascii_digit)));
    if utc {
        let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
        let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
        let valid = (1..=12).contains(&month)
            && (1..=31).contains(&day)
            && hour < 24
            && minute < 60
            && second < 61;
        if valid {
            let days = days_from_civil(year, month as u32, day as u32);
            return Some(days * 86_400 + hour * 3600 + minute * 60 + second);
        }
    }
    let time = humantime::parse_rfc3339_weak(at).ok()?;
    match time.duration_since(std::time::UNIX_EPOCH) {
        Ok(since) => i64::try_from(since.as_secs()).ok(),
        Err(before) => i64::try_from(before.duration().as_secs()).ok().map(|s| -s),
    }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let month = i64::from(month);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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
    let mut line: Vec<u8> = Vec::with_capacity(4096);
    loop {
        line.clear();
        let (complete, too_long) = read_line(&mut reader, &mut line).map_err(|e| Error::Input {
            path: path.to_path_buf(),
            message: format!("cannot read it: {e}"),
        })?;
        let (from, to) = trimmed(&line, 0);
        if too_long {
            scanned.skipped += 1;
        } else if from < to {
            let raw = &line[from..to];
            match Entry::parse(raw) {
                Some(entry) => {
                    scanned.read += 1;
                    each(Line { entry, raw });
                }
                None => scanned.skipped += 1,
            }
        }
        if !complete {
            return Ok(scanned);
        }
    }
}

/// Reads up to the next newline onto the end of `buf`, holding at most
/// `MAX_LINE` bytes of it (a longer line leaves `buf` as it was): whether
/// a newline ended it, and whether it was longer.
fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<(bool, bool)> {
    let start = buf.len();
    let mut too_long = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok((false, too_long));
        }
        let (taken, found) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let content = &available[..if found { taken - 1 } else { taken }];
        if !too_long {
            if buf.len() - start + content.len() > MAX_LINE {
                too_long = true;
                buf.truncate(start);
            } else {
                buf.extend_from_slice(content);
            }
        }
        reader.consume(taken);
        if found {
            return Ok((true, too_long));
        }
    }
}

/// The bounds of `buf[start..]` without surrounding whitespace.
fn trimmed(buf: &[u8], start: usize) -> (usize, usize) {
    let line = &buf[start..];
    let from = line
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(line.len());
    let to = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(from, |i| i + 1);
    (start + from, start + to)
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
    fn times_read_fast_agree_with_a_full_parser() {
        for at in [
            "2026-03-02T10:00:00.000Z",
            "2026-03-02T10:00:00Z",
            "2024-02-29T12:34:56.7Z",
            "2026-03-02 10:00:00",
        ] {
            let full = humantime::parse_rfc3339_weak(at).unwrap();
            let want = match full.duration_since(std::time::UNIX_EPOCH) {
                Ok(d) => d.as_secs() as i64,
                Err(e) => -(e.duration().as_secs() as i64),
            };
            assert_eq!(seconds(at), Some(want), "{at}");
        }
        assert_eq!(seconds("1969-12-31T23:59:59Z"), Some(-1));
        for bad in ["2026-13-02T10:00:00Z", "yesterday", "2026-03-02T25:00:00Z"] {
            assert_eq!(seconds(bad), None, "{bad}");
        }
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
    fn many_lines_come_back_in_order() {
        const BATCH: usize = 4096;
        let mut log = String::new();
        for i in 0..(BATCH * 2 + 77) {
            if i % 10 == 3 {
                log.push_str("{\"torn\n");
            } else {
                log.push_str(&format!(
                    "{{\"at\":\"2026-03-02T10:00:00Z\",\"task\":\"{i}\",\"decision\":\"approve\"}}\n"
                ));
            }
        }
        let (entries, scanned) = scan_text(log.as_bytes());
        let torn = (0..(BATCH * 2 + 77)).filter(|i| i % 10 == 3).count();
        assert_eq!(scanned.skipped, torn);
        let ids: Vec<usize> = entries
            .iter()
            .map(|e| e.task.as_deref().unwrap().parse().unwrap())
            .collect();
        let want: Vec<usize> = (0..(BATCH * 2 + 77)).filter(|i| i % 10 != 3).collect();
        assert_eq!(ids, want);
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
