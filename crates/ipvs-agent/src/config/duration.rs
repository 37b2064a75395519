//! Durations as the file writes them: a whole number and a unit.

use std::time::Duration;

/// Parses `"250ms"`, `"2s"`, `"5m"` or `"1h"`; the error completes the
/// sentence "\"x\" ...".
///
/// ```
/// # use std::time::Duration;
/// use ipvs_agent::config::parse_duration;
/// assert_eq!(parse_duration("1500ms"), Ok(Duration::from_millis(1500)));
/// assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
/// assert!(parse_duration("2").is_err());
/// ```
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    const HINT: &str =
        "is not a duration: write a whole number and a unit, ms, s, m or h (\"500ms\", \"2s\")";
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = s.split_at(digits);
    if number.is_empty() {
        return Err(HINT.to_string());
    }
    let Ok(n) = number.parse::<u64>() else {
        return Err("is too long a duration".to_string());
    };
    let millis_per = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(HINT.to_string()),
    };
    // A day of milliseconds is far below this bound; anything above is a typo.
    const MAX_MILLIS: u64 = 7 * 24 * 3_600_000;
    match n.checked_mul(millis_per) {
        Some(ms) if ms <= MAX_MILLIS => Ok(Duration::from_millis(ms)),
        _ => Err("is longer than a week, the longest duration accepted".to_string()),
    }
}
