//! Durations as the file (and the `--watch` flag) writes them: the
//! exporter's grammar ([`ipvsnl_exporter::parse_duration`]: a whole number
//! and a unit), from zero to a week.

use std::time::Duration;

use ipvsnl_exporter::DurationBounds;

/// What the file accepts: zero (a `jitter` of none) to a week (anything
/// longer is a typo).
pub const FILE_DURATIONS: DurationBounds =
    DurationBounds::new(Duration::ZERO, Duration::from_secs(7 * 24 * 3600));

/// Parses `"250ms"`, `"2s"`, `"5m"` or `"1h"` within [`FILE_DURATIONS`];
/// the error completes the sentence "\"x\" ...".
///
/// ```
/// # use std::time::Duration;
/// use ipvs_agent::config::parse_duration;
/// assert_eq!(parse_duration("1500ms"), Ok(Duration::from_millis(1500)));
/// assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
/// assert!(parse_duration("2").is_err());
/// ```
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    ipvsnl_exporter::parse_duration(s, FILE_DURATIONS).map_err(|e| e.to_string())
}
