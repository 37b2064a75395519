//! Durations as people write them in flags and files: a whole number and a
//! unit, `ms`, `s`, `m` or `h` (`500ms`, `10s`, `2m`). One grammar for the
//! exporter's flags and the agent's file and flags; what each accepts is a
//! [`DurationBounds`], given with the text.

use std::fmt;
use std::time::Duration;

/// The shortest and longest durations a reader accepts (both included).
///
/// ```
/// use std::time::Duration;
/// use ipvsnl_exporter::DurationBounds;
/// let file = DurationBounds::new(Duration::ZERO, Duration::from_secs(7 * 24 * 3600));
/// assert_eq!(file.max, Duration::from_secs(604_800));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DurationBounds {
    /// The shortest duration accepted.
    pub min: Duration,
    /// The longest duration accepted.
    pub max: Duration,
}

impl DurationBounds {
    /// What the exporter's flags accept: more than zero (1 ms), at most a
    /// year (8760h).
    pub const FLAGS: DurationBounds = DurationBounds::new(
        Duration::from_millis(1),
        Duration::from_secs(365 * 24 * 3600),
    );

    /// Durations from `min` to `max`, both included.
    pub const fn new(min: Duration, max: Duration) -> Self {
        DurationBounds { min, max }
    }
}

/// Why a text is not a duration within its bounds. Its `Display` completes
/// the sentence `"TEXT" ...` (the caller quotes the text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DurationError {
    /// Not a whole number followed by one of the units.
    Malformed,
    /// The number does not fit in 64 bits of milliseconds.
    Overflow,
    /// Shorter than the bounds' `min`.
    TooShort {
        /// The shortest duration accepted.
        min: Duration,
    },
    /// Longer than the bounds' `max`.
    TooLong {
        /// The longest duration accepted.
        max: Duration,
    },
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::Malformed => f.write_str(
                "is not a duration: write a whole number and a unit, ms, s, m or h \
                 (\"500ms\", \"2s\")",
            ),
            DurationError::Overflow => f.write_str("is too long a duration"),
            DurationError::TooShort { min } if *min <= Duration::from_millis(1) => {
                f.write_str("is zero: the duration must be more than zero")
            }
            DurationError::TooShort { min } => write!(
                f,
                "is shorter than {}, the shortest duration accepted",
                format_duration(*min)
            ),
            DurationError::TooLong { max } => write!(
                f,
                "is longer than {}, the longest duration accepted",
                format_duration(*max)
            ),
        }
    }
}

impl std::error::Error for DurationError {}

/// Parses `text` as a whole number and a unit, `ms`, `s`, `m` or `h`,
/// within `bounds`.
///
/// ```
/// use std::time::Duration;
/// use ipvsnl_exporter::{parse_duration, DurationBounds, DurationError};
/// let flags = DurationBounds::FLAGS;
/// assert_eq!(parse_duration("500ms", flags), Ok(Duration::from_millis(500)));
/// assert_eq!(parse_duration("2m", flags), Ok(Duration::from_secs(120)));
/// assert_eq!(parse_duration("10", flags), Err(DurationError::Malformed));
/// let err = parse_duration("0s", flags).unwrap_err();
/// assert_eq!(format!("\"0s\" {err}"), "\"0s\" is zero: the duration must be more than zero");
/// ```
pub fn parse_duration(text: &str, bounds: DurationBounds) -> Result<Duration, DurationError> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = text.split_at(digits);
    let millis_per: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(DurationError::Malformed),
    };
    if number.is_empty() {
        return Err(DurationError::Malformed);
    }
    let millis = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(millis_per))
        .ok_or(DurationError::Overflow)?;
    let d = Duration::from_millis(millis);
    if d < bounds.min {
        return Err(DurationError::TooShort { min: bounds.min });
    }
    if d > bounds.max {
        return Err(DurationError::TooLong { max: bounds.max });
    }
    Ok(d)
}

/// Writes `d` the way [`parse_duration`] reads it, in the largest unit
/// that divides it (`90s`, `2m`, `1500ms`).
///
/// ```
/// use std::time::Duration;
/// use ipvsnl_exporter::format_duration;
/// assert_eq!(format_duration(Duration::from_secs(120)), "2m");
/// assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
/// ```
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    match ms {
        _ if ms % 3_600_000 == 0 && ms > 0 => format!("{}h", ms / 3_600_000),
        _ if ms % 60_000 == 0 && ms > 0 => format!("{}m", ms / 60_000),
        _ if ms % 1000 == 0 => format!("{}s", ms / 1000),
        _ => format!("{ms}ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_and_written() {
        let flags = DurationBounds::FLAGS;
        for (text, d) in [
            ("1ms", Duration::from_millis(1)),
            ("10s", Duration::from_secs(10)),
            ("90s", Duration::from_secs(90)),
            ("2m", Duration::from_secs(120)),
            ("1h", Duration::from_secs(3600)),
        ] {
            assert_eq!(parse_duration(text, flags), Ok(d), "{text}");
            assert_eq!(format_duration(d), text);
        }
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        for bad in [
            "",
            "s",
            "10",
            "-1s",
            "1.5s",
            "10 s",
            "1d",
            "0s",
            "99999999999s",
        ] {
            assert!(parse_duration(bad, flags).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_bounds_are_the_callers() {
        let week = Duration::from_secs(7 * 24 * 3600);
        let file = DurationBounds::new(Duration::ZERO, week);
        assert_eq!(parse_duration("0s", file), Ok(Duration::ZERO));
        assert_eq!(parse_duration("168h", file), Ok(week));
        let over = parse_duration("169h", file).unwrap_err();
        assert_eq!(over, DurationError::TooLong { max: week });
        assert_eq!(
            over.to_string(),
            "is longer than 168h, the longest duration accepted"
        );
        let huge = "99999999999999999999ms";
        assert_eq!(parse_duration(huge, file), Err(DurationError::Overflow));
        let second = DurationBounds::new(Duration::from_secs(1), week);
        let short = parse_duration("500ms", second).unwrap_err();
        assert_eq!(
            short.to_string(),
            "is shorter than 1s, the shortest duration accepted"
        );
    }
}
