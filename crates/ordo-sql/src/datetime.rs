//! `DATE`, `TIMESTAMP` and `TIMESTAMP WITH TIME ZONE`: parsing PostgreSQL's ISO input, the civil
//! calendar, and printing as psql does with `DateStyle = ISO` and the session in UTC.
//!
//! | type        | value                                   | printed                   |
//! |-------------|-----------------------------------------|---------------------------|
//! | DATE        | days since 1970-01-01                   | `2024-01-02`              |
//! | TIMESTAMP   | microseconds since 1970-01-01 00:00:00  | `2024-01-02 03:04:05.5`   |
//! | TIMESTAMPTZ | microseconds since 1970-01-01 00:00:00 UTC | `2024-01-02 03:04:05+00` |
//!
//! All three are stored as one integer word, which orders as the values do, so they serve as keys
//! ([`crate::key::int`]). Dates use the proleptic Gregorian calendar (Howard Hinnant's
//! days-from-civil). Input is `YYYY-MM-DD`, optionally followed by `T` or a space and
//! `HH:MM[:SS[.ffffff]]`, optionally followed by a zone `Z`, `UTC` or `±HH[[:]MM]` (which a
//! TIMESTAMPTZ converts to UTC and a TIMESTAMP ignores, as PostgreSQL does). A malformed value is
//! `22007`, a field out of range `22008`, as in PostgreSQL; years before 1 (BC) and other input
//! styles are refused.

use crate::error::{SqlError, SqlResult};

const MICROS_PER_DAY: i64 = 86_400_000_000;
/// The latest year PostgreSQL's timestamps reach (dates go further; Ordo stops here for both).
const MAX_YEAR: i64 = 294_276;

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `days` after 1970-01-01: (year, month, day).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// The kind of value being parsed, for messages and for what the zone does.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Date,
    Timestamp,
    TimestampTz,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Date => "date",
            Kind::Timestamp => "timestamp",
            Kind::TimestampTz => "timestamp with time zone",
        }
    }
}

/// Parses `text` as `kind`: days for a date, microseconds for the timestamps.
pub fn parse(text: &str, kind: Kind) -> SqlResult<i64> {
    let syntax = || {
        SqlError::new(
            "22007",
            format!("invalid input syntax for type {}: \"{text}\"", kind.name()),
        )
    };
    let range = || {
        SqlError::new(
            "22008",
            format!("date/time field value out of range: \"{text}\""),
        )
    };
    let s = text.trim().as_bytes();
    let mut i = 0;
    // A run of digits: (value, digit count).
    let digits = |i: &mut usize, max: usize| -> Option<(i64, usize)> {
        let start = *i;
        let mut v: i64 = 0;
        while *i < s.len() && s[*i].is_ascii_digit() && *i - start < max {
            v = v * 10 + i64::from(s[*i] - b'0');
            *i += 1;
        }
        (*i > start).then_some((v, *i - start))
    };
    let expect = |i: &mut usize, c: u8| -> bool {
        if *i < s.len() && s[*i] == c {
            *i += 1;
            true
        } else {
            false
        }
    };
    let (y, yd) = digits(&mut i, 9).ok_or_else(syntax)?;
    if yd < 4 || !expect(&mut i, b'-') {
        return Err(syntax());
    }
    let (m, _) = digits(&mut i, 2).ok_or_else(syntax)?;
    if !expect(&mut i, b'-') {
        return Err(syntax());
    }
    let (d, _) = digits(&mut i, 2).ok_or_else(syntax)?;
    let mut micros: i64 = 0;
    let mut zone: i64 = 0;
    if i < s.len() {
        if !(s[i] == b'T' || s[i] == b't' || s[i] == b' ') {
            return Err(syntax());
        }
        i += 1;
        while i < s.len() && s[i] == b' ' {
            i += 1;
        }
        let (h, _) = digits(&mut i, 2).ok_or_else(syntax)?;
        if !expect(&mut i, b':') {
            return Err(syntax());
        }
        let (mi, _) = digits(&mut i, 2).ok_or_else(syntax)?;
        let mut sec = 0;
        let mut frac = 0;
        if expect(&mut i, b':') {
            sec = digits(&mut i, 2).ok_or_else(syntax)?.0;
            if expect(&mut i, b'.') {
                let (f, n) = digits(&mut i, 6).ok_or_else(syntax)?;
                frac = f * 10i64.pow(6 - n as u32);
                // Digits past microseconds: PostgreSQL rounds; refuse rather than round differently.
                if i < s.len() && s[i].is_ascii_digit() {
                    return Err(SqlError::unsupported(format!(
                        "fractional seconds finer than microseconds (\"{text}\")"
                    )));
                }
            }
        }
        if mi > 59 || sec > 59 || h > 24 || (h == 24 && (mi, sec, frac) != (0, 0, 0)) {
            return Err(range());
        }
        micros = ((h * 60 + mi) * 60 + sec) * 1_000_000 + frac;
        while i < s.len() && s[i] == b' ' {
            i += 1;
        }
        if i < s.len() {
            let rest = &s[i..];
            if rest.eq_ignore_ascii_case(b"z") || rest.eq_ignore_ascii_case(b"utc") {
                i = s.len();
            } else if rest[0] == b'+' || rest[0] == b'-' {
                let sign = if rest[0] == b'-' { -1 } else { 1 };
                i += 1;
                let (zh, n) = digits(&mut i, 4).ok_or_else(syntax)?;
                let (zh, mut zm) = if n > 2 { (zh / 100, zh % 100) } else { (zh, 0) };
                if n <= 2 && expect(&mut i, b':') {
                    zm = digits(&mut i, 2).ok_or_else(syntax)?.0;
                }
                if zh > 15 || zm > 59 {
                    return Err(SqlError::new(
                        "22009",
                        format!("time zone displacement out of range: \"{text}\""),
                    ));
                }
                zone = sign * (zh * 60 + zm) * 60 * 1_000_000;
            } else {
                return Err(syntax());
            }
        }
    }
    if i != s.len() {
        return Err(syntax());
    }
    if !(1..=12).contains(&m) || d < 1 || d > i64::from(days_in_month(y, m as u32)) {
        return Err(range());
    }
    if !(1..=MAX_YEAR).contains(&y) {
        return Err(range());
    }
    let days = days_from_civil(y, m as u32, d as u32);
    Ok(match kind {
        Kind::Date => days,
        Kind::Timestamp => days * MICROS_PER_DAY + micros,
        Kind::TimestampTz => days * MICROS_PER_DAY + micros - zone,
    })
}

/// A date as PostgreSQL prints it (`2024-01-02`, `0001-12-31 BC`).
pub fn format_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    if y >= 1 {
        format!("{y:04}-{m:02}-{d:02}")
    } else {
        format!("{:04}-{m:02}-{d:02} BC", 1 - y)
    }
}

/// A timestamp as PostgreSQL prints it, fractional seconds without trailing zeros.
pub fn format_timestamp(micros: i64, tz: bool) -> String {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let t = micros.rem_euclid(MICROS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let (secs, frac) = (t / 1_000_000, t % 1_000_000);
    let mut out = format!(
        "{:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        if y >= 1 { y } else { 1 - y },
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    if frac != 0 {
        let f = format!("{frac:06}");
        out.push('.');
        out.push_str(f.trim_end_matches('0'));
    }
    if tz {
        out.push_str("+00");
    }
    if y < 1 {
        out.push_str(" BC");
    }
    out
}

/// Midnight of a date, in microseconds.
pub fn date_to_micros(days: i64) -> i64 {
    days * MICROS_PER_DAY
}

/// The date of a timestamp.
pub fn micros_to_date(micros: i64) -> i64 {
    micros.div_euclid(MICROS_PER_DAY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_days_round_trip_and_keep_order() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        let mut prev = i64::MIN;
        for days in (-800_000..800_000).step_by(37) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
            assert!(days > prev);
            prev = days;
        }
    }

    #[test]
    fn parses_and_prints_as_postgres() {
        let ts = |s| parse(s, Kind::Timestamp).map(|v| format_timestamp(v, false));
        let tz = |s| parse(s, Kind::TimestampTz).map(|v| format_timestamp(v, true));
        let date = |s| parse(s, Kind::Date).map(format_date);
        assert_eq!(date("2024-01-02").unwrap(), "2024-01-02");
        assert_eq!(date(" 2024-01-02 03:04:05 ").unwrap(), "2024-01-02");
        assert_eq!(date("2024-02-29").unwrap(), "2024-02-29");
        assert_eq!(
            ts("2024-01-02 03:04:05.120").unwrap(),
            "2024-01-02 03:04:05.12"
        );
        assert_eq!(ts("2024-01-02").unwrap(), "2024-01-02 00:00:00");
        assert_eq!(ts("2024-01-02 24:00:00").unwrap(), "2024-01-03 00:00:00");
        assert_eq!(
            ts("2024-01-02 03:04:05+05:30").unwrap(),
            "2024-01-02 03:04:05"
        );
        assert_eq!(
            tz("2024-01-02T03:04:05+02").unwrap(),
            "2024-01-02 01:04:05+00"
        );
        assert_eq!(tz("2024-01-02 1:2:3").unwrap(), "2024-01-02 01:02:03+00");
        assert_eq!(
            tz("2024-01-02 03:04:05-0130").unwrap(),
            "2024-01-02 04:34:05+00"
        );
        assert_eq!(format_date(days_from_civil(1, 1, 1) - 1), "0001-12-31 BC");
        for (bad, code) in [
            ("2024-02-30", "22008"),
            ("2023-02-29", "22008"),
            ("2024-13-01", "22008"),
            ("2024-01-02 25:00:00", "22008"),
            ("2024-01-02 24:00:01", "22008"),
            ("abc", "22007"),
            ("", "22007"),
            ("2024-01", "22007"),
            ("24-01-02", "22007"),
            ("2024-01-02 03", "22007"),
            ("2024-01-02 03:04:05 +", "22007"),
            ("2024-01-02x", "22007"),
            ("2024-01-02 03:04:05+16", "22009"),
            ("99999999999-01-01", "22007"),
            ("300000-01-01", "22008"),
        ] {
            assert_eq!(
                date(bad)
                    .err()
                    .map(|e| e.code)
                    .or(tz(bad).err().map(|e| e.code)),
                Some(code),
                "{bad}"
            );
        }
    }
}
