//! When a server's checks run: every `interval` from the start of the
//! last, plus a jitter drawn per check so that thousands of checks with
//! one interval do not fire together. Deterministic for a seed, against
//! times the caller passes in.

use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use crate::config::HealthCheck;

/// The times of one server's checks.
///
/// ```
/// use std::time::{Duration, Instant};
/// use ipvs_agent::check::Schedule;
/// let t0 = Instant::now();
/// let mut s = Schedule::new(Duration::from_secs(2), Duration::from_millis(500), 7);
/// let first = s.first(t0);
/// assert!(first >= t0 && first <= t0 + Duration::from_millis(500));
/// let next = s.next(first);
/// assert!(next >= first + Duration::from_secs(2));
/// assert!(next <= first + Duration::from_millis(2500));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Schedule {
    interval: Duration,
    jitter: Duration,
    state: u64,
}

impl Schedule {
    /// Checks every `interval` plus up to `jitter`, the draws made from
    /// `seed` (use [`seed_of`] the server: its phase then survives a
    /// restart).
    pub fn new(interval: Duration, jitter: Duration, seed: u64) -> Self {
        Schedule {
            interval,
            jitter,
            state: seed,
        }
    }

    /// The schedule of `check` for the server seeded `seed`.
    pub fn for_check(check: &HealthCheck, seed: u64) -> Self {
        Schedule::new(check.interval, check.jitter, seed)
    }

    /// The first check's time for a server that starts being checked at
    /// `start`: within the jitter after it.
    pub fn first(&mut self, start: Instant) -> Instant {
        start + self.draw()
    }

    /// The next check's time after one that started at `started`: one
    /// interval later, plus up to the jitter.
    pub fn next(&mut self, started: Instant) -> Instant {
        started + self.interval + self.draw()
    }

    /// A duration in `[0, jitter]`, from the next value of the generator.
    fn draw(&mut self) -> Duration {
        let nanos = u64::try_from(self.jitter.as_nanos()).unwrap_or(u64::MAX);
        if nanos == 0 {
            return Duration::ZERO;
        }
        let r = splitmix64(&mut self.state);
        Duration::from_nanos(r % (nanos.saturating_add(1)).max(1))
    }
}

/// SplitMix64: a tiny generator, good enough to spread check times.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A seed for a server's schedule from anything that names it (its
/// service key, address and port): stable within one build of the agent.
pub fn seed_of(id: &impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}
