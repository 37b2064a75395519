//! Random desired tables from the seeded generator: sizes, protocols and
//! fwmarks, IPv4 and IPv6, the schedulers the kernel has, flags,
//! persistence and netmasks, every forwarding method with ipip, GUE and
//! GRE tunnels (destinations of the other family included), weights and
//! thresholds. Most rounds mutate the previous table a little, as a daemon
//! does; some start afresh.
//!
//! Address plan: our services are 10.10.0.0/16, 2001:db8:10::/48 and
//! fwmarks below [`COTENANT_MARKS`]; the co-tenant's are 192.168.50.0/24,
//! fd00:50::/64 and fwmarks from [`COTENANT_MARKS`]. Real servers are
//! 10.20.0.0/16 and 2001:db8:20::/48, never an address of the VM (the
//! kernel would force `Local` forwarding on one).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipvsnl::sync::Table;
use ipvsnl::{
    AddressFamily, Destination, Forward, Netmask, Protocol, Scheduler, Service, ServiceFlags,
    ServiceKey, Tunnel, TunnelFlags,
};

use crate::rng::Rng;

/// The first fwmark of the co-tenant; ours are below.
pub(crate) const COTENANT_MARKS: u32 = 50_000;

/// What the generator may use: the schedulers the kernel accepted, whether
/// the `sip` persistence engine is there, and the size bound.
#[derive(Debug, Clone)]
pub(crate) struct Universe {
    /// Schedulers the kernel accepted when probed.
    pub(crate) schedulers: Vec<Scheduler>,
    /// Whether the kernel accepted the `sip` persistence engine.
    pub(crate) pe_sip: bool,
    /// The most services in a desired table.
    pub(crate) max_services: usize,
    /// Whether destinations may ask for `Local` forwarding (on a remote
    /// address: see the README's Soak section for what the kernel does).
    pub(crate) local_forwarding: bool,
}

/// Whether a key is ours (inside our `Scope`).
pub(crate) fn is_ours(key: &ServiceKey) -> bool {
    match key {
        ServiceKey::Inet {
            addr: IpAddr::V4(a),
            ..
        } => a.octets()[..2] == [10, 10],
        ServiceKey::Inet {
            addr: IpAddr::V6(a),
            ..
        } => a.segments()[..3] == [0x2001, 0xdb8, 0x10],
        ServiceKey::Fwmark { mark, .. } => *mark < COTENANT_MARKS,
        // A key kind this version does not know is nobody's: not ours.
        #[allow(unreachable_patterns)]
        _ => false,
    }
}

/// A fresh desired table of a random size (0 to `max_services`).
pub(crate) fn fresh(rng: &mut Rng, u: &Universe) -> Table {
    let max = u.max_services as u64;
    let n = match rng.below(20) {
        0 => 0,
        1..=5 => rng.range(1, 10.min(max)),
        6..=13 => rng.range(1, 100.min(max)),
        _ => rng.range(1, max),
    } as usize;
    let mut t = Table::new();
    // Keys may repeat; a few tries more make the size close to `n`.
    let mut tries = 0;
    while t.len() < n && tries < n * 3 {
        tries += 1;
        let key = our_key(rng);
        if t.get(&key).is_none() {
            insert_random(rng, u, &mut t, key);
        }
    }
    t
}

/// The previous table with a few changes (1 to 6): services added and
/// removed, settings edited, destinations added, removed and edited; now
/// and then (8 %) every service's scheduler changed at once first.
pub(crate) fn mutate(rng: &mut Rng, u: &Universe, prev: &Table) -> Table {
    let mut t = prev.clone();
    if rng.chance(0.08) {
        t = reschedule_all(rng, u, prev);
    }
    for _ in 0..rng.range(1, 6) {
        let keys: Vec<ServiceKey> = t.keys().copied().collect();
        let Some(&key) = rng.pick(&keys) else {
            let key = our_key(rng);
            insert_random(rng, u, &mut t, key);
            continue;
        };
        match rng.below(8) {
            0 if t.len() < u.max_services => {
                let key = our_key(rng);
                if t.get(&key).is_none() {
                    insert_random(rng, u, &mut t, key);
                }
            }
            1 => {
                t.remove(&key);
            }
            2 => {
                if let Some(old) = t.remove(&key) {
                    let svc = random_service(rng, u, key);
                    t.insert(svc, old.destinations.iter().map(|d| d.destination));
                }
            }
            3 | 4 => edit_destinations(rng, &mut t, key, |rng, mut dests| {
                let d = random_destination(rng, u, &key);
                dests.push(d);
                dests
            }),
            5 => edit_destinations(rng, &mut t, key, |rng, mut dests| {
                if !dests.is_empty() {
                    let i = rng.below(dests.len() as u64) as usize;
                    dests.remove(i);
                }
                dests
            }),
            _ => edit_destinations(rng, &mut t, key, |rng, mut dests| {
                if !dests.is_empty() {
                    let i = rng.below(dests.len() as u64) as usize;
                    let old = dests[i];
                    let mut d = random_destination(rng, u, &key);
                    d.addr = old.addr;
                    d.port = old.port;
                    if d.family() != key.family() && d.forward.tunnel().is_none() {
                        d.forward = Forward::Tunnel(random_tunnel(rng));
                    }
                    dests[i] = d;
                }
                dests
            }),
        }
    }
    t
}

/// A configuration change that touches every service at once (a new
/// default scheduler, say): one edit per service, destinations kept.
pub(crate) fn reschedule_all(rng: &mut Rng, u: &Universe, prev: &Table) -> Table {
    let mut t = prev.clone();
    let Some(sched) = rng.pick(&u.schedulers).cloned() else {
        return t;
    };
    for old in prev.iter() {
        let mut svc = old.service.clone();
        svc.scheduler = sched.clone();
        if !matches!(sched, Scheduler::SourceHashing | Scheduler::Maglev) {
            svc.flags -= ServiceFlags::SCHED1 | ServiceFlags::SCHED2;
        }
        t.insert(svc, old.destinations.iter().map(|d| d.destination));
    }
    t
}

/// Replaces the destinations of `key` by what `f` makes of them.
fn edit_destinations(
    rng: &mut Rng,
    t: &mut Table,
    key: ServiceKey,
    f: impl FnOnce(&mut Rng, Vec<Destination>) -> Vec<Destination>,
) {
    if let Some(old) = t.remove(&key) {
        let dests = old.destinations.iter().map(|d| d.destination).collect();
        t.insert(old.service, f(rng, dests));
    }
}

/// Inserts a random service with random destinations under `key`.
fn insert_random(rng: &mut Rng, u: &Universe, t: &mut Table, key: ServiceKey) {
    let svc = random_service(rng, u, key);
    let n = match rng.below(20) {
        0..=1 => 0,
        2..=13 => rng.range(1, 4),
        14..=18 => rng.range(5, 12),
        _ => rng.range(13, 30),
    };
    let dests: Vec<Destination> = (0..n).map(|_| random_destination(rng, u, &key)).collect();
    t.insert(svc, dests);
}

/// One of our service keys: TCP, UDP, SCTP or fwmark, IPv4 or IPv6.
pub(crate) fn our_key(rng: &mut Rng) -> ServiceKey {
    let v6 = rng.chance(0.3);
    let kind = rng.below(10);
    if kind >= 8 {
        let family = if v6 {
            AddressFamily::Inet6
        } else {
            AddressFamily::Inet
        };
        return ServiceKey::fwmark(rng.range(1, 5000) as u32, family);
    }
    let addr = if v6 {
        IpAddr::V6(Ipv6Addr::new(
            0x2001,
            0xdb8,
            0x10,
            0,
            0,
            0,
            0,
            rng.range(1, 2000) as u16,
        ))
    } else {
        IpAddr::V4(Ipv4Addr::new(
            10,
            10,
            rng.below(4) as u8,
            rng.range(1, 250) as u8,
        ))
    };
    let port = random_port(rng);
    match kind {
        0..=3 => ServiceKey::tcp(addr, port),
        4..=6 => ServiceKey::udp(addr, port),
        _ => ServiceKey::sctp(addr, port),
    }
}

/// A port: mostly well-known ones, sometimes any (never 0).
fn random_port(rng: &mut Rng) -> u16 {
    match rng.below(6) {
        0 => 80,
        1 => 443,
        2 => 53,
        3 => 8080,
        _ => rng.range(1, 65535) as u16,
    }
}

/// Random settings for `key`: scheduler, persistence with netmask and
/// maybe the `sip` engine, one-packet (UDP), the hashing schedulers' flags.
pub(crate) fn random_service(rng: &mut Rng, u: &Universe, key: ServiceKey) -> Service {
    let sched = rng
        .pick(&u.schedulers)
        .cloned()
        .unwrap_or(Scheduler::WeightedLeastConnection);
    let mut svc = Service::new(key).with_scheduler(sched.clone());
    if rng.chance(0.3) {
        svc = svc.with_persistence(rng.range(1, 3600) as u32);
        if rng.chance(0.4) {
            svc = svc.with_netmask(match key.family() {
                AddressFamily::Inet => {
                    let prefix = rng.range(8, 32) as u32;
                    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
                    Netmask::V4(Ipv4Addr::from(mask))
                }
                _ => Netmask::V6(rng.range(32, 128) as u8),
            });
        }
    }
    let udp = matches!(
        key,
        ServiceKey::Inet {
            protocol: Protocol::Udp,
            ..
        }
    );
    if udp && rng.chance(0.3) {
        svc = svc.with_flags(ServiceFlags::ONE_PACKET);
    }
    if udp && u.pe_sip && svc.flags.contains(ServiceFlags::PERSISTENT) && rng.chance(0.2) {
        svc = svc.with_persistence_engine("sip");
    }
    if matches!(sched, Scheduler::SourceHashing | Scheduler::Maglev) {
        if rng.chance(0.5) {
            svc = svc.with_flags(ServiceFlags::SCHED1);
        }
        if rng.chance(0.5) {
            svc = svc.with_flags(ServiceFlags::SCHED2);
        }
    }
    svc
}

/// A tunnel: ipip, GUE (with a port; remote checksum offload is GUE's) or
/// GRE, with or without a checksum.
fn random_tunnel(rng: &mut Rng) -> Tunnel {
    let csum = if rng.chance(0.3) {
        TunnelFlags::CSUM
    } else {
        TunnelFlags::empty()
    };
    match rng.below(3) {
        0 => Tunnel::ipip().with_flags(csum),
        1 => {
            let flags = if rng.chance(0.2) {
                csum | TunnelFlags::REMCSUM
            } else {
                csum
            };
            Tunnel::gue(rng.range(1, 65535) as u16).with_flags(flags)
        }
        _ => Tunnel::gre().with_flags(csum),
    }
}

/// A random real server for a service of `key`: its family (or, tunnelled,
/// the other one), a forwarding method, a weight, maybe thresholds.
pub(crate) fn random_destination(rng: &mut Rng, u: &Universe, key: &ServiceKey) -> Destination {
    let other_family = rng.chance(0.08);
    let v6 = (key.family() == AddressFamily::Inet6) != other_family;
    let addr = if v6 {
        IpAddr::V6(Ipv6Addr::new(
            0x2001,
            0xdb8,
            0x20,
            0,
            0,
            0,
            rng.below(4) as u16,
            rng.range(1, 4000) as u16,
        ))
    } else {
        IpAddr::V4(Ipv4Addr::new(
            10,
            20,
            rng.below(8) as u8,
            rng.range(1, 250) as u8,
        ))
    };
    let port = match key {
        ServiceKey::Inet { port, .. } if rng.chance(0.5) => *port,
        _ => random_port(rng),
    };
    let forward = if other_family {
        Forward::Tunnel(random_tunnel(rng))
    } else {
        match rng.below(100) {
            0..=39 => Forward::Masquerade,
            40..=64 => Forward::Route,
            65..=92 => Forward::Tunnel(random_tunnel(rng)),
            93..=96 => Forward::Bypass,
            _ if u.local_forwarding => Forward::Local,
            _ => Forward::Masquerade,
        }
    };
    let weight = match rng.below(20) {
        0 => 0,
        1 => rng.range(1000, u64::from(ipvsnl::WEIGHT_MAX)) as u32,
        _ => rng.range(1, 100) as u32,
    };
    let mut d = Destination::new(addr, port)
        .with_forward(forward)
        .with_weight(weight);
    if rng.chance(0.2) {
        let upper = rng.range(1, 100_000) as u32;
        d = d.with_thresholds(upper, rng.below(u64::from(upper) + 1) as u32);
    }
    d
}

/// The co-tenant's table: its own services (outside our scope) with a few
/// destinations each, which it creates once; the churner then changes it.
pub(crate) fn cotenant(rng: &mut Rng, u: &Universe) -> Table {
    let mut t = Table::new();
    for i in 0..12u16 {
        let key = match i % 4 {
            0 => ServiceKey::tcp(IpAddr::V4(Ipv4Addr::new(192, 168, 50, 1 + i as u8)), 80),
            1 => ServiceKey::udp(
                IpAddr::V6(Ipv6Addr::new(0xfd00, 0x50, 0, 0, 0, 0, 0, 1 + i)),
                53,
            ),
            2 => ServiceKey::fwmark(COTENANT_MARKS + u32::from(i), AddressFamily::Inet),
            _ => ServiceKey::sctp(IpAddr::V4(Ipv4Addr::new(192, 168, 50, 100 + i as u8)), 9000),
        };
        let svc = random_service(rng, u, key);
        let dests: Vec<Destination> = (0..rng.range(1, 4))
            .map(|_| random_destination(rng, u, &key))
            .collect();
        t.insert(svc, dests);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn universe() -> Universe {
        Universe {
            schedulers: Scheduler::named().collect(),
            pe_sip: true,
            max_services: 300,
            local_forwarding: true,
        }
    }

    /// Every generated table is one the library accepts (nothing refused
    /// before it is sent), ours only, within the size bound.
    #[test]
    fn generated_tables_are_valid_and_ours() {
        let u = universe();
        let mut rng = Rng::new(42);
        let mut t = Table::new();
        for round in 0..300 {
            t = if round % 7 == 0 {
                fresh(&mut rng, &u)
            } else {
                mutate(&mut rng, &u, &t)
            };
            assert!(t.len() <= u.max_services + 6);
            for s in t.iter() {
                assert!(is_ours(&s.service.key), "{}", s.service.key);
                s.service.validate().unwrap();
                for d in &s.destinations {
                    d.destination.validate_for(&s.service.key).unwrap();
                }
            }
        }
        for s in cotenant(&mut rng, &u).iter() {
            assert!(!is_ours(&s.service.key), "{}", s.service.key);
        }
    }
}
