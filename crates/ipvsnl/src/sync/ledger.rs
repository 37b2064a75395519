//! [`DrainLedger`]: the destinations being drained and since when, the
//! planner's memory between syncs.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Instant;

use crate::ServiceKey;

/// Identifies one destination of one service: the service's key, the
/// destination's address and port.
pub type DestinationId = (ServiceKey, IpAddr, u16);

/// Destinations being drained and since when (the time their drain
/// began): the planner's memory between syncs. The [`Syncer`] keeps one
/// ([`Syncer::draining`]); a [`Plan`] tells the one its requests leave
/// ([`Plan::draining`]); a caller of [`plan`](super::plan) passes the last
/// one in.
///
/// It lives in memory only: a drain's start is an [`Instant`], which has
/// no meaning in another process.
///
/// [`Syncer`]: super::Syncer
/// [`Syncer::draining`]: super::Syncer::draining
/// [`Plan`]: super::Plan
/// [`Plan::draining`]: super::Plan::draining
///
/// ```
/// use std::time::{Duration, Instant};
/// use ipvsnl::sync::DrainLedger;
/// use ipvsnl::ServiceKey;
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let id = (key, "172.16.0.1".parse().unwrap(), 80);
/// let began = Instant::now();
/// let mut ledger = DrainLedger::new();
/// ledger.record(id, began);
/// assert_eq!(ledger.since(&id), Some(began));
/// assert!(ledger.is_draining(&id));
/// assert_eq!(ledger.services().collect::<Vec<_>>(), [key]);
/// assert_eq!(ledger.forget(&id), Some(began));
/// assert!(ledger.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DrainLedger {
    began: HashMap<DestinationId, Instant>,
}

impl DrainLedger {
    /// A ledger with no drain.
    pub fn new() -> Self {
        DrainLedger::default()
    }

    /// Records that the drain of `id` began at `since` (replacing any
    /// earlier record of it).
    pub fn record(&mut self, id: DestinationId, since: Instant) {
        self.began.insert(id, since);
    }

    /// Forgets the drain of `id`; returns when it had begun, if it was
    /// recorded.
    pub fn forget(&mut self, id: &DestinationId) -> Option<Instant> {
        self.began.remove(id)
    }

    /// When the drain of `id` began, if it is draining.
    pub fn since(&self, id: &DestinationId) -> Option<Instant> {
        self.began.get(id).copied()
    }

    /// True when `id` is draining.
    pub fn is_draining(&self, id: &DestinationId) -> bool {
        self.began.contains_key(id)
    }

    /// How many destinations are draining.
    pub fn len(&self) -> usize {
        self.began.len()
    }

    /// True when no destination is draining.
    pub fn is_empty(&self) -> bool {
        self.began.is_empty()
    }

    /// The pending drains: each destination draining with the time its
    /// drain began, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&DestinationId, Instant)> {
        self.began.iter().map(|(id, t)| (id, *t))
    }

    /// The destinations draining, in no particular order.
    pub fn destinations(&self) -> impl Iterator<Item = &DestinationId> {
        self.began.keys()
    }

    /// Keeps only the drains of the services `keep` accepts.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&ServiceKey) -> bool) {
        self.began.retain(|id, _| keep(&id.0));
    }

    /// The services with a destination draining (a service once per
    /// destination draining), in no particular order.
    pub fn services(&self) -> impl Iterator<Item = ServiceKey> + '_ {
        self.began.keys().map(|id| id.0)
    }
}

impl FromIterator<(DestinationId, Instant)> for DrainLedger {
    fn from_iter<I: IntoIterator<Item = (DestinationId, Instant)>>(iter: I) -> Self {
        DrainLedger {
            began: iter.into_iter().collect(),
        }
    }
}

impl Extend<(DestinationId, Instant)> for DrainLedger {
    fn extend<I: IntoIterator<Item = (DestinationId, Instant)>>(&mut self, iter: I) {
        self.began.extend(iter);
    }
}

impl IntoIterator for DrainLedger {
    type Item = (DestinationId, Instant);
    type IntoIter = std::collections::hash_map::IntoIter<DestinationId, Instant>;

    /// The pending drains, in no particular order.
    fn into_iter(self) -> Self::IntoIter {
        self.began.into_iter()
    }
}
