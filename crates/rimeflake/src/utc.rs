//! Unix milliseconds as ISO 8601 UTC text (`2026-01-01T00:00:00.000Z`), without a date crate:
//! what the CLI and `admin::inspect` show for timestamps, reservations and expiries; and
//! [`parse_iso8601`], which reads the `epoch` of a layout spec.

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

/// Reads an ISO 8601 instant at or after 1970 as Unix ms: `YYYY-MM-DD` (midnight UTC), or
/// `YYYY-MM-DDTHH:MM[:SS[.fff]]` followed by `Z` or an offset `+HH:MM` / `-HH:MM` (a time
/// without a zone is refused: it would depend on where it is read). A space may stand for `T`.
///
/// # Errors
/// A message that says what is wrong with the text (the caller names the field).
pub fn parse_iso8601(text: &str) -> Result<u64, String> {
    let bad = |why: &str| {
        format!("{text:?} is not an ISO 8601 instant ({why}); write it like 2025-01-01T00:00:00Z")
    };
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u64> {
        let s = b.get(r)?;
        (!s.is_empty() && s.iter().all(u8::is_ascii_digit))
            .then(|| s.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')))
    };
    let (Some(year), Some(month), Some(day)) = (num(0..4), num(5..7), num(8..10)) else {
        return Err(bad("expected YYYY-MM-DD"));
    };
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return Err(bad("expected YYYY-MM-DD"));
    }
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return Err(bad("no such date"));
    }
    if year < 1970 {
        return Err(bad("before 1970"));
    }
    let mut ms = days_from_civil(year, month, day) * 86_400_000;
    if b.len() == 10 {
        return Ok(ms);
    }
    if !matches!(b[10], b'T' | b't' | b' ') {
        return Err(bad("expected T between date and time"));
    }
    let (Some(h), Some(m)) = (num(11..13), num(14..16)) else {
        return Err(bad("expected HH:MM after the date"));
    };
    if b.get(13) != Some(&b':') || h > 23 || m > 59 {
        return Err(bad("no such time"));
    }
    ms += (h * 60 + m) * 60_000;
    let mut i = 16;
    if b.get(i) == Some(&b':') {
        let s = num(i + 1..i + 3)
            .filter(|&s| s <= 59)
            .ok_or_else(|| bad("bad seconds"))?;
        ms += s * 1000;
        i += 3;
        if b.get(i) == Some(&b'.') {
            let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 || digits > 3 {
                return Err(bad("fractions of a second: 1 to 3 digits (milliseconds)"));
            }
            let frac = num(i + 1..i + 1 + digits).unwrap_or(0);
            ms += frac * 10u64.pow(3 - digits as u32);
            i += 1 + digits;
        }
    }
    match &b[i..] {
        [b'Z' | b'z'] => Ok(ms),
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (Some(oh), Some(om)) = (num(i + 1..i + 3), num(i + 4..i + 6)) else {
                return Err(bad("bad offset"));
            };
            if oh > 23 || om > 59 {
                return Err(bad("bad offset"));
            }
            let off = (oh * 60 + om) * 60_000;
            // The instant is the local time minus the offset.
            if *sign == b'+' {
                ms.checked_sub(off).ok_or_else(|| bad("before 1970"))
            } else {
                Ok(ms + off)
            }
        }
        [] => Err(bad("no time zone: end with Z or an offset such as +08:00")),
        _ => Err(bad("unexpected text after the time")),
    }
}

fn days_in_month(year: u64, month: u64) -> u64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a Gregorian date at or after it (the inverse of `civil_from_days`).
fn days_from_civil(year: u64, month: u64, day: u64) -> u64 {
    // Years counted from March, so the leap day ends a year (as in civil_from_days).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y / 400;
    let year_of_era = y % 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Reads a time given by a person: Unix milliseconds (`1767225600000`), or an ISO 8601 instant
/// as `parse_iso8601` reads it (`2026-01-01`, `2026-01-01T00:00Z`, `...+08:00`).
///
/// # Errors
/// [`ErrorKind::Config`](crate::ErrorKind::Config) saying what form is expected.
pub fn parse_time(text: &str) -> crate::Result<u64> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse()
            .map_err(|_| crate::Error::config(format!("time {text:?}: too large for Unix ms")));
    }
    parse_iso8601(t).map_err(|why| crate::Error::config(format!("time: {why}; or Unix ms")))
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
    fn iso8601_text_reads_back() {
        for ms in [
            0,
            1_704_067_200_000,
            1_288_834_974_657,
            951_782_400_000,
            4_107_542_400_000,
        ] {
            assert_eq!(parse_iso8601(&iso8601(ms)), Ok(ms));
        }
        for d in (0..120_000u64).step_by(7) {
            assert_eq!(
                parse_iso8601(&iso8601(d * 86_400_000 + 1)),
                Ok(d * 86_400_000 + 1)
            );
        }
        // Baidu's epoch: midnight in Beijing.
        assert_eq!(
            parse_iso8601("2016-05-20T00:00:00+08:00"),
            Ok(1_463_673_600_000)
        );
        assert_eq!(parse_iso8601("2016-05-19T16:00Z"), Ok(1_463_673_600_000));
        assert_eq!(parse_iso8601("2025-01-01"), Ok(1_735_689_600_000));
        assert_eq!(
            parse_iso8601("2025-01-01T00:00:00.5Z"),
            Ok(1_735_689_600_500)
        );
        assert_eq!(
            parse_iso8601("2024-12-31T19:00:00-05:00"),
            Ok(1_735_689_600_000)
        );
        for bad in [
            "",
            "2025",
            "2025-13-01",
            "2025-02-29",
            "2025-01-01T00:00:00",
            "2025-01-01T24:00Z",
            "2025-01-01T00:00:00.1234Z",
            "1969-12-31T23:59:59Z",
            "1970-01-01T00:00+01:00",
            "2025-01-01T00:00:00Zjunk",
            "2025-01-01x00:00Z",
        ] {
            assert!(parse_iso8601(bad).is_err(), "{bad:?}");
        }
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
