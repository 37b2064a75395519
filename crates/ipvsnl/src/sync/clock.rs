//! The clock a [`Syncer`](crate::sync::Syncer)'s drains are timed by.

use std::fmt;
use std::time::Instant;

/// Where the sync engine reads the time: when a drain began, and whether
/// it has run past its [`Drain::max`](crate::sync::Drain::max).
///
/// The default is the system's monotonic clock. A daemon tested with
/// tokio's paused clock gives tokio's instead, so that the test's
/// `tokio::time::advance` moves the drains too:
///
/// ```
/// use ipvsnl::sync::{Clock, PlanOptions, Scope};
/// # #[cfg(feature = "tokio")]
/// let options = PlanOptions::new(Scope::All)
///     .with_clock(Clock::from_fn(|| tokio::time::Instant::now().into_std()));
/// ```
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct Clock {
    source: Source,
}

#[derive(Clone, Copy)]
enum Source {
    System,
    Fn(fn() -> Instant),
}

impl Clock {
    /// The system's monotonic clock (`Instant::now`).
    pub fn system() -> Self {
        Clock {
            source: Source::System,
        }
    }

    /// A clock that reads `now`.
    pub fn from_fn(now: fn() -> Instant) -> Self {
        Clock {
            source: Source::Fn(now),
        }
    }

    /// The time now.
    pub fn now(&self) -> Instant {
        match self.source {
            Source::System => Instant::now(),
            Source::Fn(now) => now(),
        }
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::system()
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source {
            Source::System => f.write_str("Clock::system()"),
            Source::Fn(_) => f.write_str("Clock::from_fn(..)"),
        }
    }
}
