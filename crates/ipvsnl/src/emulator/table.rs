//! One namespace's IPVS state as the kernel keeps it: services in two
//! hash tables of 256 buckets (by protocol, address and port; by
//! firewall mark), the newest first in its bucket; each service's
//! destinations, the newest first; counters, timeouts, sync daemons.
//! Values are the kernel's raw ones (addresses as 16 bytes, flags and
//! netmask as numbers), so what a request wrote is what a listing shows.

use std::collections::BTreeMap;
use std::ops::Bound;

use rustc_hash::FxHashMap as HashMap;

use crate::Stats;

/// `AF_INET` and `AF_INET6`.
pub(crate) const AF_INET: u16 = libc::AF_INET as u16;
pub(crate) const AF_INET6: u16 = libc::AF_INET6 as u16;

/// The kernel's identity of a service: (af, fwmark) for a fwmark service,
/// (af, protocol, address, port) otherwise (an IPv4 address in the first
/// four bytes, the rest zero: the kernel compares and stores only those).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct SvcId {
    pub(crate) af: u16,
    pub(crate) protocol: u16,
    pub(crate) addr: [u8; 16],
    /// Host order.
    pub(crate) port: u16,
    pub(crate) fwmark: u32,
}

impl SvcId {
    /// Keeps only what the kernel keeps of an address of family `af`.
    pub(crate) fn normalise(af: u16, mut addr: [u8; 16]) -> [u8; 16] {
        if af == AF_INET {
            addr[4..].fill(0);
        }
        addr
    }

    /// Where the dump finds it: (fwmark table?, bucket).
    fn bucket(&self, seed: u32) -> (bool, u8) {
        if self.fwmark != 0 {
            return (true, ((seed ^ self.fwmark) & 0xff) as u8);
        }
        let word = |i: usize| u32::from_be_bytes(self.addr[i..i + 4].try_into().unwrap_or([0; 4]));
        let fold = if self.af == AF_INET6 {
            word(0) ^ word(4) ^ word(8) ^ word(12)
        } else {
            word(0)
        };
        let port = u32::from(self.port);
        let hash = u32::from(self.protocol) ^ fold ^ seed ^ (port >> 8) ^ port;
        (false, (hash & 0xff) as u8)
    }
}

/// A service's settings and state.
#[derive(Debug, Clone)]
pub(crate) struct Svc {
    pub(crate) id: SvcId,
    /// `"none"` for no scheduler.
    pub(crate) sched: String,
    /// Without `HASHED` (added when shown).
    pub(crate) flags: u32,
    pub(crate) timeout: u32,
    /// The raw `NETMASK` value as the kernel reads it (`nla_get_be32`).
    pub(crate) netmask: [u8; 4],
    pub(crate) pe: Option<String>,
    pub(crate) stats: Stats,
    /// Oldest first (the dump shows them the other way).
    pub(crate) dests: Vec<Dest>,
}

/// A destination's settings and state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dest {
    pub(crate) af: u16,
    pub(crate) addr: [u8; 16],
    /// Host order.
    pub(crate) port: u16,
    pub(crate) fwd: u32,
    pub(crate) weight: i32,
    pub(crate) u_thresh: u32,
    pub(crate) l_thresh: u32,
    pub(crate) tun_type: u8,
    pub(crate) tun_port: u16,
    pub(crate) tun_flags: u16,
    pub(crate) active: u32,
    pub(crate) inactive: u32,
    pub(crate) persistent: u32,
    pub(crate) stats: Stats,
}

/// A running sync daemon, with the kernel's defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Daemon {
    pub(crate) state: u32,
    pub(crate) ifname: String,
    pub(crate) sync_id: u32,
    pub(crate) max_len: u16,
    /// `AF_INET` group (4 bytes used) or `AF_INET6`.
    pub(crate) group_af: u16,
    pub(crate) group: [u8; 16],
    pub(crate) port: u16,
    pub(crate) ttl: u8,
}

/// The connection timeouts (seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Times {
    pub(crate) tcp: u32,
    pub(crate) tcp_fin: u32,
    pub(crate) udp: u32,
}

impl Default for Times {
    fn default() -> Self {
        Times {
            tcp: 900,
            tcp_fin: 120,
            udp: 300,
        }
    }
}

/// Where a service sits in the dump's walk: fwmark table after the
/// other, bucket, newest first within it.
type Place = (bool, u8, std::cmp::Reverse<u64>);

/// One namespace's state.
#[derive(Debug, Default)]
pub(crate) struct NsTable {
    services: HashMap<SvcId, Svc>,
    order: BTreeMap<Place, SvcId>,
    place: HashMap<SvcId, Place>,
    /// The low bits of the kernel's per-namespace pointer in the bucket
    /// hash (0 here unless a test sets it).
    pub(crate) seed: u32,
    /// Bumped at every change: a dump resumes from where it was only if
    /// nothing changed since (else it counts from the start, as the
    /// kernel always does).
    pub(crate) generation: u64,
    pub(crate) times: Times,
    /// Master (state 1) and backup (state 2).
    pub(crate) daemons: [Option<Daemon>; 2],
    /// Destinations whose family is not their service's (tunnels).
    pub(crate) mixed_dests: usize,
    /// The connection table, as the test set it.
    pub(crate) connections: Vec<crate::connections::Connection>,
    /// Interfaces by name, with their MTU.
    pub(crate) links: BTreeMap<String, u32>,
    /// Whether the namespace has local routes (`lo` up): without them
    /// the kernel refuses every IPv4 destination.
    pub(crate) loopback_up: bool,
    /// A number no other namespace of any kernel of this process has (its
    /// identity for the sync engine, as a namespace file's inode).
    pub(crate) serial: u64,
}

impl NsTable {
    /// A namespace with `lo` up and no services.
    pub(crate) fn new() -> Self {
        static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        NsTable {
            links: [("lo".to_string(), 65536)].into_iter().collect(),
            loopback_up: true,
            serial: SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            ..Default::default()
        }
    }

    /// Back to a module's start: no services, daemons or set timeouts
    /// (the links, routes, hash seed and identity stay).
    pub(crate) fn reset(&mut self) {
        let fresh = NsTable {
            links: std::mem::take(&mut self.links),
            loopback_up: self.loopback_up,
            seed: self.seed,
            serial: self.serial,
            generation: self.generation + 1,
            ..Default::default()
        };
        *self = fresh;
    }

    /// The service `id`.
    pub(crate) fn get(&self, id: &SvcId) -> Option<&Svc> {
        self.services.get(id)
    }

    /// The service `id`, to change.
    pub(crate) fn get_mut(&mut self, id: &SvcId) -> Option<&mut Svc> {
        self.generation += 1;
        self.services.get_mut(id)
    }

    /// Adds a service (not there yet) at the head of its bucket.
    pub(crate) fn insert(&mut self, svc: Svc) {
        // The kernel's buckets hold every namespace's services, the newest
        // first: the order of additions is one for all namespaces.
        static ADDED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let added = ADDED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.generation += 1;
        let (fwm, bucket) = svc.id.bucket(self.seed);
        let place = (fwm, bucket, std::cmp::Reverse(added));
        self.order.insert(place, svc.id);
        self.place.insert(svc.id, place);
        self.services.insert(svc.id, svc);
    }

    /// Removes a service.
    pub(crate) fn remove(&mut self, id: &SvcId) -> Option<Svc> {
        self.generation += 1;
        let place = self.place.remove(id)?;
        self.order.remove(&place);
        let svc = self.services.remove(id)?;
        self.mixed_dests -= svc.dests.iter().filter(|d| d.af != id.af).count();
        Some(svc)
    }

    /// Every service in the dump's order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Svc> + '_ {
        self.order.values().filter_map(|id| self.services.get(id))
    }

    /// The services from `from` on in the dump's order, each with its
    /// place.
    pub(crate) fn places_from(
        &self,
        from: Bound<Place>,
    ) -> impl Iterator<Item = (Place, &Svc)> + '_ {
        self.order
            .range((from, Bound::Unbounded))
            .filter_map(|(p, id)| Some((*p, self.services.get(id)?)))
    }

    /// Every service's place, in the dump's order.
    pub(crate) fn places(&self) -> impl Iterator<Item = Place> + '_ {
        self.order.keys().copied()
    }

    /// How many services are from `from` to before `to` in the dump's
    /// order (none if `to` is not after `from`).
    pub(crate) fn count_between(&self, from: Bound<Place>, to: Bound<Place>) -> usize {
        let empty = match (from, to) {
            (Bound::Included(a) | Bound::Excluded(a), Bound::Excluded(b)) => a >= b,
            (Bound::Excluded(a), Bound::Included(b)) => a >= b,
            (Bound::Included(a), Bound::Included(b)) => a > b,
            _ => false,
        };
        if empty {
            return 0;
        }
        self.order.range((from, to)).count()
    }

    /// Deletes every service (the daemons and timeouts stay).
    pub(crate) fn flush(&mut self) {
        self.generation += 1;
        self.services.clear();
        self.order.clear();
        self.place.clear();
        self.mixed_dests = 0;
    }

    /// Zeroes every counter of every service and destination.
    pub(crate) fn zero_all(&mut self) {
        self.generation += 1;
        for svc in self.services.values_mut() {
            zero(svc);
        }
    }
}

/// Zeroes a service's counters and its destinations' (connection counts
/// are live state, not counters: they stay).
pub(crate) fn zero(svc: &mut Svc) {
    svc.stats = Stats::default();
    for d in &mut svc.dests {
        d.stats = Stats::default();
    }
}

/// The dump's order key type, for the dump module.
pub(crate) type DumpPlace = Place;
