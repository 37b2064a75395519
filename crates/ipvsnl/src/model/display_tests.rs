//! Every public enum of the model (and the request target's) in words:
//! one table per type, each value with the text it must print. The flag
//! sets' tables are with their names, in `flag_names.rs`.

use std::net::Ipv4Addr;

use crate::{
    AddressFamily, DaemonRole, Forward, Netmask, Object, Protocol, RequestKind, Scheduler,
    ServiceKey, Tunnel, TunnelFlags, TunnelKind,
};

fn check<T: std::fmt::Display + std::fmt::Debug>(cases: &[(T, &str)]) {
    for (value, text) in cases {
        assert_eq!(value.to_string(), *text, "{value:?}");
    }
}

#[test]
fn address_families() {
    check(&[
        (AddressFamily::Inet, "IPv4"),
        (AddressFamily::Inet6, "IPv6"),
    ]);
}

#[test]
fn protocols_and_unknown_numbers() {
    check(&[
        (Protocol::Tcp, "TCP"),
        (Protocol::Udp, "UDP"),
        (Protocol::Sctp, "SCTP"),
        (Protocol::from_raw(47), "protocol 47"),
    ]);
}

#[test]
fn schedulers_by_kernel_name() {
    check(&[
        (Scheduler::RoundRobin, "rr"),
        (Scheduler::WeightedRoundRobin, "wrr"),
        (Scheduler::LeastConnection, "lc"),
        (Scheduler::WeightedLeastConnection, "wlc"),
        (Scheduler::LocalityBasedLeastConnection, "lblc"),
        (Scheduler::LocalityBasedLeastConnectionReplication, "lblcr"),
        (Scheduler::DestinationHashing, "dh"),
        (Scheduler::SourceHashing, "sh"),
        (Scheduler::ShortestExpectedDelay, "sed"),
        (Scheduler::NeverQueue, "nq"),
        (Scheduler::WeightedFailover, "fo"),
        (Scheduler::WeightedOverflow, "ovf"),
        (Scheduler::Maglev, "mh"),
        (Scheduler::TwoChoice, "twos"),
        (Scheduler::None, "none"),
        (Scheduler::new("custom").unwrap(), "custom"),
    ]);
}

#[test]
fn forwarding_as_ipvsadm_lists_it() {
    check(&[
        (Forward::Masquerade, "Masq"),
        (Forward::Local, "Local"),
        (Forward::Tunnel(Tunnel::gre()), "Tunnel"),
        (Forward::Route, "Route"),
        (Forward::Bypass, "Bypass"),
        (Forward::from_raw(6).unwrap(), "method 6"),
    ]);
}

#[test]
fn tunnel_kinds_and_tunnels() {
    check(&[
        (TunnelKind::Ipip, "ipip"),
        (TunnelKind::Gue, "gue"),
        (TunnelKind::Gre, "gre"),
        (TunnelKind::from_raw(9), "9"),
    ]);
    check(&[
        (Tunnel::ipip(), "ipip nocsum"),
        (
            Tunnel::gue(6080).with_flags(TunnelFlags::CSUM | TunnelFlags::REMCSUM),
            "gue port 6080 csum,remcsum",
        ),
        (Tunnel::gre().with_flags(TunnelFlags::CSUM), "gre csum"),
    ]);
}

#[test]
fn daemon_roles() {
    check(&[
        (DaemonRole::Master, "master"),
        (DaemonRole::Backup, "backup"),
    ]);
}

#[test]
fn keys_and_netmasks() {
    check(&[
        (
            ServiceKey::sctp("10.0.0.1".parse().unwrap(), 9),
            "SCTP 10.0.0.1:9",
        ),
        (
            ServiceKey::fwmark(3, AddressFamily::Inet6),
            "fwmark 3 (IPv6)",
        ),
    ]);
    check(&[
        (Netmask::V4(Ipv4Addr::new(255, 255, 0, 0)), "255.255.0.0"),
        (Netmask::V6(64), "64"),
    ]);
}

#[test]
fn objects_and_request_kinds() {
    let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    check(&[
        (Object::Table, ""),
        (Object::Family, "IPVS"),
        (Object::Service(key), "TCP 10.0.0.1:80"),
        (
            Object::Destination {
                service: key,
                addr: "2001:db8::2".parse().unwrap(),
                port: 8080,
            },
            "[2001:db8::2]:8080 of TCP 10.0.0.1:80",
        ),
        (
            Object::Daemon {
                role: DaemonRole::Master,
                interface: Some("eth0".into()),
            },
            "master on eth0",
        ),
        (
            Object::Daemon {
                role: DaemonRole::Backup,
                interface: None,
            },
            "backup",
        ),
    ]);
    check(&[
        (RequestKind::AddService, "add service"),
        (RequestKind::ListDestinations, "list destinations of"),
        (RequestKind::StartDaemon, "start sync daemon"),
    ]);
}
