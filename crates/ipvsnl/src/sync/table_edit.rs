//! Editing one service or one destination of a [`Table`] in place, without
//! rebuilding the service: what a caller keeping a desired table does as
//! its backends come and go.

use std::fmt;
use std::net::IpAddr;

use crate::sync::table::{Table, TableDestination, TableService};
use crate::{Destination, Service, ServiceKey};

/// Why an edit of a [`Table`] could not be made: what it addresses is not
/// in the table. The table is left as it was.
///
/// ```
/// use ipvsnl::sync::{Table, TableEditError};
/// use ipvsnl::{Destination, ServiceKey};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let mut t = Table::new();
/// let e = t.set_destination(&key, Destination::new("172.16.0.1".parse().unwrap(), 80)).unwrap_err();
/// assert_eq!(e, TableEditError::NoService(key));
/// assert_eq!(e.to_string(), "no service TCP 10.0.0.1:80 in the table");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableEditError {
    /// The table holds no service with this key.
    NoService(ServiceKey),
    /// The service holds no destination with this address and port.
    NoDestination {
        /// The service's key.
        key: ServiceKey,
        /// The destination's address.
        addr: IpAddr,
        /// The destination's port.
        port: u16,
    },
}

impl fmt::Display for TableEditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableEditError::NoService(key) => write!(f, "no service {key} in the table"),
            TableEditError::NoDestination { key, addr, port } => {
                let at = std::net::SocketAddr::new(*addr, *port);
                write!(f, "no destination {at} in service {key} of the table")
            }
        }
    }
}

impl std::error::Error for TableEditError {}

/// Per-service and per-destination edits. Each changes only the service it
/// names (a cached sync of the table then plans only that service), and
/// fails, changing nothing, when that service (or, to edit a destination,
/// that destination) is not in the table.
///
/// ```
/// use ipvsnl::sync::Table;
/// use ipvsnl::{Destination, Scheduler, Service, ServiceKey};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let a = "172.16.0.1".parse().unwrap();
/// let b = "172.16.0.2".parse().unwrap();
/// let mut want = Table::new();
/// want.insert(Service::new(key), [Destination::new(a, 80)]);
/// // A backend comes: added. Its weight changes: edited in place.
/// assert_eq!(want.set_destination(&key, Destination::new(b, 80))?, None);
/// assert_eq!(want.set_weight(&key, b, 80, 5)?, 1);
/// // A backend goes.
/// assert!(want.remove_destination(&key, a, 80)?.is_some());
/// // The service's settings change; its destinations stay.
/// want.set_service(Service::new(key).with_scheduler(Scheduler::RoundRobin));
/// let svc = want.get(&key).unwrap();
/// assert_eq!(svc.service.scheduler, Scheduler::RoundRobin);
/// assert_eq!(svc.destinations.len(), 1);
/// assert_eq!(svc.destinations[0].destination.weight, 5);
/// # Ok::<(), ipvsnl::sync::TableEditError>(())
/// ```
impl Table {
    /// Sets the settings of the service with `service.key`, keeping its
    /// destinations; adds it, with no destination, if it is not there.
    /// Returns the settings it replaced.
    pub fn set_service(&mut self, service: Service) -> Option<Service> {
        match self.get_mut(&service.key) {
            Some(entry) => Some(std::mem::replace(&mut entry.service, service)),
            None => {
                self.put(TableService {
                    service,
                    destinations: Vec::new(),
                });
                None
            }
        }
    }

    /// Adds a destination to the service `key`, or replaces the settings of
    /// the one with the same address and port. Returns the settings it
    /// replaced.
    ///
    /// # Errors
    /// [`TableEditError::NoService`] if the table has no service `key`.
    pub fn set_destination(
        &mut self,
        key: &ServiceKey,
        destination: Destination,
    ) -> Result<Option<Destination>, TableEditError> {
        let entry = self.get_mut(key).ok_or(TableEditError::NoService(*key))?;
        let old = entry
            .destination(&destination.addr, destination.port)
            .map(|d| d.destination);
        entry.upsert(TableDestination::new(destination));
        Ok(old)
    }

    /// Removes the destination `addr`, `port` from the service `key`.
    /// Returns its settings, or `None` if the service has no such
    /// destination (nothing to remove).
    ///
    /// # Errors
    /// [`TableEditError::NoService`] if the table has no service `key`.
    pub fn remove_destination(
        &mut self,
        key: &ServiceKey,
        addr: IpAddr,
        port: u16,
    ) -> Result<Option<Destination>, TableEditError> {
        let found = self
            .get(key)
            .ok_or(TableEditError::NoService(*key))?
            .destination(&addr, port)
            .map(|d| d.destination);
        if found.is_some() {
            if let Some(entry) = self.get_mut(key) {
                entry.remove(&addr, port);
            }
        }
        Ok(found)
    }

    /// Sets the weight of the destination `addr`, `port` of the service
    /// `key` (0 takes no new connections; the kernel accepts up to
    /// [`WEIGHT_MAX`](crate::WEIGHT_MAX), checked when the table is
    /// applied). Returns the weight it replaced.
    ///
    /// # Errors
    /// [`TableEditError::NoService`] if the table has no service `key`,
    /// [`TableEditError::NoDestination`] if the service has no such
    /// destination.
    pub fn set_weight(
        &mut self,
        key: &ServiceKey,
        addr: IpAddr,
        port: u16,
        weight: u32,
    ) -> Result<u32, TableEditError> {
        let service = self.get(key).ok_or(TableEditError::NoService(*key))?;
        let Ok(i) = service.position(&addr, port) else {
            return Err(TableEditError::NoDestination {
                key: *key,
                addr,
                port,
            });
        };
        let entry = self.get_mut(key).ok_or(TableEditError::NoService(*key))?;
        let d = &mut entry.destinations[i].destination;
        Ok(std::mem::replace(&mut d.weight, weight))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u8) -> ServiceKey {
        ServiceKey::tcp(IpAddr::from([10, 0, 0, i]), 80)
    }

    fn addr(i: u8) -> IpAddr {
        IpAddr::from([172, 16, 0, i])
    }

    fn table() -> Table {
        let mut t = Table::new();
        t.insert(
            Service::new(key(1)),
            [Destination::new(addr(1), 80), Destination::new(addr(3), 80)],
        );
        t.insert(Service::new(key(2)), []);
        t
    }

    #[test]
    fn a_missing_service_is_an_error_and_changes_nothing() {
        let mut t = table();
        let before = t.clone();
        let stamp = t.stamp();
        let d = Destination::new(addr(1), 80);
        let missing = TableEditError::NoService(key(9));
        assert_eq!(t.set_destination(&key(9), d), Err(missing));
        assert_eq!(t.remove_destination(&key(9), addr(1), 80), Err(missing));
        assert_eq!(t.set_weight(&key(9), addr(1), 80, 3), Err(missing));
        let no_dest = TableEditError::NoDestination {
            key: key(1),
            addr: addr(2),
            port: 80,
        };
        assert_eq!(t.set_weight(&key(1), addr(2), 80, 3), Err(no_dest));
        assert_eq!(
            no_dest.to_string(),
            "no destination 172.16.0.2:80 in service TCP 10.0.0.1:80 of the table"
        );
        assert_eq!(t.remove_destination(&key(1), addr(2), 80), Ok(None));
        assert_eq!(t, before);
        assert_eq!(t.stamp(), stamp, "no change recorded");
    }

    #[test]
    fn edits_keep_destinations_sorted_and_are_journaled_per_service() {
        let mut t = table();
        let stamp = t.stamp();
        assert_eq!(
            t.set_destination(&key(1), Destination::new(addr(2), 80).with_weight(4)),
            Ok(None)
        );
        let replaced = t.set_destination(&key(1), Destination::new(addr(2), 80).with_weight(6));
        assert_eq!(replaced.unwrap().map(|d| d.weight), Some(4));
        assert_eq!(t.set_weight(&key(1), addr(3), 80, 0), Ok(1));
        let removed = t.remove_destination(&key(1), addr(1), 80).unwrap();
        assert_eq!(removed.map(|d| d.addr), Some(addr(1)));
        let s = t.get(&key(1)).unwrap();
        let got: Vec<(IpAddr, u32)> = s
            .destinations
            .iter()
            .map(|d| (d.destination.addr, d.destination.weight))
            .collect();
        assert_eq!(got, [(addr(2), 6), (addr(3), 0)]);
        // The same table built whole.
        let mut whole = Table::new();
        whole.insert(
            Service::new(key(1)),
            [
                Destination::new(addr(3), 80).with_weight(0),
                Destination::new(addr(2), 80).with_weight(6),
            ],
        );
        whole.insert(Service::new(key(2)), []);
        assert_eq!(t, whole);
        let changed: Vec<&ServiceKey> = t.changed_since(stamp).unwrap().collect();
        assert!(changed.iter().all(|k| **k == key(1)), "{changed:?}");
        assert!(!changed.is_empty());
    }

    #[test]
    fn set_service_keeps_the_destinations_or_adds_the_service() {
        let mut t = table();
        let rr = Service::new(key(1)).with_scheduler(crate::Scheduler::RoundRobin);
        let old = t.set_service(rr.clone()).unwrap();
        assert_eq!(old, Service::new(key(1)));
        assert_eq!(t.get(&key(1)).unwrap().service, rr);
        assert_eq!(t.get(&key(1)).unwrap().destinations.len(), 2);
        assert_eq!(t.set_service(Service::new(key(5))), None);
        assert!(t.get(&key(5)).unwrap().destinations.is_empty());
        assert_eq!(t.len(), 3);
    }
}
