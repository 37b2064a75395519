//! The checks due, earliest first: what the daemon loop sleeps until.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

/// Checks waiting for their time, each named by an id of the caller's.
///
/// ```
/// use std::time::{Duration, Instant};
/// use ipvs_agent::check::Timetable;
/// let t0 = Instant::now();
/// let mut t = Timetable::new();
/// t.insert(t0 + Duration::from_secs(2), "b");
/// t.insert(t0 + Duration::from_secs(1), "a");
/// assert_eq!(t.next_due(), Some(t0 + Duration::from_secs(1)));
/// assert_eq!(t.pop_due(t0), None);
/// assert_eq!(t.pop_due(t0 + Duration::from_secs(5)).map(|(_, id)| id), Some("a"));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Timetable<T: Ord> {
    queue: BinaryHeap<Reverse<(Instant, u64, T)>>,
    inserted: u64,
}

impl<T: Ord> Default for Timetable<T> {
    fn default() -> Self {
        Timetable {
            queue: BinaryHeap::new(),
            inserted: 0,
        }
    }
}

impl<T: Ord> Timetable<T> {
    /// An empty timetable.
    pub fn new() -> Self {
        Timetable::default()
    }

    /// Adds the check `id`, due at `at`. Checks due at the same time come
    /// out in the order they went in.
    pub fn insert(&mut self, at: Instant, id: T) {
        self.inserted += 1;
        self.queue.push(Reverse((at, self.inserted, id)));
    }

    /// The earliest time a check is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.queue.peek().map(|Reverse((at, _, _))| *at)
    }

    /// The earliest check if it is due at `now`, with its due time.
    pub fn pop_due(&mut self, now: Instant) -> Option<(Instant, T)> {
        if self.next_due()? > now {
            return None;
        }
        self.queue.pop().map(|Reverse((at, _, id))| (at, id))
    }

    /// How many checks wait.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}
