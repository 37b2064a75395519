//! A namespace seen and set from the test's side: its table as the
//! library's own types (decoded from the bytes a dump would carry, so a
//! test sees what a client would list), its timeouts and daemons; the
//! counters a test sets; changes made as another program would.

use std::net::IpAddr;

use super::encode;
use super::kernel::Netns;
use super::run::foreign;
use super::table::{Svc, SvcId};
use crate::decode::{self, Detail};
use crate::proto::frame;
use crate::request::addr_bytes;
use crate::{DestinationEntry, Request, ServiceEntry, ServiceKey, Stats, SyncDaemon, Timeouts};

/// A destination's connection counts, as a test sets them
/// ([`Netns::set_destination_state`]): none by default, each count named.
///
/// ```
/// use ipvsnl::emulator::Connections;
/// let c = Connections::default().with_active(3).with_persistent(1);
/// assert_eq!((c.active, c.inactive, c.persistent), (3, 0, 1));
/// assert_eq!(Connections::default(), Connections::default().with_inactive(0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Connections {
    /// Active connections.
    pub active: u32,
    /// Inactive connections.
    pub inactive: u32,
    /// Persistence templates.
    pub persistent: u32,
}

impl Connections {
    /// These counts with `n` active connections.
    #[must_use]
    pub fn with_active(mut self, n: u32) -> Self {
        self.active = n;
        self
    }

    /// These counts with `n` inactive connections.
    #[must_use]
    pub fn with_inactive(mut self, n: u32) -> Self {
        self.inactive = n;
        self
    }

    /// These counts with `n` persistence templates (the kernel's
    /// "persistent connections").
    #[must_use]
    pub fn with_persistent(mut self, n: u32) -> Self {
        self.persistent = n;
        self
    }
}

/// The kernel's identity of the service `key`.
fn id_of(key: &ServiceKey) -> SvcId {
    let af = key.family().to_raw();
    match *key {
        ServiceKey::Fwmark { mark, .. } => SvcId {
            af,
            protocol: libc::IPPROTO_TCP as u16,
            addr: [0; 16],
            port: 0,
            fwmark: mark,
        },
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => SvcId {
            af,
            protocol: protocol.to_raw(),
            addr: SvcId::normalise(af, addr_bytes(&addr)),
            port,
            fwmark: 0,
        },
    }
}

/// A service as a client would list it (counters and destinations,
/// newest first).
fn entry(family: u16, svc: &Svc) -> ServiceEntry {
    let mut bytes = Vec::new();
    encode::service(&mut bytes, family, 0, 0, 0, svc);
    let mut e = decode::service_reply(&bytes[20..], Detail::Full)
        .unwrap_or_else(|_| decode::empty_service());
    let mut dests: Vec<DestinationEntry> = Vec::with_capacity(svc.dests.len());
    for d in svc.dests.iter().rev() {
        bytes.clear();
        encode::dest(&mut bytes, family, 0, 0, d);
        let _ = decode::push_destination(
            &bytes[20..],
            e.service.key.family(),
            Detail::Full,
            &mut dests,
        );
    }
    e.destinations = dests;
    e
}

impl Netns {
    /// Its services in the order the kernel lists them, each with its
    /// destinations (newest first) and counters.
    pub fn table(&self) -> Vec<ServiceEntry> {
        let mut s = self.kernel.lock();
        let family = s.family.unwrap_or(0);
        s.ns(&self.name)
            .iter()
            .map(|svc| entry(family, svc))
            .collect()
    }

    /// The service `key`, as [`table`](Self::table) shows it.
    pub fn service(&self, key: &ServiceKey) -> Option<ServiceEntry> {
        let mut s = self.kernel.lock();
        let family = s.family.unwrap_or(0);
        s.ns(&self.name)
            .get(&id_of(key))
            .map(|svc| entry(family, svc))
    }

    /// Its connection timeouts.
    pub fn timeouts(&self) -> Timeouts {
        let mut s = self.kernel.lock();
        let t = s.ns(&self.name).times;
        Timeouts::new(t.tcp, t.tcp_fin, t.udp)
    }

    /// Its running sync daemons (master first).
    pub fn sync_daemons(&self) -> Vec<SyncDaemon> {
        let mut s = self.kernel.lock();
        let ns = s.ns(&self.name);
        let mut bytes = Vec::new();
        ns.daemons
            .iter()
            .flatten()
            .filter_map(|d| {
                bytes.clear();
                encode::daemon(&mut bytes, 0, 0, 0, d);
                let m = frame::decode(9, &bytes[20..]).ok()?;
                decode::sync_daemon(&m.attrs).ok()
            })
            .collect()
    }

    /// Runs `requests` as another program would (not recorded, no fault
    /// strikes): each one's errno, 0 when done.
    pub fn apply(&self, requests: &[Request]) -> Vec<i32> {
        let mut s = self.kernel.lock();
        foreign(&mut s, &self.name, requests)
    }

    /// Sets the traffic counters of service `key`: false if there is no
    /// such service.
    pub fn set_service_stats(&self, key: &ServiceKey, stats: Stats) -> bool {
        let mut s = self.kernel.lock();
        match s.ns(&self.name).get_mut(&id_of(key)) {
            Some(svc) => {
                svc.stats = stats;
                true
            }
            None => false,
        }
    }

    /// Sets the connection counts and traffic counters of destination
    /// `addr`:`port` of service `key`: false if there is no such
    /// destination.
    ///
    /// They stay as set (0 until a test sets them: nothing emulates
    /// traffic). A sync that drains ([`Drain`](crate::sync::Drain)) sets
    /// a removed destination's weight to 0 and keeps it only while these
    /// counts say it has clients: a test of the drain sets them first, or
    /// sees the destination deleted at once, with no weight-0 step.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ipvsnl::emulator::{Connections, Kernel};
    /// use ipvsnl::sync::{Drain, PlanOptions, Scope, Syncer, Table};
    /// use ipvsnl::{Client, Destination, Request, Service, ServiceKey, Stats};
    ///
    /// let kernel = Kernel::new();
    /// let mut ipvs = Client::emulated(&kernel);
    /// let drain = Drain::new(Duration::from_secs(300));
    /// let mut syncer = Syncer::new(PlanOptions::new(Scope::All).with_drain(drain));
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let leaving = Destination::from("10.1.0.1:8080".parse::<std::net::SocketAddr>().unwrap());
    /// let mut want = Table::new();
    /// want.insert(Service::new(key), [leaving]);
    /// syncer.sync(&mut ipvs, &want)?;
    ///
    /// // The destination has clients; then it is no longer wanted.
    /// let ns = kernel.init_netns();
    /// let busy = Connections::default().with_active(3);
    /// assert!(ns.set_destination_state(&key, leaving.addr, leaving.port, busy, Stats::default()));
    /// want.remove_destination(&key, leaving.addr, leaving.port).unwrap();
    /// let report = syncer.sync(&mut ipvs, &want)?;
    /// assert_eq!(report.requests(), [Request::EditDestination(key, leaving.with_weight(0))]);
    ///
    /// // Its clients gone, the next sync deletes it.
    /// ns.set_destination_state(&key, leaving.addr, leaving.port, Connections::default(), Stats::default());
    /// let report = syncer.sync(&mut ipvs, &want)?;
    /// assert_eq!(report.requests(), [Request::DeleteDestination(key, leaving.addr, leaving.port)]);
    /// # Ok::<(), ipvsnl::Error>(())
    /// ```
    pub fn set_destination_state(
        &self,
        key: &ServiceKey,
        addr: IpAddr,
        port: u16,
        conns: Connections,
        stats: Stats,
    ) -> bool {
        let mut s = self.kernel.lock();
        let Some(svc) = s.ns(&self.name).get_mut(&id_of(key)) else {
            return false;
        };
        let bytes = addr_bytes(&addr);
        let af = if addr.is_ipv4() {
            super::table::AF_INET
        } else {
            super::table::AF_INET6
        };
        let bytes = SvcId::normalise(af, bytes);
        match svc
            .dests
            .iter_mut()
            .find(|d| d.af == af && d.addr == bytes && d.port == port)
        {
            Some(d) => {
                d.active = conns.active;
                d.inactive = conns.inactive;
                d.persistent = conns.persistent;
                d.stats = stats;
                true
            }
            None => false,
        }
    }

    /// The totals of every service's counters (what
    /// `/proc/net/ip_vs_stats` shows; the sum here, where the kernel
    /// counts each packet once).
    pub fn totals(&self) -> Stats {
        let mut s = self.kernel.lock();
        let mut t = Stats::default();
        for svc in s.ns(&self.name).iter() {
            let x = &svc.stats;
            t.conns += x.conns;
            t.in_packets += x.in_packets;
            t.out_packets += x.out_packets;
            t.in_bytes += x.in_bytes;
            t.out_bytes += x.out_bytes;
            t.cps += x.cps;
            t.in_pps += x.in_pps;
            t.out_pps += x.out_pps;
            t.in_bps += x.in_bps;
            t.out_bps += x.out_bps;
        }
        t
    }

    /// Adds (or replaces) network interface `name` with MTU `mtu`, for
    /// the sync daemons (`lo`, MTU 65536, is there from the start).
    pub fn add_link(&self, name: &str, mtu: u32) {
        self.kernel
            .lock()
            .ns(&self.name)
            .links
            .insert(name.to_string(), mtu);
    }

    /// Whether the namespace has `lo` up (default true). Down, it has no
    /// local routes, and the kernel refuses every IPv4 destination with
    /// `EINVAL`, as in a freshly made namespace.
    pub fn set_loopback_up(&self, up: bool) {
        self.kernel.lock().ns(&self.name).loopback_up = up;
    }
}
