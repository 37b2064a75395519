//! Whole listings: every service that existed for the whole listing is in
//! it, although the kernel's service dump can skip some.
//!
//! Why a dump can skip: each part of a dump is made under the kernel's
//! IPVS mutex, but the next part resumes by a position counted over every
//! namespace's services. A service deleted (in any namespace) before that
//! position between two parts moves ours down by one, and the next part
//! skips one of ours. With another namespace adding and deleting 40
//! services in pipelined batches, 25 of 483 listings of an unchanged
//! namespace of 300 services came back short.
//!
//! How a listing is made whole (see [`Client::table`] for what it
//! guarantees):
//!
//! 1. A dump whose services came in one part is whole ([`super::parts`]).
//! 2. Otherwise, the socket-option interface copies every IPv4 service of
//!    the namespace in one call, under the mutex
//!    ([`crate::transport::sockopt::SockoptSocket::services`]); an IPv4 service of that copy the dump
//!    missed is got alone (a `GET_SERVICE`; `ESRCH`: it left meanwhile).
//!    When the copy and the dump agree, which is when nothing changed,
//!    that costs the copy and one pass over both lists, in order.
//! 3. IPv6 services have no such copy, nor a count (that interface counts
//!    IPv4 services only). The client remembers those of its last listing
//!    ([`super::checks`]): one the dump skipped is got alone. And if the
//!    namespace has any (this client ever listed one there), the dump is
//!    taken again, up to [`MAX_DUMPS`] in all, until one finds no IPv6
//!    service the ones before missed (or was made in one part), for those
//!    no listing of this client has seen yet.
//! 4. Without the socket-option socket (it could not be opened, or its
//!    calls fail), every service is checked as IPv6 ones are.
//!
//! Cost, measured with `scripts/measure/listing-cost --kernel 6.1 --before 0444671`
//! (qemu `-icount shift=0,sleep=off`, one boot; 10,000 services x 5
//! destinations spread over the hash, nothing changing; medians of 8 runs,
//! 2 processes of 4 rounds, each round the plain listing, `Client::table`
//! and `Client::services`):
//!
//! | | before (0444671) | after | plain listing |
//! |---|---|---|---|
//! | `Client::table` | 0.6589 s (1.038x) | 0.6615 s (1.042x) | 0.6346 s |
//! | `Client::services` | 0.0930 s | 0.0985 s | |
//!
//! Of the check's 5.5 ms, about 4 ms are the kernel's copy and 1.5 ms the
//! first writes to the copy's megabyte (timed apart in the same setting: a
//! copy into a buffer written before took 4.2 ms, into a new one 5.6 ms;
//! reading its keys, 0.5 ms). The table pays 2.6 ms for it: a dump of one
//! part is no longer searched for repeats (a dump repeats only when it
//! resumes), nor a dump of services the copy showed to hold none.

use std::collections::HashSet;
use std::net::IpAddr;
use std::ops::ControlFlow;

use ipvsnl_wire::sockopt::SockoptEntry;

use crate::client_core::ClientCore;
use crate::decode::Detail;
use crate::proto::repeats::keep_first;
use crate::transport::sockopt::ServiceSnapshot;
use crate::transport::Transport;
use crate::{AddressFamily, Error, Protocol, ServiceEntry, ServiceKey};

#[cfg(doc)]
use crate::Client;

/// The most service dumps one listing takes, the first included, when it
/// checks by dumping again.
pub(crate) const MAX_DUMPS: usize = 4;

/// Where a listing keeps what it found.
pub(crate) trait Found {
    /// Whether every service of `snapshot` is surely listed, told without
    /// a set of keys (false when it cannot tell so).
    fn surely_has(&mut self, snapshot: &ServiceSnapshot) -> bool;
    /// Whether a service of `key` is listed.
    fn contains(&mut self, key: &ServiceKey) -> bool;
    /// Lists one more; [`ControlFlow::Break`] when no more is wanted.
    fn add(&mut self, entry: ServiceEntry) -> ControlFlow<()>;
}

/// The services of a dump as a list, with a set of their keys made only
/// when a key is looked up, and the dump's repeats dropped only when they
/// may be there.
pub(crate) struct Listed {
    services: Vec<ServiceEntry>,
    keys: Option<HashSet<ServiceKey>>,
    /// No service is there twice.
    unique: bool,
}

impl Listed {
    /// The services of a dump; `unique` if it surely repeats none.
    pub(crate) fn new(services: Vec<ServiceEntry>, unique: bool) -> Self {
        Listed {
            services,
            keys: None,
            unique,
        }
    }

    /// The services, each once, those found after the dump at the end.
    pub(crate) fn into_services(mut self) -> Vec<ServiceEntry> {
        self.drop_repeats();
        self.services
    }

    fn drop_repeats(&mut self) {
        if !self.unique {
            keep_first(&mut self.services, |s: &ServiceEntry| s.service.key);
            self.unique = true;
        }
    }
}

impl Found for Listed {
    /// The dump's IPv4 services are the snapshot's, in its order: the
    /// kernel walks the same tables in the same order for both, so when
    /// nothing changed they agree one by one (and then none is repeated:
    /// with no IPv6 service listed either, the list has no repeat).
    fn surely_has(&mut self, snapshot: &ServiceSnapshot) -> bool {
        let mut ipv6 = false;
        let mut ours = self.services.iter().map(|e| e.service.key).filter(|k| {
            let v4 = k.family() == AddressFamily::Inet;
            ipv6 |= !v4;
            v4
        });
        let mut theirs = snapshot.services().map(|s| snapshot_key(&s));
        let agree = loop {
            match (ours.next(), theirs.next()) {
                (None, None) => break true,
                (Some(a), Some(b)) if a == b => {}
                _ => break false,
            }
        };
        drop(ours);
        self.unique |= agree && !ipv6;
        agree
    }

    fn contains(&mut self, key: &ServiceKey) -> bool {
        self.drop_repeats();
        let services = &self.services;
        self.keys
            .get_or_insert_with(|| services.iter().map(|e| e.service.key).collect())
            .contains(key)
    }

    fn add(&mut self, entry: ServiceEntry) -> ControlFlow<()> {
        if let Some(keys) = &mut self.keys {
            keys.insert(entry.service.key);
        }
        self.services.push(entry);
        ControlFlow::Continue(())
    }
}

/// The key of a service of the socket-option snapshot (all IPv4), as a
/// netlink listing decodes it: a non-zero mark makes a firewall-mark
/// service.
pub(crate) fn snapshot_key(s: &SockoptEntry<'_>) -> ServiceKey {
    match s.fwmark() {
        0 => ServiceKey::Inet {
            protocol: Protocol::from_raw(s.protocol()),
            addr: IpAddr::V4(s.addr()),
            port: s.port(),
        },
        mark => ServiceKey::Fwmark {
            mark,
            family: AddressFamily::Inet,
        },
    }
}

impl<T: Transport> ClientCore<T> {
    /// Makes whole what a dump taken in several parts listed into `found`
    /// (see the module).
    pub(crate) async fn complete(
        &mut self,
        found: &mut impl Found,
        detail: Detail,
    ) -> Result<(), Error> {
        let snapshot = match &self.checks.sockopt {
            Ok(sock) => Some(sock.services()),
            Err(_) => None,
        };
        let every_family = match snapshot {
            Some(Ok(snapshot)) => {
                let stop = self.add_missing(&snapshot, found, detail).await?;
                // Kept for the listing's copy of the destinations, if it
                // makes one (see `checks.rs`).
                if self.checks.keep_snapshot {
                    self.checks.snapshot = Some(snapshot);
                }
                if stop.is_break() {
                    return Ok(());
                }
                false
            }
            Some(Err(e)) => {
                self.checks.last_failure = Some(e);
                true
            }
            None => true,
        };
        if self.add_remembered(found, detail).await?.is_break() {
            return Ok(());
        }
        if every_family || self.checks.ipv6_seen {
            self.dump_again(found, detail, every_family).await?;
        }
        Ok(())
    }

    /// Gets each service remembered from the last listing that `found`
    /// lacks, and adds those still there.
    async fn add_remembered(
        &mut self,
        found: &mut impl Found,
        detail: Detail,
    ) -> Result<ControlFlow<()>, Error> {
        let missing: Vec<ServiceKey> = self
            .checks
            .remembered
            .iter()
            .filter(|k| !found.contains(k))
            .copied()
            .collect();
        self.add_got(missing.into_iter(), found, detail).await
    }

    /// Gets each service of `snapshot` that `found` lacks alone, and adds
    /// those still there.
    async fn add_missing(
        &mut self,
        snapshot: &ServiceSnapshot,
        found: &mut impl Found,
        detail: Detail,
    ) -> Result<ControlFlow<()>, Error> {
        if found.surely_has(snapshot) {
            return Ok(ControlFlow::Continue(()));
        }
        let missing: Vec<ServiceKey> = snapshot
            .services()
            .map(|s| snapshot_key(&s))
            .filter(|k| !found.contains(k))
            .collect();
        self.add_got(missing.into_iter(), found, detail).await
    }

    /// Gets each service of `keys` alone, and adds those there (one that
    /// is not left meanwhile).
    async fn add_got(
        &mut self,
        keys: impl Iterator<Item = ServiceKey>,
        found: &mut impl Found,
        detail: Detail,
    ) -> Result<ControlFlow<()>, Error> {
        for key in keys {
            match self.get_service(&key, detail).await {
                Ok(entry) => {
                    if found.add(entry).is_break() {
                        return Ok(ControlFlow::Break(()));
                    }
                }
                // It left meanwhile.
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Dumps again, adding what a dump finds that `found` lacks, until a
    /// dump finds no IPv6 service (any service, with `every_family`) that
    /// was missing, or was made in one part, or [`MAX_DUMPS`] were taken.
    async fn dump_again(
        &mut self,
        found: &mut impl Found,
        detail: Detail,
        every_family: bool,
    ) -> Result<(), Error> {
        for _ in 1..MAX_DUMPS {
            let (again, parts) = self.dump_services(detail).await?;
            self.checks.listed(again.iter().map(|e| &e.service.key));
            let mut missed = false;
            for entry in again {
                let key = entry.service.key;
                if found.contains(&key) {
                    continue;
                }
                missed |= every_family || key.family() == AddressFamily::Inet6;
                if found.add(entry).is_break() {
                    return Ok(());
                }
            }
            if !missed || parts.is_one_snapshot() {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
