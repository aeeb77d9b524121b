//! `--since DATE`: a day (`2026-03-01`, from its midnight UTC), a moment
//! (RFC 3339, `2026-03-01T12:00:00Z`), or a span back from now (`7d`,
//! `2weeks`, `36h`, as humantime reads it).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::calendar;

/// Seconds since the Unix epoch from which lines count.
pub fn parse(text: &str, now: SystemTime) -> Result<i64, String> {
    let text = text.trim();
    if let Some(days) = day(text) {
        return Ok(days * 86_400);
    }
    if let Ok(moment) = humantime::parse_rfc3339_weak(text) {
        return Ok(seconds(moment));
    }
    if let Ok(span) = humantime::parse_duration(text) {
        let moment = now.checked_sub(span).unwrap_or(UNIX_EPOCH);
        return Ok(seconds(moment));
    }
    Err(format!(
        "{text:?} is not a date: give a day (2026-03-01), a moment (2026-03-01T12:00:00Z) or a span back from now (7d, 2weeks, 36h)"
    ))
}

fn seconds(moment: SystemTime) -> i64 {
    match moment.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_secs()).unwrap_or(i64::MAX),
    }
}

/// `YYYY-MM-DD` as days since the epoch, when it is a real day.
fn day(text: &str) -> Option<i64> {
    let mut parts = text.splitn(3, '-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d): (i64, u32, u32) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    let days = calendar::days_from_civil(y, m, d);
    // 2026-02-31 is no day: it would come back as March.
    (calendar::civil(days) == (y, m, d)).then_some(days)
}

/// The time `now` minus `span`, for messages and tests.
pub fn ago(now: SystemTime, span: Duration) -> i64 {
    seconds(now.checked_sub(span).unwrap_or(UNIX_EPOCH))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_moments_and_spans() {
        let now = UNIX_EPOCH + Duration::from_secs(1_772_445_600);
        assert_eq!(parse("2026-03-02", now), Ok(1_772_409_600));
        assert_eq!(parse("2026-03-02T10:00:00Z", now), Ok(1_772_445_600));
        assert_eq!(parse("1d", now), Ok(1_772_445_600 - 86_400));
        assert_eq!(
            parse("2weeks", now),
            Ok(ago(now, Duration::from_secs(14 * 86_400)))
        );
        for bad in ["", "yesterday", "2026-02-31", "2026-3-2", "-5d"] {
            let err = parse(bad, now).unwrap_err();
            assert!(err.contains("is not a date"), "{bad}: {err}");
        }
    }
}
