//! Dates of the proleptic Gregorian calendar to days since 1970-01-01 and back (Howard
//! Hinnant's algorithms): the one copy behind `meta.json`'s timestamps, the dates of
//! `cargo xtask run --here` directories and the run times of the appendix.

/// Days since 1970-01-01 to (year, month 1–12, day 1–31).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// (year, month, day) to days since 1970-01-01: the inverse of [`civil_from_days`].
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates_both_ways() {
        for (days, date) in [
            (0, (1970, 1, 1)),
            (-1, (1969, 12, 31)),
            (11_016, (2000, 2, 29)),
            (19_782, (2024, 2, 29)),
            (19_783, (2024, 3, 1)),
            (20_425, (2025, 12, 3)),
            (20_790, (2026, 12, 3)),
        ] {
            assert_eq!(civil_from_days(days), date, "day {days}");
            assert_eq!(days_from_civil(date.0, date.1, date.2), days, "{date:?}");
        }
    }

    #[test]
    fn every_day_of_four_centuries_goes_there_and_back() {
        let mut previous = civil_from_days(-1);
        for days in 0..146_097 {
            let (y, m, d) = civil_from_days(days);
            assert!((1..=12).contains(&m) && (1..=31).contains(&d), "{days}: {y}-{m}-{d}");
            assert!((y, m, d) > previous, "{days}: {y}-{m}-{d} after {previous:?}");
            assert_eq!(days_from_civil(y, m, d), days);
            previous = (y, m, d);
        }
    }
}
