//! Numbered services and destinations: the keys, destinations and desired
//! tables the sync and fault tests build, each test in a subnet of its
//! own so that a failure names the test that made the services.
//!
//! ```
//! use ipvsnl::{Scheduler, ServiceKey};
//! use ipvsnl_test_support::keys::Numbered;
//!
//! // Services 10.1.0.1:80, 10.1.0.2:80...; destination j of service s is
//! // 172.17.0.(s * 4 + j):80.
//! const N: Numbered = Numbered::new(1, 4);
//! assert_eq!(N.key(2), ServiceKey::tcp("10.1.0.2".parse().unwrap(), 80));
//! let t = N.desired(3, 2, Scheduler::RoundRobin);
//! assert_eq!((t.len(), t.destination_count()), (3, 6));
//! ```

use std::net::IpAddr;

use ipvsnl::sync::Table;
use ipvsnl::{AddressFamily, Destination, Scheduler, Service, ServiceKey};

/// Services `10.NET.x.y:80` and real servers `172.(16 + NET).x.y:80`, by
/// number; service `s` gets destinations `s * stride`, `s * stride + 1`...
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Numbered {
    /// The second octet of the services (real servers: `16 +` it).
    pub net: u8,
    /// How far apart the first destinations of consecutive services are:
    /// at least the destinations per service, for distinct real servers.
    pub stride: u32,
}

impl Numbered {
    /// Services in `10.net.0.0/16`, real servers in `172.(16 + net).0.0/16`.
    pub const fn new(net: u8, stride: u32) -> Numbered {
        Numbered { net, stride }
    }

    /// Service `i`: TCP `10.net.(i >> 8).(i & 255):80`.
    pub fn key(&self, i: u32) -> ServiceKey {
        ServiceKey::tcp(IpAddr::from([10, self.net, (i >> 8) as u8, i as u8]), 80)
    }

    /// Real server `i`: `172.(16 + net).(i >> 8).(i & 255)` port 80.
    pub fn dest(&self, i: u32) -> Destination {
        Destination::new(
            IpAddr::from([172, 16 + self.net, (i >> 8) as u8, i as u8]),
            80,
        )
    }

    /// Services 1..=`services` with `scheduler`, each with `dests`
    /// destinations (`s * stride + j` for j below `dests`).
    pub fn desired(&self, services: u32, dests: u32, scheduler: Scheduler) -> Table {
        let mut t = Table::new();
        for s in 1..=services {
            t.insert(
                Service::new(self.key(s)).with_scheduler(scheduler.clone()),
                (0..dests).map(|j| self.dest(s * self.stride + j)),
            );
        }
        t
    }
}

/// One service key of every kind: TCP, UDP and SCTP on IPv4 and IPv6, port
/// 0 and 65535, fwmark services of both families and the largest mark.
pub fn every_kind_of_key() -> Vec<ServiceKey> {
    let ip = |s: &str| s.parse().expect("an address");
    vec![
        ServiceKey::tcp(ip("10.0.0.1"), 80),
        ServiceKey::udp(ip("10.0.0.1"), 53),
        ServiceKey::sctp(ip("10.0.0.1"), 9000),
        ServiceKey::tcp(ip("2001:db8::1"), 443),
        ServiceKey::udp(ip("2001:db8::1"), 53),
        ServiceKey::sctp(ip("2001:db8::1"), 65535),
        ServiceKey::tcp(ip("10.0.0.2"), 0),
        ServiceKey::fwmark(1, AddressFamily::Inet),
        ServiceKey::fwmark(1, AddressFamily::Inet6),
        ServiceKey::fwmark(u32::MAX, AddressFamily::Inet),
    ]
}
