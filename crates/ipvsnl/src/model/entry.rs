//! Listed state: a service or destination as the kernel reports it, with
//! its counters.
//!
//! Listings fill these; tests and tools build them with the constructors
//! (the types are `#[non_exhaustive]`, so a struct literal is refused
//! outside this crate).

use crate::{Destination, Service, ServiceKey, Stats};

/// A service as listed by the kernel: its configuration, its counters and,
/// when the listing fetched them, its destinations.
///
/// [`crate::Client::table`] fills `destinations`; listings of services
/// alone ([`crate::Client::services`], [`crate::Client::service`],
/// [`crate::Client::for_each_service`]) leave it empty.
///
/// A fixture, as a test of a tool that prints listings would build one:
///
/// ```
/// use ipvsnl::{Destination, DestinationEntry, Service, ServiceEntry, ServiceKey, Stats};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let row = ServiceEntry::new(Service::new(key))
///     .with_stats(Stats::new().with_conns(12).with_packets(40, 38))
///     .with_destinations([
///         DestinationEntry::new(Destination::new("10.1.0.1".parse().unwrap(), 80))
///             .with_active_conns(3),
///     ]);
/// assert_eq!(row.key(), &key);
/// assert_eq!(row.service.key, key);
/// assert_eq!(row.stats.conns, 12);
/// assert_eq!(row.destinations[0].active_conns, 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct ServiceEntry {
    /// The configuration.
    pub service: Service,
    /// Counters and rates since the last zero.
    #[cfg_attr(feature = "serde", serde(default))]
    pub stats: Stats,
    /// Its destinations, in the kernel's order (newest first); empty when
    /// the listing did not fetch them.
    #[cfg_attr(feature = "serde", serde(default))]
    pub destinations: Vec<DestinationEntry>,
}

impl ServiceEntry {
    /// A listed service with zero counters and no destinations.
    pub fn new(service: Service) -> Self {
        ServiceEntry {
            service,
            stats: Stats::default(),
            destinations: Vec::new(),
        }
    }

    /// Sets the counters.
    #[must_use]
    pub fn with_stats(mut self, stats: Stats) -> Self {
        self.stats = stats;
        self
    }

    /// Sets the destinations (replacing any).
    #[must_use]
    pub fn with_destinations(
        mut self,
        destinations: impl IntoIterator<Item = DestinationEntry>,
    ) -> Self {
        self.destinations = destinations.into_iter().collect();
        self
    }

    /// What identifies the service.
    pub fn key(&self) -> &ServiceKey {
        &self.service.key
    }
}

/// A destination as listed by the kernel: configuration, connection counts
/// and counters.
///
/// ```
/// use ipvsnl::{Destination, DestinationEntry, Stats};
/// let d = DestinationEntry::new(Destination::new("10.1.0.1".parse().unwrap(), 80))
///     .with_active_conns(5)
///     .with_inactive_conns(2)
///     .with_persistent_conns(1)
///     .with_stats(Stats::new().with_conns(8));
/// assert_eq!((d.active_conns, d.inactive_conns, d.persistent_conns), (5, 2, 1));
/// assert_eq!(d.stats.conns, 8);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct DestinationEntry {
    /// The configuration.
    pub destination: Destination,
    /// Active connections.
    #[cfg_attr(feature = "serde", serde(default))]
    pub active_conns: u32,
    /// Inactive connections.
    #[cfg_attr(feature = "serde", serde(default))]
    pub inactive_conns: u32,
    /// Persistent connection templates.
    #[cfg_attr(feature = "serde", serde(default))]
    pub persistent_conns: u32,
    /// Counters and rates since the last zero.
    #[cfg_attr(feature = "serde", serde(default))]
    pub stats: Stats,
}

impl DestinationEntry {
    /// A listed destination with no connections and zero counters.
    pub fn new(destination: Destination) -> Self {
        DestinationEntry {
            destination,
            active_conns: 0,
            inactive_conns: 0,
            persistent_conns: 0,
            stats: Stats::default(),
        }
    }

    /// Sets the active connection count.
    #[must_use]
    pub fn with_active_conns(mut self, n: u32) -> Self {
        self.active_conns = n;
        self
    }

    /// Sets the inactive connection count.
    #[must_use]
    pub fn with_inactive_conns(mut self, n: u32) -> Self {
        self.inactive_conns = n;
        self
    }

    /// Sets the persistent connection template count.
    #[must_use]
    pub fn with_persistent_conns(mut self, n: u32) -> Self {
        self.persistent_conns = n;
        self
    }

    /// Sets the counters.
    #[must_use]
    pub fn with_stats(mut self, stats: Stats) -> Self {
        self.stats = stats;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_start_from_zero_and_builders_set_one_field_each() {
        let key = ServiceKey::udp("10.0.0.1".parse().unwrap(), 53);
        let e = ServiceEntry::new(Service::new(key));
        assert_eq!(e.stats, Stats::default());
        assert!(e.destinations.is_empty());
        let d = DestinationEntry::new(Destination::new("10.1.0.1".parse().unwrap(), 53));
        assert_eq!(
            (d.active_conns, d.inactive_conns, d.persistent_conns),
            (0, 0, 0)
        );
        let d = d.with_inactive_conns(4);
        assert_eq!(
            (d.active_conns, d.inactive_conns, d.persistent_conns),
            (0, 4, 0)
        );
        let e = e
            .with_destinations([d.clone(), d.clone()])
            .with_destinations([d]);
        assert_eq!(e.destinations.len(), 1, "with_destinations replaces");
        assert_eq!(e.key(), &key);
    }
}
