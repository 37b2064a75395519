//! Log lines in node_exporter's logfmt shape:
//! `ts=2026-12-02T01:50:50.123Z level=error msg="scrape failed" err="..."`.

use std::time::{SystemTime, UNIX_EPOCH};

/// One logfmt line (no newline) at `level` with `msg` and, when given,
/// `err`; both quoted, their `\` and `"` escaped and newlines as `\n`.
///
/// ```
/// let line = ipvsnl_exporter::log_line("error", "scrape failed", Some("no \"ip_vs\""));
/// assert!(line.starts_with("ts="));
/// assert!(line.ends_with(" level=error msg=\"scrape failed\" err=\"no \\\"ip_vs\\\"\""));
/// ```
pub fn log_line(level: &str, msg: &str, err: Option<&str>) -> String {
    let mut s = String::with_capacity(64 + msg.len());
    s.push_str("ts=");
    push_timestamp(&mut s, SystemTime::now());
    s.push_str(" level=");
    s.push_str(level);
    s.push_str(" msg=");
    push_quoted(&mut s, msg);
    if let Some(e) = err {
        s.push_str(" err=");
        push_quoted(&mut s, e);
    }
    s
}

fn push_quoted(out: &mut String, value: &str) {
    // The exposition format's label escaping is logfmt's too.
    let mut escaped = Vec::with_capacity(value.len());
    crate::text::push_escaped(&mut escaped, value);
    out.push('"');
    out.push_str(&String::from_utf8_lossy(&escaped));
    out.push('"');
}

/// RFC 3339 in UTC with milliseconds: `2026-12-02T01:50:50.123Z`.
fn push_timestamp(out: &mut String, at: SystemTime) {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (y, m, d) = civil_from_days(secs / 86_400);
    let rest = secs % 86_400;
    out.push_str(&format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60,
        since.subsec_millis()
    ));
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's days-to-civil algorithm, unsigned because the clock is after
/// the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_rfc3339() {
        let mut s = String::new();
        push_timestamp(&mut s, UNIX_EPOCH);
        assert_eq!(s, "1970-01-01T00:00:00.000Z");
        let mut s = String::new();
        // 2000-02-29 (a leap day of a century year) 12:34:56.789.
        push_timestamp(&mut s, UNIX_EPOCH + Duration::from_millis(951_827_696_789));
        assert_eq!(s, "2000-02-29T12:34:56.789Z");
        let mut s = String::new();
        push_timestamp(&mut s, UNIX_EPOCH + Duration::from_secs(1_798_761_599));
        assert_eq!(s, "2026-12-31T23:59:59.000Z");
    }
}
