//! The label sets of one kind of series (services, destinations), built
//! into one buffer and kept from one render to the next while the table's
//! keys stay the same: a steady table pays for its label sets once.

use std::net::IpAddr;

use ipvsnl::{Forward, Scheduler, ServiceEntry, ServiceKey};

use crate::labels;

/// What a service's label set is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServiceLabelKey {
    key: ServiceKey,
    scheduler: Scheduler,
}

/// What a destination's label set is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DestLabelKey {
    service: ServiceKey,
    addr: IpAddr,
    port: u16,
    forward: Forward,
}

/// Label sets back to back, where each ends, and the keys they were built
/// from.
#[derive(Debug, Clone)]
pub(crate) struct LabelSets<K> {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    keys: Vec<K>,
}

impl<K: PartialEq> LabelSets<K> {
    /// No sets yet.
    pub(crate) fn new() -> Self {
        LabelSets {
            bytes: Vec::new(),
            ends: Vec::new(),
            keys: Vec::new(),
        }
    }

    /// The sets in order, from the `i`-th on.
    pub(crate) fn iter_from(&self, i: usize) -> impl Iterator<Item = &[u8]> {
        let mut start = match i.checked_sub(1) {
            Some(prev) => self.ends.get(prev).copied().unwrap_or(0),
            None => 0,
        };
        let ends = self.ends.get(i..).unwrap_or_default();
        ends.iter().map(move |&end| {
            let set = self.bytes.get(start..end).unwrap_or_default();
            start = end;
            set
        })
    }

    /// Whether `keys` are the ones the sets were built from.
    fn same(&self, keys: impl Iterator<Item = K>) -> bool {
        let mut n = 0;
        for k in keys {
            if self.keys.get(n) != Some(&k) {
                return false;
            }
            n += 1;
        }
        n == self.keys.len()
    }
}

impl LabelSets<ServiceLabelKey> {
    /// The services' label sets of `table`, rebuilt if its services'
    /// keys or schedulers changed.
    pub(crate) fn update_services(&mut self, table: &[ServiceEntry]) {
        let keys = table.iter().map(|e| ServiceLabelKey {
            key: e.service.key,
            scheduler: e.service.scheduler.clone(),
        });
        if self.same(keys.clone()) {
            return;
        }
        self.bytes.clear();
        self.ends.clear();
        self.keys.clear();
        for (entry, key) in table.iter().zip(keys) {
            labels::push_service(&mut self.bytes, entry);
            self.ends.push(self.bytes.len());
            self.keys.push(key);
        }
    }
}

impl LabelSets<DestLabelKey> {
    /// The destinations' label sets of `table`, in the order of its
    /// services and their destinations, rebuilt if any destination's
    /// service, address, port or forwarding method changed.
    pub(crate) fn update_destinations(&mut self, table: &[ServiceEntry], half: &mut Vec<u8>) {
        let keys = table.iter().flat_map(|e| {
            e.destinations.iter().map(|d| DestLabelKey {
                service: e.service.key,
                addr: d.destination.addr,
                port: d.destination.port,
                forward: d.destination.forward,
            })
        });
        if self.same(keys.clone()) {
            return;
        }
        self.bytes.clear();
        self.ends.clear();
        self.keys.clear();
        self.keys.extend(keys);
        for entry in table.iter().filter(|e| !e.destinations.is_empty()) {
            // The service's half once, copied in front of each destination's.
            half.clear();
            labels::push_service_key(half, &entry.service.key);
            for dest in &entry.destinations {
                self.bytes.extend_from_slice(half);
                labels::push_destination(&mut self.bytes, dest);
                self.ends.push(self.bytes.len());
            }
        }
    }
}
