//! Destinations of settings listings through the socket-option interface:
//! one `IP_VS_SO_GET_DESTS` per IPv4 service instead of one netlink dump,
//! where that gives every field a netlink dump would.
//!
//! Which listings take it: those of settings only, whose counters are left
//! at zero ([`Client::table_settings`], the [`Syncer`](crate::sync::Syncer)'s
//! listing). Listings with counters ([`Client::table`],
//! [`Client::table_with_destinations_of`], [`Client::destinations`]) stay
//! on netlink: this interface cuts a destination's connection and packet
//! counters to 32 bits, and nothing it says tells a cut counter from a
//! small one. A client made with
//! [`ClientOptions::with_socket_option_listing`]`(false)` lists by netlink
//! alone.
//!
//! Which path each service of a settings listing takes:
//!
//! - Every service's own settings come from the netlink service dump, made
//!   whole as [`super::whole`] says (it is cheap: 0.059 s for 10,000
//!   services, on its own socket read with 32 KiB,
//!   [`crate::service_dumps`]; and the older interface has no persistence
//!   engine).
//! - One copy of every IPv4 service (`IP_VS_SO_GET_SERVICES`, one call
//!   under the kernel's IPVS mutex) says how many destinations each has,
//!   of both families (`num_dests`).
//! - An IPv4 service of that copy (address-keyed or firewall-mark) gets
//!   its destinations by `IP_VS_SO_GET_DESTS`, one consistent copy of its
//!   list, unless the interface cannot express what is there: then by its
//!   netlink dump, as before. That is when the copy holds fewer
//!   destinations than `num_dests` said (one of the other family, which
//!   the kernel skips; or one deleted since the count), or a tunnelled one
//!   (the interface has no tunnel type, port or flags).
//! - IPv6 services, and IPv4 services the copy does not hold (added since),
//!   by netlink.
//! - A `GET_DESTS` refused (`ESRCH`: the service left since the dump) is
//!   listed by netlink, as before: what the dump of a service that left
//!   gives is what it gave. Any other failure (kept in the client's
//!   `Debug` as the listing checks' last failure) sends the rest of that
//!   listing to netlink.
//!
//! The calls are made inline, by both clients: a `getsockopt` never waits
//! on the network (see [`crate::transport::sockopt`]), so the async client
//! makes them on its task, as its netlink sends, and like them each takes
//! a unit of tokio's budget (`Transport::cooperate`), so that a listing of
//! a big table lets the runtime's other tasks run.
//!
//! Cost, measured with `scripts/measure/listing-cost --kernel 6.1 --before 59887ff`
//! (qemu `-icount shift=0,sleep=off`, one boot; 10,000 TCP services x 5
//! masquerading destinations, IPv4, no tunnels, nothing changing; medians
//! of 8 runs, 2 processes of 4 rounds; the kernel's time):
//!
//! | | before (59887ff) | after |
//! |---|---|---|
//! | a new `Syncer`'s no-op sync (its settings listing, then a plan that finds nothing) | 0.6888 s | 0.1988 s |
//! | `Client::table` (counters: netlink, unchanged) | 0.6576 s | 0.6499 s |
//! | plain netlink listing (service dump + a destination dump per service) | 0.6306 s | 0.6275 s |
//! | plain socket-option listing (`GET_INFO`, `GET_SERVICES`, a `GET_DESTS` per service) | 0.0366 s | 0.0365 s |
//!
//! The no-op sync costs 3.5 times less: 0.317x the plain netlink listing,
//! 5.4x the plain socket-option one (whose listing has no persistence
//! engine and no IPv6 service: ours pays the netlink service dump,
//! 0.094 s then, 0.059 s since [`crate::service_dumps`]: see its A/B, with
//! `table_settings` at 0.118 s). [`Client::table_settings`] alone was not timed
//! apart (the before tree has no such method).
//!
//! What the check cannot see: a destination of the other family that
//! existed throughout, while destinations of the service's own family
//! were added between the count and the copy (as many as the count then
//! misses), is left out. A netlink destination dump taken in several parts
//! can skip destinations under churn too (it resumes by position).

use std::collections::HashMap;
use std::net::IpAddr;

use ipvsnl_wire::sockopt::{SockoptDest, SockoptServices};

use super::whole::snapshot_key;
use crate::client_core::ClientCore;
use crate::transport::sockopt::{ServiceSnapshot, SockoptSocket};
use crate::transport::Transport;
use crate::{
    AddressFamily, Destination, DestinationEntry, Forward, ServiceEntry, ServiceKey, Tunnel,
};

#[cfg(doc)]
use crate::{Client, ClientOptions};

/// The destination counts of a snapshot, looked up in the snapshot's order
/// (a dump's IPv4 services come in it when nothing changed), or by a map
/// made at the first key out of that order.
pub(super) struct DestCounts<'a> {
    snapshot: &'a ServiceSnapshot,
    in_order: SockoptServices<'a>,
    map: Option<HashMap<ServiceKey, u32>>,
}

impl<'a> DestCounts<'a> {
    pub(super) fn new(snapshot: &'a ServiceSnapshot) -> Self {
        DestCounts {
            snapshot,
            in_order: snapshot.services(),
            map: None,
        }
    }

    /// The destination count of the service `key` of a listing, asked of
    /// every service in the listing's order: `None` if the snapshot does
    /// not hold it (it never holds an IPv6 one).
    pub(super) fn expected(&mut self, key: &ServiceKey) -> Option<u32> {
        if key.family() != AddressFamily::Inet {
            return None;
        }
        self.of(key)
    }

    /// The destination count of `key` in the snapshot; `None` if it is not
    /// there. Asked of every IPv4 service of a listing, in its order.
    fn of(&mut self, key: &ServiceKey) -> Option<u32> {
        if self.map.is_none() {
            match self.in_order.next() {
                Some(e) if snapshot_key(&e) == *key => return Some(e.num_dests()),
                _ => {
                    let all = self.snapshot.services();
                    self.map = Some(all.map(|e| (snapshot_key(&e), e.num_dests())).collect());
                }
            }
        }
        self.map.as_ref().and_then(|m| m.get(key).copied())
    }
}

/// A destination of the copy as a settings listing has it (no counters).
fn entry_of(d: &SockoptDest) -> DestinationEntry {
    let mut e = DestinationEntry::new(
        Destination::new(IpAddr::V4(d.addr), d.port)
            .with_forward(Forward::from_kernel(d.forward_method(), Tunnel::default()))
            .with_weight(d.weight)
            .with_thresholds(d.upper_threshold, d.lower_threshold),
    );
    e.active_conns = d.active_conns;
    e.inactive_conns = d.inactive_conns;
    e.persistent_conns = d.persistent_conns;
    e
}

/// Copies the destinations of the IPv4 service `key` that had `expected`
/// of them into `into` (cleared first); false if the copy does not show
/// them all (then `into` is left empty).
fn copy_one(
    sock: &SockoptSocket,
    key: &ServiceKey,
    expected: u32,
    buf: &mut Vec<u8>,
    into: &mut Vec<DestinationEntry>,
) -> Result<bool, crate::Error> {
    into.clear();
    let copy = sock.dests(key, expected, buf)?;
    into.reserve(expected as usize);
    for d in copy {
        if d.is_tunnelled() {
            into.clear();
            return Ok(false);
        }
        into.push(entry_of(&d));
    }
    if into.len() < expected as usize {
        into.clear();
        return Ok(false);
    }
    Ok(true)
}

/// What became of one service's copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Copy {
    /// Its destinations are in its entry.
    Filled,
    /// Netlink's turn for this service.
    Netlink,
    /// The interface failed (the failure kept): netlink's turn for this
    /// service and the rest of the listing.
    Stop,
}

impl<T: Transport> ClientCore<T> {
    /// The snapshot a settings listing counts destinations with: the
    /// check's of this listing if it took one (taken just after the dump,
    /// as this one would be), else one of its own; `None` without the
    /// interface, or when it failed (the failure kept).
    pub(super) fn copies_snapshot(&mut self) -> Option<ServiceSnapshot> {
        let taken = self.checks.snapshot.take();
        let Ok(sock) = &self.checks.sockopt else {
            return None;
        };
        match taken.map_or_else(|| sock.services(), Ok) {
            Ok(s) => Some(s),
            Err(e) => {
                self.checks.last_failure = Some(e);
                None
            }
        }
    }

    /// Fills the destinations of `entry`, a service of the listing that
    /// took the snapshot whose count for it is `expected`
    /// ([`DestCounts::expected`]), if the socket-option interface lists
    /// them whole.
    pub(super) async fn copy_into(
        &mut self,
        expected: Option<u32>,
        entry: &mut ServiceEntry,
    ) -> Copy {
        let Some(expected) = expected else {
            return Copy::Netlink;
        };
        let Ok(sock) = &self.checks.sockopt else {
            return Copy::Stop;
        };
        let key = entry.service.key;
        let buf = &mut self.checks.dests_buffer;
        let copied = copy_one(sock, &key, expected, buf, &mut entry.destinations);
        // The calls never wait, so an async listing of a big table
        // would hold its runtime thread throughout without this (the
        // kernel test `a_sync_of_a_big_table_lets_other_tasks_run`
        // saw the other task run once in 1,000 services).
        self.io.cooperate().await;
        match copied {
            Ok(true) => Copy::Filled,
            Ok(false) => Copy::Netlink,
            Err(e) if e.is_not_found() => Copy::Netlink,
            Err(e) => {
                self.checks.last_failure = Some(e);
                Copy::Stop
            }
        }
    }

    /// Fills the destinations of the services of `entries` that `wanted`
    /// marks and the socket-option interface lists whole (see the module);
    /// returns which it filled (the others are netlink's).
    pub(super) async fn copy_destinations(
        &mut self,
        entries: &mut [ServiceEntry],
        wanted: &[bool],
    ) -> Vec<bool> {
        let mut filled = vec![false; entries.len()];
        let Some(snapshot) = self.copies_snapshot() else {
            return filled;
        };
        let mut counts = DestCounts::new(&snapshot);
        for (i, entry) in entries.iter_mut().enumerate() {
            // Asked of every service, wanted or not: the counts are looked
            // up in the listing's order.
            let expected = counts.expected(&entry.service.key);
            if !wanted[i] {
                continue;
            }
            match self.copy_into(expected, entry).await {
                Copy::Filled => filled[i] = true,
                Copy::Netlink => {}
                Copy::Stop => break,
            }
        }
        filled
    }
}
