//! The fixture listing the tests share: a TCP IPv4 service, a UDP IPv6
//! one and a firewall-mark one, with counters past 2^32 and near u64::MAX
//! and a scheduler name that needs escaping.

#![allow(dead_code)]

pub(crate) mod served;
pub(crate) mod sized;
pub(crate) mod tools;

use ipvsnl::{
    AddressFamily, Destination, DestinationEntry, Forward, Scheduler, Service, ServiceEntry,
    ServiceKey, Stats, Tunnel,
};

/// 2^32 + 5: past a 32-bit counter.
pub(crate) const PAST_U32: u64 = (1 << 32) + 5;
/// u64::MAX - 1: f64 would print 18446744073709552000.
pub(crate) const NEAR_MAX: u64 = u64::MAX - 1;

pub(crate) fn table() -> Vec<ServiceEntry> {
    let web = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    let dns = ServiceKey::udp("2001:db8::53".parse().unwrap(), 53);
    let mark = ServiceKey::fwmark(5, AddressFamily::Inet);
    let odd: Scheduler = "q\"u\\x".parse().unwrap();
    vec![
        ServiceEntry::new(Service::new(web).with_scheduler(Scheduler::RoundRobin))
            .with_stats(
                Stats::new()
                    .with_conns(PAST_U32)
                    .with_packets(NEAR_MAX, 2)
                    .with_bytes(3, 4)
                    .with_cps(5)
                    .with_packet_rates(6, 7)
                    .with_byte_rates(8, 9),
            )
            .with_destinations([
                DestinationEntry::new(
                    Destination::new("10.1.0.2".parse().unwrap(), 8080).with_weight(3),
                )
                .with_active_conns(11)
                .with_inactive_conns(12)
                .with_persistent_conns(13)
                .with_stats(Stats::new().with_conns(14).with_bytes(u64::MAX, 15)),
                DestinationEntry::new(
                    Destination::new("10.1.0.3".parse().unwrap(), 8080)
                        .with_forward(Forward::Route)
                        .with_weight(0),
                ),
            ]),
        ServiceEntry::new(Service::new(dns).with_scheduler(odd)).with_destinations([
            DestinationEntry::new(
                Destination::new("2001:db8:0:0:0:0:1:1".parse().unwrap(), 53)
                    .with_forward(Forward::Tunnel(Tunnel::ipip())),
            )
            .with_active_conns(1),
        ]),
        ServiceEntry::new(Service::new(mark)).with_destinations([DestinationEntry::new(
            Destination::new("192.168.1.10".parse().unwrap(), 0),
        )]),
    ]
}

pub(crate) fn totals() -> Stats {
    Stats::new()
        .with_conns(PAST_U32)
        .with_packets(1, NEAR_MAX)
        .with_bytes(2, 3)
        .with_cps(4)
        .with_packet_rates(5, 6)
        .with_byte_rates(7, 8)
}
