//! The webhooks' rules, pure: which URLs are accepted, when a failed delivery is tried again, event ids and the
//! delivery log's cursors.

use url::Url;

use crate::destination::{self, Destination};

/// The longest webhook URL, in bytes (it is listed with the key, in KV metadata of at most 1 KiB).
pub const MAX_URL_BYTES: usize = 384;

/// Attempts per event: the first one at once, then after each delay of [`RETRY_DELAYS_MS`].
pub const MAX_ATTEMPTS: u32 = 8;

/// The delay after the n-th failed attempt (before the jitter): Standard Webhooks' suggested schedule — 5 s, 5 min,
/// 30 min, 2 h, 5 h, 10 h, 10 h — so the 8 attempts span about 27.6 hours (a receiver down for a day still gets it).
pub const RETRY_DELAYS_MS: [u64; 7] = [
    5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
];

/// Why a URL is refused (the message of `INVALID_WEBHOOK_URL`).
pub fn check_url(input: &str, allow_http: bool) -> Result<Url, String> {
    let input = input.trim();
    if input.len() > MAX_URL_BYTES {
        return Err(format!("the URL is longer than {MAX_URL_BYTES} bytes"));
    }
    let url = Url::parse(input).map_err(|e| format!("not a URL: {e}"))?;
    if url.as_str().len() > MAX_URL_BYTES {
        return Err(format!(
            "the URL is longer than {MAX_URL_BYTES} bytes once normalized"
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("the URL must not carry credentials (sign with the webhook secret instead)".to_owned());
    }
    if url.fragment().is_some() {
        return Err("the URL must not have a fragment".to_owned());
    }
    let destination = destination::of_url(&url);
    let local = destination == Destination::Loopback;
    match url.scheme() {
        "https" => {}
        "http" if allow_http && local => return Ok(url),
        "http" if allow_http => {
            return Err(
                "plain http:// is allowed only to 127.0.0.1, ::1 or localhost (WEBHOOK_ALLOW_HTTP)"
                    .to_owned(),
            );
        }
        _ => return Err("the URL must be https://".to_owned()),
    }
    match destination {
        Destination::Public => Ok(url),
        Destination::Loopback => Err("the URL names this machine (https to it is refused)".to_owned()),
        Destination::Internal(why) => Err(format!(
            "the URL names a local, private or reserved address or name: {why}"
        )),
    }
}

/// When the next attempt is due after `failed` attempts failed: `None` once [`MAX_ATTEMPTS`] are spent. `jitter` in
/// `[0, 1)` spreads the delay over ±20% so that receivers recovering from an outage are not hit all at once.
pub fn retry_delay_ms(failed: u32, jitter: f64) -> Option<u64> {
    if failed == 0 || failed >= MAX_ATTEMPTS {
        return None;
    }
    let base = *RETRY_DELAYS_MS.get(usize::try_from(failed - 1).ok()?)?;
    let factor = 0.8 + 0.4 * jitter.clamp(0.0, 1.0);
    // the delays are far below 2^53: exact as f64
    Some((base as f64 * factor).round() as u64)
}

/// A fresh event id: `msg_` + 32 hex digits from the CSPRNG.
///
/// # Errors
/// When the CSPRNG fails.
pub fn new_event_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(format!("msg_{}", alloy_primitives::hex::encode(bytes)))
}

/// Whether `id` has the shape of an event id.
pub fn is_event_id(id: &str) -> bool {
    id.strip_prefix("msg_")
        .is_some_and(|h| h.len() == 32 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The delivery log's cursor after the row created at `created_ms` with `id` (newest first).
pub fn cursor(created_ms: u64, id: &str) -> String {
    format!("{created_ms}_{id}")
}

/// A cursor [`cursor`] answered; `None` for anything else.
pub fn parse_cursor(cursor: &str) -> Option<(u64, &str)> {
    let (ms, id) = cursor.split_once('_')?;
    // at most 15 digits: Unix ms for the next 30,000 years, and below 2^53 (a SQLite integer the runtime keeps exact)
    let digits = !ms.is_empty() && ms.len() <= 15 && ms.bytes().all(|b| b.is_ascii_digit());
    let ms = ms.parse().ok().filter(|_| digits)?;
    is_event_id(id).then_some((ms, id))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn https_only_and_http_only_to_this_machine_under_the_flag() {
        assert!(check_url("https://hooks.example.com/relayer?x=1", false).is_ok());
        assert!(check_url("https://hooks.example.com:8443/a", false).is_ok());
        for refused in [
            "http://hooks.example.com/",
            "ftp://hooks.example.com/",
            "https://user:pw@hooks.example.com/",
            "https://hooks.example.com/#frag",
            "https://127.0.0.1/",
            "https://localhost/",
            "https://10.1.2.3/",
            "https://192.168.0.1/",
            "https://169.254.169.254/latest/meta-data",
            "https://100.64.0.1/",
            "https://[::1]/",
            "https://[fd00::1]/",
            "https://[fe80::1]/",
            "https://[::ffff:10.0.0.1]/",
            "https://0.0.0.0/",
            // the spellings of internal addresses and names the issue found accepted
            "https://[::169.254.169.254]/",
            "https://[64:ff9b::a9fe:a9fe]/",
            "https://[2002:a9fe:a9fe::1]/",
            "https://[fec0::1]/",
            "https://localhost./",
            "https://hooks.localhost/",
            "https://metadata.google.internal/",
            "https://2852039166/",
            "not a url",
            "javascript:alert(1)",
            "",
        ] {
            assert!(check_url(refused, false).is_err(), "{refused}");
        }
        // the dev flag: plain http to this machine only
        assert!(check_url("http://127.0.0.1:8080/hook", true).is_ok());
        assert!(check_url("http://localhost:8080/hook", true).is_ok());
        assert!(check_url("http://[::1]:8080/hook", true).is_ok());
        assert!(check_url("http://127.0.0.1:8080/hook", false).is_err());
        assert!(check_url("http://hooks.example.com/", true).is_err());
        assert!(check_url("http://10.0.0.1/", true).is_err());
        // bounded length
        let long = format!("https://hooks.example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert!(check_url(&long, false).unwrap_err().contains("longer"));
        let fits = format!("https://h.example.com/{}", "a".repeat(MAX_URL_BYTES - 22));
        assert_eq!(fits.len(), MAX_URL_BYTES);
        assert!(check_url(&fits, false).is_ok());
        // normalization that grows the URL past the bound (percent-encoding) is caught too
        let grows = format!("https://h.example.com/{}", "x y".repeat(120));
        assert!(grows.len() <= MAX_URL_BYTES);
        assert!(check_url(&grows, false).is_err());
    }

    #[test]
    fn the_backoff_schedule() {
        // the first retry after 5 s, the last after 10 h; 8 attempts in all
        let mid: Vec<u64> = (1..MAX_ATTEMPTS)
            .map(|n| retry_delay_ms(n, 0.5).unwrap())
            .collect();
        assert_eq!(mid, RETRY_DELAYS_MS.to_vec());
        assert_eq!(retry_delay_ms(MAX_ATTEMPTS, 0.5), None);
        assert_eq!(retry_delay_ms(0, 0.5), None);
        // growing, and ±20% jitter at most
        assert!(mid.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(retry_delay_ms(1, 0.0), Some(4_000));
        assert_eq!(retry_delay_ms(1, 0.999_999), Some(6_000));
        assert_eq!(retry_delay_ms(1, 7.0), Some(6_000));
        // about a day from the first attempt to the last
        let total: u64 = RETRY_DELAYS_MS.iter().sum();
        assert!((24 * 3_600_000..30 * 3_600_000).contains(&total), "{total}");
    }

    #[test]
    fn ids_and_cursors() {
        let id = new_event_id().unwrap();
        assert!(is_event_id(&id), "{id}");
        assert_ne!(new_event_id().unwrap(), id);
        assert!(!is_event_id("msg_xyz"));
        let c = cursor(1_700_000_000_000, &id);
        assert_eq!(parse_cursor(&c), Some((1_700_000_000_000, id.as_str())));
        let zeros = "0".repeat(32);
        assert!(parse_cursor(&format!("999999999999999_msg_{zeros}")).is_some());
        assert_eq!(parse_cursor(&format!("1000000000000000_msg_{zeros}")), None);
        for bad in [
            "",
            "_",
            "12_msg_",
            "x_msg_0123",
            "-1_msg_00000000000000000000000000000000",
            "1_2_3",
        ] {
            assert_eq!(parse_cursor(bad), None, "{bad}");
        }
    }
}
