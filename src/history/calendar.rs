//! Dates from seconds since the Unix epoch, in UTC, without a calendar
//! crate: the civil date of a day (Howard Hinnant's algorithm) and the ISO
//! week a day falls in, which is how `speed stats` groups reviews in time.

/// Days since 1970-01-01 of a time in seconds.
pub fn day_of(seconds: i64) -> i64 {
    seconds.div_euclid(86_400)
}

/// (year, month, day) of a day since the epoch.
pub fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Days since the epoch of a civil date.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let month = i64::from(month);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `2026-03-02`.
pub fn date(days: i64) -> String {
    let (y, m, d) = civil(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The ISO week of a day: its label (`2026-W10`) and the day its Monday is.
pub fn iso_week(days: i64) -> (String, i64) {
    // 1970-01-01 was a Thursday: Monday is 0.
    let weekday = (days + 3).rem_euclid(7);
    let monday = days - weekday;
    let thursday = monday + 3;
    let (year, _, _) = civil(thursday);
    let week = (thursday - days_from_civil(year, 1, 1)) / 7 + 1;
    (format!("{year:04}-W{week:02}"), monday)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        for days in [-800_000, -1, 0, 1, 59, 60, 10_957, 20_514, 2_932_896] {
            let (y, m, d) = civil(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(day_of(1_772_445_600)), "2026-03-02");
        assert_eq!(date(day_of(-1)), "1969-12-31");
    }

    #[test]
    fn iso_weeks_cross_years_as_iso_8601_says() {
        let week = |y, m, d| iso_week(days_from_civil(y, m, d));
        assert_eq!(
            week(2026, 3, 2),
            ("2026-W10".to_string(), days_from_civil(2026, 3, 2))
        );
        assert_eq!(week(2026, 3, 8).0, "2026-W10");
        // 2021-01-03 was a Sunday of the last week of 2020.
        assert_eq!(week(2021, 1, 3).0, "2020-W53");
        assert_eq!(week(2021, 1, 4).0, "2021-W01");
        // 2024-12-30 was a Monday of the first week of 2025.
        assert_eq!(week(2024, 12, 30).0, "2025-W01");
        assert_eq!(week(1970, 1, 1).0, "1970-W01");
    }
}
