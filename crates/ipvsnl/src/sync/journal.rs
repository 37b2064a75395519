//! [`Journal`]: which services of a [`Table`](crate::sync::Table) changed
//! since an earlier state of it, so that a sync from the cached view plans
//! only those (its cost then grows with the change, not with the table).
//!
//! Every change of a table draws a stamp, unique in the process, from one
//! counter: a stamp therefore names one content of a table. A clone keeps
//! the stamp and the journal of its original, and each copy then draws its
//! own stamps, so a syncer that remembers the stamp of the table it
//! converged to can ask any later table "which keys changed since that
//! state?" and get an answer only if the table really descends from it.
//!
//! The journal is bounded: past a quarter of the table's size (and at
//! least [`MIN_KEPT`] entries) it is dropped, and a table that changed that
//! much is planned whole, which costs no more than the change did.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::ServiceKey;

/// The next stamp to hand out. Zero is never handed out.
static NEXT_STAMP: AtomicU64 = AtomicU64::new(1);

/// A journal always keeps at least this many changes before it is dropped.
pub(crate) const MIN_KEPT: usize = 1024;

fn draw() -> u64 {
    NEXT_STAMP.fetch_add(1, Ordering::Relaxed)
}

/// The stamp of a table's content and the keys changed since a base state.
#[derive(Debug, Clone)]
pub(crate) struct Journal {
    /// The stamp of the current content.
    stamp: u64,
    /// The stamp of the content the recorded changes start from.
    base: u64,
    /// Each change: the stamp of the content it made, and the key changed.
    /// Stamps increase along the list.
    changes: Vec<(u64, ServiceKey)>,
}

impl Default for Journal {
    fn default() -> Self {
        let stamp = draw();
        Journal {
            stamp,
            base: stamp,
            changes: Vec::new(),
        }
    }
}

impl Journal {
    /// The stamp of the current content.
    pub(crate) fn stamp(&self) -> u64 {
        self.stamp
    }

    /// Records a change of `key` in a table now holding `len` services.
    pub(crate) fn record(&mut self, key: ServiceKey, len: usize) {
        self.stamp = draw();
        if self.changes.len() >= MIN_KEPT.max(len / 4) {
            // Too much changed to be worth a list: start again from here.
            self.changes.clear();
            self.base = self.stamp;
            return;
        }
        self.changes.push((self.stamp, key));
    }

    /// The keys changed since the content stamped `since` (with repeats),
    /// or `None` if this table does not descend from that content or the
    /// journal no longer reaches back to it.
    pub(crate) fn changed_since(&self, since: u64) -> Option<&[(u64, ServiceKey)]> {
        if since == self.stamp {
            return Some(&[]);
        }
        if since == self.base {
            return Some(&self.changes);
        }
        let at = self.changes.binary_search_by_key(&since, |c| c.0).ok()?;
        Some(&self.changes[at + 1..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u16) -> ServiceKey {
        ServiceKey::tcp("10.0.0.1".parse().unwrap(), n)
    }

    fn keys(c: Option<&[(u64, ServiceKey)]>) -> Option<Vec<u16>> {
        c.map(|c| {
            c.iter()
                .map(|(_, k)| match k {
                    ServiceKey::Inet { port, .. } => *port,
                    ServiceKey::Fwmark { .. } => 0,
                })
                .collect()
        })
    }

    #[test]
    fn a_table_knows_what_changed_since_any_of_its_states() {
        let mut j = Journal::default();
        let start = j.stamp();
        j.record(key(1), 1);
        let after_one = j.stamp();
        j.record(key(2), 2);
        j.record(key(1), 2);
        assert_eq!(keys(j.changed_since(start)), Some(vec![1, 2, 1]));
        assert_eq!(keys(j.changed_since(after_one)), Some(vec![2, 1]));
        assert_eq!(keys(j.changed_since(j.stamp())), Some(vec![]));
    }

    #[test]
    fn clones_part_ways_and_each_answers_for_its_own_line() {
        let mut a = Journal::default();
        a.record(key(1), 1);
        let shared = a.stamp();
        let mut b = a.clone();
        a.record(key(2), 2);
        b.record(key(3), 2);
        assert_eq!(keys(a.changed_since(shared)), Some(vec![2]));
        assert_eq!(keys(b.changed_since(shared)), Some(vec![3]));
        // A state of the other line is not one of ours.
        assert_eq!(a.changed_since(b.stamp()), None);
        assert_eq!(b.changed_since(a.stamp()), None);
        // Nor is another table's.
        assert_eq!(Journal::default().changed_since(shared), None);
    }

    #[test]
    fn a_journal_past_its_bound_starts_again_and_forgets_older_states() {
        let mut j = Journal::default();
        let start = j.stamp();
        for n in 0..=MIN_KEPT as u16 {
            j.record(key(n), 10);
        }
        assert_eq!(j.changed_since(start), None, "the list was dropped");
        let now = j.stamp();
        j.record(key(7), 10);
        assert_eq!(keys(j.changed_since(now)), Some(vec![7]));
        // The bound grows with the table: a quarter of it.
        let mut big = Journal::default();
        let from = big.stamp();
        for n in 0..2000u16 {
            big.record(key(n), 100_000);
        }
        assert_eq!(big.changed_since(from).map(<[_]>::len), Some(2000));
    }
}
