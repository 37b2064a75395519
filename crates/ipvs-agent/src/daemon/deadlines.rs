//! The deadlines of the checks the daemon times, earliest first.
//!
//! One queue per timeout: checks with the same timeout start in time
//! order, so their deadlines come in order too, and a check's deadline is
//! appended, and taken from the front, in constant time. A binary heap of
//! every deadline cost about 500 instructions a check for the push and the
//! pop (host, callgrind, `examples/check_cost.rs`; benches/AGENT.md).

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// Deadlines, each with an id of the caller's.
#[derive(Debug, Default)]
pub(crate) struct Deadlines<T> {
    queues: Vec<(Duration, VecDeque<(Instant, T)>)>,
}

impl<T: Copy> Deadlines<T> {
    /// Adds `id`'s deadline, `timeout` after `start`.
    pub(crate) fn insert(&mut self, start: Instant, timeout: Duration, id: T) {
        let at = start + timeout;
        let queue = match self.queues.iter().position(|(t, _)| *t == timeout) {
            Some(i) => &mut self.queues[i].1,
            None => {
                self.queues.push((timeout, VecDeque::new()));
                &mut self.queues.last_mut().expect("just pushed").1
            }
        };
        match queue.back() {
            // A check started later than the last one: the usual case.
            Some((last, _)) if *last > at => {
                let i = queue.partition_point(|(d, _)| *d <= at);
                queue.insert(i, (at, id));
            }
            _ => queue.push_back((at, id)),
        }
    }

    /// The earliest deadline of an id `live` keeps; the others met first
    /// are dropped.
    pub(crate) fn first(&mut self, live: impl Fn(T) -> bool) -> Option<Instant> {
        let mut first: Option<Instant> = None;
        for (_, queue) in &mut self.queues {
            while let Some(&(at, id)) = queue.front() {
                if live(id) {
                    first = Some(first.map_or(at, |f| f.min(at)));
                    break;
                }
                queue.pop_front();
            }
        }
        first
    }

    /// An id whose deadline is `now` or past, taken out.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<T> {
        self.queues.iter_mut().find_map(|(_, queue)| {
            let &(at, _) = queue.front()?;
            (at <= now).then(|| queue.pop_front().map(|(_, id)| id))?
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn deadlines_come_out_in_time_order_across_timeouts() {
        let t0 = Instant::now();
        let mut d = Deadlines::default();
        d.insert(t0, 1000 * MS, 'a');
        d.insert(t0 + 10 * MS, 200 * MS, 'b');
        d.insert(t0 + 20 * MS, 1000 * MS, 'c');
        // Started earlier than the last of its queue: put in its place.
        d.insert(t0 + 5 * MS, 1000 * MS, 'z');
        assert_eq!(d.first(|_| true), Some(t0 + 210 * MS));
        assert_eq!(d.pop_due(t0 + 209 * MS), None);
        assert_eq!(d.pop_due(t0 + 210 * MS), Some('b'));
        assert_eq!(d.pop_due(t0 + 210 * MS), None);
        let mut out = Vec::new();
        while let Some(id) = d.pop_due(t0 + 2000 * MS) {
            out.push(id);
        }
        assert_eq!(out, ['a', 'z', 'c']);
        assert_eq!(d.first(|_| true), None);
    }

    #[test]
    fn ids_no_longer_live_are_dropped_when_first() {
        let t0 = Instant::now();
        let mut d = Deadlines::default();
        d.insert(t0, 100 * MS, 1);
        d.insert(t0 + MS, 100 * MS, 2);
        d.insert(t0 + 2 * MS, 100 * MS, 3);
        assert_eq!(d.first(|id| id == 3), Some(t0 + 102 * MS));
        assert_eq!(d.pop_due(t0 + 200 * MS), Some(3));
        assert_eq!(d.first(|_| true), None);
    }
}
