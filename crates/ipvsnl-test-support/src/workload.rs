//! The workloads of the criterion sync benches (`benches/`) and of the
//! bench crate's binaries (bulk-compare, listing-cost, scrape-cost):
//! services 10.0.0.1, 10.0.0.2, ... port
//! 80, rr, each with distinct masquerading real servers 172.16.0.1, ...;
//! or, for the kernel's worst case, every service in one hash bucket
//! (10.A.B.1:80).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipvsnl::sync::Table;
use ipvsnl::{Destination, Forward, Scheduler, Service, ServiceKey, Tunnel};

/// How the service addresses are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// 10.0.0.1, 10.0.0.2, ...: spread over the kernel's 256 hash buckets.
    Spread,
    /// 10.A.B.1: same last octet and port, all in one bucket.
    OneBucket,
}

/// The address of service `i` (1-based).
pub fn service_addr(layout: Layout, i: u32) -> IpAddr {
    match layout {
        Layout::Spread => IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i)),
        Layout::OneBucket => IpAddr::V4(Ipv4Addr::new(10, (i >> 8) as u8, i as u8, 1)),
    }
}

/// Real server number `j` (1-based): 172.16.0.1, 172.16.0.2, ...
pub fn dest_addr(j: u32) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(0xac10_0000 + j))
}

/// `services` services with `dests` destinations each.
pub fn desired(layout: Layout, services: u32, dests: u32) -> Table {
    let mut t = Table::new();
    for i in 1..=services {
        let key = ServiceKey::tcp(service_addr(layout, i), 80);
        let first = (i - 1) * dests + 1;
        t.insert(
            Service::new(key).with_scheduler(Scheduler::RoundRobin),
            (first..first + dests).map(|j| Destination::new(dest_addr(j), 80)),
        );
    }
    t
}

/// [`desired`] (spread) made mixed, as the listing issue asks: of every
/// ten services, the tenth is IPv6 (`[2001:db8::I]:80`, real servers
/// `2001:db8:1::J`), the fifth sends to its real servers through GUE
/// tunnels (port 6080); the rest are as [`desired`] has them. The older
/// socket-option interface can express neither: a listing meets them
/// where it must fall back to netlink.
pub fn mixed(services: u32, dests: u32) -> Table {
    let mut t = Table::new();
    for i in 1..=services {
        let first = (i - 1) * dests + 1;
        let reals = first..first + dests;
        if i % 10 == 0 {
            let key = ServiceKey::tcp(
                IpAddr::V6(Ipv6Addr::new(
                    0x2001,
                    0xdb8,
                    0,
                    0,
                    0,
                    0,
                    (i >> 16) as u16,
                    i as u16,
                )),
                80,
            );
            t.insert(
                Service::new(key).with_scheduler(Scheduler::RoundRobin),
                reals.map(|j| {
                    let a = Ipv6Addr::new(0x2001, 0xdb8, 1, 0, 0, 0, (j >> 16) as u16, j as u16);
                    Destination::new(IpAddr::V6(a), 80)
                }),
            );
            continue;
        }
        let key = ServiceKey::tcp(service_addr(Layout::Spread, i), 80);
        let tunnelled = i % 10 == 5;
        t.insert(
            Service::new(key).with_scheduler(Scheduler::RoundRobin),
            reals.map(|j| {
                let d = Destination::new(dest_addr(j), 80);
                if tunnelled {
                    d.with_forward(Forward::Tunnel(Tunnel::gue(6080)))
                } else {
                    d
                }
            }),
        );
    }
    t
}

/// `base` with `percent` % of its services changed: of the changed ones,
/// half get a new weight on their first destination, a quarter have their
/// last destination replaced by a new real server, and a quarter are
/// replaced by a new service (with as many new destinations).
pub fn churned(layout: Layout, services: u32, dests: u32, percent: u32) -> Table {
    churn(
        &desired(layout, services, dests),
        layout,
        services,
        dests,
        percent,
    )
}

/// [`churned`] of a table already built by [`desired`]: a clone of `base`
/// changed, so it descends from `base` (a cached sync plans only what
/// changed).
pub fn churn(base: &Table, layout: Layout, services: u32, dests: u32, percent: u32) -> Table {
    let mut t = base.clone();
    if percent == 0 {
        return t;
    }
    let every = (100 / percent).max(1);
    let mut fresh_dest = services * dests + 1;
    let mut fresh_service = services + 1;
    let mut n = 0u32;
    for i in (1..=services).filter(|i| i % every == 0) {
        let key = ServiceKey::tcp(service_addr(layout, i), 80);
        let Some(entry) = t.get(&key) else { continue };
        let mut list: Vec<Destination> = entry.destinations.iter().map(|d| d.destination).collect();
        let svc = entry.service.clone();
        match n % 4 {
            0 | 1 => {
                list[0] = list[0].with_weight(5);
                t.insert(svc, list);
            }
            2 => {
                if let Some(last) = list.last_mut() {
                    *last = Destination::new(dest_addr(fresh_dest), 80);
                    fresh_dest += 1;
                }
                t.insert(svc, list);
            }
            _ => {
                t.remove(&key);
                let new_key = ServiceKey::tcp(service_addr(layout, fresh_service), 80);
                fresh_service += 1;
                let first = fresh_dest;
                fresh_dest += dests;
                t.insert(
                    Service::new(new_key).with_scheduler(Scheduler::RoundRobin),
                    (first..first + dests).map(|j| Destination::new(dest_addr(j), 80)),
                );
            }
        }
        n += 1;
    }
    t
}
