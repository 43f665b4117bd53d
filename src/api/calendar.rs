//! Calendar arithmetic in UTC, without a time library: the month boundaries the quotas reset on and the ISO 8601
//! dates of records (proleptic Gregorian calendar, H. Hinnant's algorithms, dates after 1970).

/// Unix seconds of the first second of the calendar month after `now` (UTC).
#[must_use]
pub fn next_month_start(now: u64) -> u64 {
    let (y, m, _) = civil_from_days(now / 86_400);
    let (y, m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    days_from_civil(y, m, 1) * 86_400
}

/// Unix seconds of the first second of the calendar month containing `now` (UTC).
#[must_use]
pub fn month_start(now: u64) -> u64 {
    let (y, m, _) = civil_from_days(now / 86_400);
    days_from_civil(y, m, 1) * 86_400
}

fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

fn days_from_civil(y: u64, m: u64, d: u64) -> u64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Unix seconds as ISO 8601 UTC: `2024-03-21T10:00:00.000Z` (JavaScript's `Date#toISOString`).
#[must_use]
pub fn iso8601(secs: u64) -> String {
    let (y, m, d) = civil_from_days(secs / 86_400);
    let rest = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.000Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn quota_resets_on_the_first_of_next_month(now in 0u64..4_102_444_800) {
            let start = month_start(now);
            let next = next_month_start(now);
            prop_assert!(start <= now && now < next);
            prop_assert!((28 * 86_400..=31 * 86_400).contains(&(next - start)));
            prop_assert_eq!(month_start(next), next);
        }
    }

    #[test]
    fn quota_months() {
        // 2026-11-22T10:00:00Z → 2026-12-01T00:00:00Z
        assert_eq!(next_month_start(1_795_341_600), 1_796_083_200);
        assert_eq!(month_start(1_795_341_600), 1_793_491_200);
        // December rolls over the year: 2026-12-31T23:59:59Z → 2027-01-01
        assert_eq!(next_month_start(1_798_761_599), 1_798_761_600);
    }

    #[test]
    fn iso_dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_711_015_200), "2024-03-21T10:00:00.000Z");
        assert_eq!(iso8601(1_798_761_599), "2026-12-31T23:59:59.000Z");
    }
}
