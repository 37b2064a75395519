//! [`Table`]: services with their destinations, as wanted or as found.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use crate::sync::journal::Journal;
use crate::{Destination, Forward, Service, ServiceEntry, ServiceFlags, ServiceKey};

/// A destination as the planner sees it: its settings and, when it was
/// listed from the kernel, how many connections it still holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct TableDestination {
    /// The settings.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub destination: Destination,
    /// Active plus inactive connections when listed (0 for a wanted one).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "crate::sync::table_serde::is_zero")
    )]
    pub connections: u64,
    /// Persistence templates bound to it when listed (the kernel's
    /// "persistent connections", `IPVS_DEST_ATTR_PERSIST_CONNS`; 0 for a
    /// wanted one): while one lives, a persistent service sends its
    /// client here, whatever the weight.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "crate::sync::table_serde::is_zero")
    )]
    pub templates: u64,
}

impl TableDestination {
    /// A wanted destination: these settings, no connections.
    pub(crate) fn new(destination: Destination) -> Self {
        TableDestination {
            destination,
            connections: 0,
            templates: 0,
        }
    }
}

/// A service and its destinations, sorted by address and port.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct TableService {
    /// The service's settings.
    pub service: Service,
    /// Its destinations, sorted by (address, port), no duplicates.
    #[cfg_attr(feature = "serde", serde(default))]
    pub destinations: Vec<TableDestination>,
}

impl TableService {
    /// The destination with this address and port, if any.
    pub fn destination(&self, addr: &IpAddr, port: u16) -> Option<&TableDestination> {
        self.position(addr, port)
            .ok()
            .map(|i| &self.destinations[i])
    }

    pub(crate) fn position(&self, addr: &IpAddr, port: u16) -> Result<usize, usize> {
        self.destinations
            .binary_search_by(|d| dest_id(&d.destination).cmp(&(*addr, port)))
    }

    /// Inserts or replaces a destination (keeps the order).
    pub(crate) fn upsert(&mut self, d: TableDestination) {
        match self.position(&d.destination.addr, d.destination.port) {
            Ok(i) => self.destinations[i] = d,
            Err(i) => self.destinations.insert(i, d),
        }
    }

    /// Removes a destination, if present.
    pub(crate) fn remove(&mut self, addr: &IpAddr, port: u16) {
        if let Ok(i) = self.position(addr, port) {
            self.destinations.remove(i);
        }
    }
}

pub(crate) fn dest_id(d: &Destination) -> (IpAddr, u16) {
    (d.addr, d.port)
}

/// A set of services with their destinations, keyed and sorted by
/// [`ServiceKey`]: the desired state handed to the planner, and the state
/// listed from the kernel (or remembered from the last sync).
///
/// ```
/// use ipvsnl::sync::Table;
/// use ipvsnl::{Destination, Service, ServiceKey};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let mut want = Table::new();
/// want.insert(
///    Service::new(key),
///    [Destination::new("172.16.0.1".parse().unwrap(), 80)],
/// );
/// assert_eq!(want.len(), 1);
/// assert_eq!(want.destination_count(), 1);
/// ```
///
/// Entries are shared, copied on write: cloning a table (as the sync
/// engine does to remember what it wrote) copies no service.
///
/// With the `serde` feature a table is data: a list of services, each with
/// its destinations, read back as [`Table::insert`] takes them (sorted, a
/// destination or service given twice keeps its last settings; left-out
/// fields take the defaults of [`Service::new`] and [`Destination::new`]).
///
/// ```
/// # #[cfg(feature = "serde")] {
/// use ipvsnl::sync::Table;
/// let json = r#"[
///   { "service": { "key": { "inet": { "protocol": "TCP", "addr": "10.0.0.1", "port": 80 } },
///                  "scheduler": "rr" },
///     "destinations": [ { "addr": "10.1.0.2", "port": 80, "weight": 2 },
///                       { "addr": "10.1.0.1", "port": 80 } ] }
/// ]"#;
/// let t: Table = serde_json::from_str(json).unwrap();
/// let svc = t.iter().next().unwrap();
/// assert_eq!(svc.service.scheduler, ipvsnl::Scheduler::RoundRobin);
/// assert_eq!(svc.destinations[0].destination.weight, 1, "sorted, weight defaults to 1");
/// assert_eq!(serde_json::from_str::<Table>(&serde_json::to_string(&t).unwrap()).unwrap(), t);
/// # }
/// ```
///
/// A table keeps a short journal of the services changed in it, so that a
/// [`Syncer::sync_cached`](crate::sync::Syncer::sync_cached) of a table
/// that descends from the one last synced plans only those services. Two
/// tables are equal when they hold the same services, whatever their
/// histories.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Table {
    services: BTreeMap<ServiceKey, Arc<TableService>>,
    journal: Journal,
}

impl PartialEq for Table {
    fn eq(&self, other: &Table) -> bool {
        self.services == other.services
    }
}

impl Eq for Table {}

impl Table {
    /// An empty table.
    pub fn new() -> Self {
        Table::default()
    }

    /// Adds (or replaces) a service with its destinations. A destination
    /// listed twice (same address and port) keeps its last settings.
    pub fn insert(
        &mut self,
        service: Service,
        destinations: impl IntoIterator<Item = Destination>,
    ) {
        let dests: Vec<TableDestination> = destinations
            .into_iter()
            .map(TableDestination::new)
            .collect();
        self.insert_table_destinations(service, dests);
    }

    /// [`Table::insert`] of destinations with their connection counts.
    pub(crate) fn insert_table_destinations(
        &mut self,
        service: Service,
        mut dests: Vec<TableDestination>,
    ) {
        // Stable sort, then keep the last of equal ids.
        dests.sort_by_key(|d| dest_id(&d.destination));
        let mut out: Vec<TableDestination> = Vec::with_capacity(dests.len());
        for d in dests {
            match out.last_mut() {
                Some(last) if dest_id(&last.destination) == dest_id(&d.destination) => *last = d,
                _ => out.push(d),
            }
        }
        self.put(TableService {
            service,
            destinations: out,
        });
    }

    /// Removes a service; returns it if it was there.
    pub fn remove(&mut self, key: &ServiceKey) -> Option<TableService> {
        let removed = self.services.remove(key)?;
        self.journal.record(*key, self.services.len());
        Some(Arc::try_unwrap(removed).unwrap_or_else(|shared| (*shared).clone()))
    }

    /// The service with this key.
    pub fn get(&self, key: &ServiceKey) -> Option<&TableService> {
        self.services.get(key).map(|e| &**e)
    }

    /// The service with this key, for a change (copied first if another
    /// table shares it).
    pub(crate) fn get_mut(&mut self, key: &ServiceKey) -> Option<&mut TableService> {
        let len = self.services.len();
        let entry = self.services.get_mut(key)?;
        self.journal.record(*key, len);
        Some(Arc::make_mut(entry))
    }

    pub(crate) fn put(&mut self, entry: TableService) {
        let key = entry.service.key;
        self.services.insert(key, Arc::new(entry));
        self.journal.record(key, self.services.len());
    }

    /// Adds the entry of another table, shared.
    pub(crate) fn put_shared(&mut self, from: &Table, key: &ServiceKey) {
        if let Some(e) = from.services.get(key) {
            self.services.insert(*key, Arc::clone(e));
            self.journal.record(*key, self.services.len());
        }
    }

    /// The entries of these keys (those it has), shared: the part of the
    /// table a plan of only those services reads.
    pub(crate) fn subset<'a>(&self, keys: impl IntoIterator<Item = &'a ServiceKey>) -> Table {
        let mut part = Table::new();
        for key in keys {
            if let Some(e) = self.services.get(key) {
                part.services.insert(*key, Arc::clone(e));
            }
        }
        part
    }

    /// The stamp of this content (see [`Journal`]).
    pub(crate) fn stamp(&self) -> u64 {
        self.journal.stamp()
    }

    /// The keys changed since the content stamped `since`, if this table
    /// descends from it and its journal reaches back that far.
    pub(crate) fn changed_since(&self, since: u64) -> Option<impl Iterator<Item = &ServiceKey>> {
        self.journal
            .changed_since(since)
            .map(|changes| changes.iter().map(|(_, key)| key))
    }

    /// Every service, in key order.
    pub fn iter(
        &self,
    ) -> impl DoubleEndedIterator<Item = &TableService> + ExactSizeIterator + Clone + '_ {
        self.services.values().map(|e| &**e)
    }

    /// Every entry, shared, in key order (what a plan refers to).
    pub(crate) fn entries(&self) -> impl Iterator<Item = &Arc<TableService>> + '_ {
        self.services.values()
    }

    /// Every key, in order.
    pub fn keys(
        &self,
    ) -> impl DoubleEndedIterator<Item = &ServiceKey> + ExactSizeIterator + Clone + '_ {
        self.services.keys()
    }

    /// How many services.
    pub fn len(&self) -> usize {
        self.services.len()
    }

    /// True when there is no service.
    pub fn is_empty(&self) -> bool {
        self.services.is_empty()
    }

    /// How many destinations, over all services.
    pub fn destination_count(&self) -> usize {
        self.services.values().map(|s| s.destinations.len()).sum()
    }

    /// The table listed from the kernel ([`crate::Client::table`]), with
    /// each destination's active plus inactive connections and its
    /// persistence templates.
    pub fn from_entries(entries: impl IntoIterator<Item = ServiceEntry>) -> Self {
        let mut t = Table::new();
        for e in entries {
            t.put(service_from_entry(e));
        }
        t
    }

    /// True when both tables hold the same service keys, each with the same
    /// settings and the same destinations with the same settings
    /// (connection counts and kernel-only flags aside): what a converged
    /// sync leaves.
    ///
    /// ```
    /// use ipvsnl::sync::Table;
    /// use ipvsnl::{Service, ServiceKey};
    /// let mut a = Table::new();
    /// a.insert(Service::new(ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80)), []);
    /// let mut b = Table::new();
    /// b.insert(Service::new(ServiceKey::tcp("10.0.0.2".parse().unwrap(), 80)), []);
    /// assert!(a.same_settings(&a.clone()));
    /// assert!(!a.same_settings(&b));
    /// ```
    pub fn same_settings(&self, other: &Table) -> bool {
        self.len() == other.len()
            && self
                .services
                .iter()
                .zip(&other.services)
                .all(|((ka, a), (kb, b))| {
                    ka == kb
                        && service_matches(&b.service, &a.service)
                        && a.destinations.len() == b.destinations.len()
                        && a.destinations.iter().zip(&b.destinations).all(|(x, y)| {
                            dest_id(&x.destination) == dest_id(&y.destination)
                                && dest_matches(&x.destination, &y.destination)
                        })
                })
    }
}

pub(crate) fn service_from_entry(e: ServiceEntry) -> TableService {
    let mut destinations: Vec<TableDestination> = e
        .destinations
        .into_iter()
        .map(|d| TableDestination {
            destination: d.destination,
            connections: u64::from(d.active_conns) + u64::from(d.inactive_conns),
            templates: u64::from(d.persistent_conns),
        })
        .collect();
    destinations.sort_by_key(|d| dest_id(&d.destination));
    destinations.dedup_by_key(|d| dest_id(&d.destination));
    TableService {
        service: e.service,
        destinations,
    }
}

impl FromIterator<(Service, Vec<Destination>)> for Table {
    fn from_iter<I: IntoIterator<Item = (Service, Vec<Destination>)>>(iter: I) -> Self {
        let mut t = Table::new();
        for (s, d) in iter {
            t.insert(s, d);
        }
        t
    }
}

/// Whether the service found (`current`) already has the wanted settings.
/// The kernel adds `HASHED` to every service it holds; that is not a setting.
pub(crate) fn service_matches(current: &Service, wanted: &Service) -> bool {
    current.scheduler == wanted.scheduler
        && current.flags - ServiceFlags::HASHED == wanted.flags - ServiceFlags::HASHED
        && current.timeout == wanted.timeout
        && current.netmask == wanted.netmask
        && current.persistence_engine == wanted.persistence_engine
}

/// Whether the destination found already has the wanted settings.
///
/// The kernel forces the forwarding method of a destination whose address
/// is local to the director to `Local`, whatever was asked: a listed
/// `Local` therefore matches any wanted method (an edit would change
/// nothing).
pub(crate) fn dest_matches(current: &Destination, wanted: &Destination) -> bool {
    current.weight == wanted.weight
        && current.upper_threshold == wanted.upper_threshold
        && current.lower_threshold == wanted.lower_threshold
        && (current.forward == wanted.forward || current.forward == Forward::Local)
}
