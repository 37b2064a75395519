//! The differences between two listings of the table: pure, no I/O.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;

use super::Change;
use crate::{DestinationEntry, ServiceEntry, ServiceKey};

/// The changes that take listing `old` to listing `new`.
///
/// Services are matched by [`ServiceKey`], destinations of one service by
/// address and port: a destination that moves from one service to another
/// is removed from the one and added to the other. Only settings are
/// compared ([`Change`] says which); counters and connection counts are
/// not. A service added or removed carries its destinations in its entry,
/// with no destination change of its own.
///
/// The order is deterministic:
///
/// 1. [`Change::ServiceRemoved`] for each service of `old` not in `new`,
///    in `old`'s order;
/// 2. then, for each service of `new` in `new`'s order, either
///    [`Change::ServiceAdded`], or the changes of a service in both:
///    [`Change::ServiceChanged`] if its settings differ, then
///    [`Change::DestinationRemoved`] for each destination gone (in `old`'s
///    order), then [`Change::DestinationAdded`] or
///    [`Change::DestinationChanged`] for each destination (in `new`'s
///    order).
///
/// A listing of the kernel holds each key once; should one hold a key
/// twice, the first of them counts and the others are passed over.
///
/// It takes time in proportion to the services and destinations of both
/// listings (hash maps, no sorting).
///
/// ```
/// use ipvsnl::watch::{diff, Change};
/// use ipvsnl::{Destination, DestinationEntry, Service, ServiceEntry, ServiceKey};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let d = Destination::new("10.1.0.1".parse().unwrap(), 80);
/// let old = [ServiceEntry::new(Service::new(key))];
/// let new = [old[0].clone().with_destinations([DestinationEntry::new(d)])];
/// let changes = diff(&old, &new);
/// assert!(matches!(
///     &changes[..],
///     [Change::DestinationAdded { service, destination }]
///         if *service == key && destination.destination == d
/// ));
/// assert!(diff(&new, &new).is_empty());
/// ```
pub fn diff(old: &[ServiceEntry], new: &[ServiceEntry]) -> Vec<Change> {
    let old_at = first_index(old, |e| *e.key());
    let new_at = first_index(new, |e| *e.key());
    let mut out = Vec::new();
    for (i, gone) in old.iter().enumerate() {
        if old_at.get(gone.key()) == Some(&i) && !new_at.contains_key(gone.key()) {
            out.push(Change::ServiceRemoved(gone.clone()));
        }
    }
    for (i, now) in new.iter().enumerate() {
        if new_at.get(now.key()) != Some(&i) {
            continue;
        }
        match old_at.get(now.key()) {
            None => out.push(Change::ServiceAdded(now.clone())),
            Some(&j) => {
                let before = &old[j];
                if before.service != now.service {
                    out.push(Change::ServiceChanged {
                        old: before.service.clone(),
                        new: now.service.clone(),
                    });
                }
                diff_destinations(
                    *now.key(),
                    &before.destinations,
                    &now.destinations,
                    &mut out,
                );
            }
        }
    }
    out
}

/// The destination changes of one service in both listings, in
/// [`diff()`]'s order.
fn diff_destinations(
    service: ServiceKey,
    old: &[DestinationEntry],
    new: &[DestinationEntry],
    out: &mut Vec<Change>,
) {
    let old_at = first_index(old, real_server);
    let new_at = first_index(new, real_server);
    for (i, gone) in old.iter().enumerate() {
        let id = real_server(gone);
        if old_at.get(&id) == Some(&i) && !new_at.contains_key(&id) {
            out.push(Change::DestinationRemoved {
                service,
                destination: gone.clone(),
            });
        }
    }
    for (i, now) in new.iter().enumerate() {
        let id = real_server(now);
        if new_at.get(&id) != Some(&i) {
            continue;
        }
        match old_at.get(&id) {
            None => out.push(Change::DestinationAdded {
                service,
                destination: now.clone(),
            }),
            Some(&j) if old[j].destination != now.destination => {
                out.push(Change::DestinationChanged {
                    service,
                    old: old[j].destination,
                    new: now.destination,
                });
            }
            Some(_) => {}
        }
    }
}

/// What identifies a destination within its service.
fn real_server(d: &DestinationEntry) -> (IpAddr, u16) {
    (d.destination.addr, d.destination.port)
}

/// Each key's first position in `items`.
fn first_index<T, K: Hash + Eq>(items: &[T], key: impl Fn(&T) -> K) -> HashMap<K, usize> {
    let mut at = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        at.entry(key(item)).or_insert(i);
    }
    at
}
