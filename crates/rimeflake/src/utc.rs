//! Unix milliseconds as ISO 8601 UTC text (`2026-01-01T00:00:00.000Z`), without a date crate:
//! what the CLI and `state::inspect` show for timestamps, reservations and expiries.

/// `unix_ms` as `YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC (proleptic Gregorian calendar).
pub fn iso8601(unix_ms: u64) -> String {
    let days = unix_ms / 86_400_000;
    let in_day = unix_ms % 86_400_000;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

/// Reads a time given by a person: Unix milliseconds (`1767225600000`), or ISO 8601 in UTC
/// (`2026-01-01`, `2026-01-01T00:00Z`, `2026-01-01T00:00:00.250Z`; `Z` or `+00:00`).
///
/// # Errors
/// [`ErrorKind::Config`](crate::ErrorKind::Config) saying what form is expected.
pub fn parse_time(text: &str) -> crate::Result<u64> {
    let t = text.trim();
    let bad = || {
        crate::Error::config(format!(
            "time {text:?}: expected Unix ms or ISO 8601 UTC such as 2026-01-01T00:00:00Z"
        ))
    };
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().map_err(|_| bad());
    }
    let (date, time) = match t.split_once(['T', ' ']) {
        Some((d, rest)) => {
            let rest = rest
                .strip_suffix('Z')
                .or_else(|| rest.strip_suffix("+00:00"))
                .ok_or_else(bad)?;
            (d, Some(rest))
        }
        None => (t, None),
    };
    let num = |s: &str| -> crate::Result<u64> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse().map_err(|_| bad())
    };
    let mut d = date.split('-');
    let (y, m, day) = (
        num(d.next().ok_or_else(bad)?)?,
        num(d.next().ok_or_else(bad)?)?,
        num(d.next().ok_or_else(bad)?)?,
    );
    if d.next().is_some() || y < 1970 || !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return Err(bad());
    }
    let mut ms = 0;
    if let Some(time) = time {
        let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
        let mut parts = hms.split(':');
        let h = num(parts.next().ok_or_else(bad)?)?;
        let mi = num(parts.next().ok_or_else(bad)?)?;
        let s = parts.next().map(num).transpose()?.unwrap_or(0);
        if parts.next().is_some() || h > 23 || mi > 59 || s > 60 || frac.len() > 3 {
            return Err(bad());
        }
        let f = if frac.is_empty() {
            0
        } else {
            num(frac)? * 10u64.pow(3 - frac.len() as u32)
        };
        ms = ((h * 60 + mi) * 60 + s) * 1000 + f;
    }
    let days = days_from_civil(y, m, day);
    if civil_from_days(days) != (y, m, day) {
        return Err(bad()); // 2026-02-30 and the like
    }
    Ok(days * 86_400_000 + ms)
}

/// Days from 1970-01-01 to the Gregorian date (the inverse of [`civil_from_days`]).
fn days_from_civil(y: u64, m: u64, d: u64) -> u64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12; // March = 0
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The Gregorian date `days` after 1970-01-01.
///
/// The calendar repeats every 400 years (146,097 days). Counting years from March 1st puts the
/// leap day at the end of a year, so a year's day gives its month with one linear formula.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Shift the origin to 0000-03-01, the start of a 400-year era: 719,468 days before 1970-01-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097; // 0..=146_096
                                  // Years of the era: 365 days each, plus a leap day every 4 years, less one every 100, plus
                                  // one every 400 (the era's last day).
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months from March: 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 31, 28/29 follow 153 days per
    // 5 months.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_back() {
        for ms in [0, 1_704_067_200_000, 1_767_225_600_250, 4_102_444_800_000] {
            assert_eq!(parse_time(&iso8601(ms)).unwrap(), ms);
            assert_eq!(parse_time(&ms.to_string()).unwrap(), ms);
        }
        assert_eq!(parse_time("2024-01-01").unwrap(), 1_704_067_200_000);
        assert_eq!(
            parse_time("2024-01-01T00:01+00:00").unwrap(),
            1_704_067_260_000
        );
        for bad in [
            "",
            "2024-02-30",
            "2024-01-01T00:00",
            "yesterday",
            "2024-13-01",
            "-5",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn known_instants() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_704_067_200_000), "2024-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_288_834_974_657), "2010-11-04T01:42:54.657Z"); // Twitter's epoch
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z"); // a 400-year leap day
        assert_eq!(iso8601(951_868_799_999), "2000-02-29T23:59:59.999Z");
        assert_eq!(iso8601(4_107_542_399_999), "2100-02-28T23:59:59.999Z");
        assert_eq!(iso8601(4_107_542_400_000), "2100-03-01T00:00:00.000Z"); // 2100: no leap day
        assert_eq!(iso8601(1_732_109_056_000), "2024-11-20T13:24:16.000Z"); // Baidu's old expiry
    }

    #[test]
    fn every_day_follows_the_previous_one() {
        // Walk 1970..2300 a day at a time and check the date steps like a calendar.
        let days_in = |y: u64, m: u64| match m {
            2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let mut prev = civil_from_days(0);
        assert_eq!(prev, (1970, 1, 1));
        for d in 1..120_000 {
            let (y, m, day) = civil_from_days(d);
            let (py, pm, pd) = prev;
            let expected = if pd < days_in(py, pm) {
                (py, pm, pd + 1)
            } else if pm < 12 {
                (py, pm + 1, 1)
            } else {
                (py + 1, 1, 1)
            };
            assert_eq!((y, m, day), expected, "day {d}");
            prev = (y, m, day);
        }
    }
}
