//! Unit tests of the whole listing's bookkeeping: the quick comparison
//! with the IPv4 snapshot, the keys of the snapshot, and what a client
//! remembers from listing to listing.

use std::io;
use std::net::IpAddr;
use std::ops::ControlFlow;

use ipvsnl_wire::sockopt::{services_request, SERVICE_ENTRY_SIZE};

use super::{snapshot_key, Found, Listed};
use crate::listing::Checks;
use crate::transport::sockopt::{ServiceSnapshot, SockoptSocket};
use crate::{AddressFamily, Protocol, Service, ServiceEntry, ServiceKey};

fn tcp(addr: &str) -> ServiceKey {
    ServiceKey::tcp(addr.parse::<IpAddr>().unwrap(), 80)
}

fn entries(keys: &[ServiceKey]) -> Vec<ServiceEntry> {
    keys.iter()
        .map(|k| ServiceEntry::new(Service::new(*k)))
        .collect()
}

/// A snapshot as the kernel fills it (x86-64 layout: protocol at 0, the
/// address at 4, the port at 8, the mark at 12, the scheduler at 16).
fn snapshot(keys: &[ServiceKey]) -> ServiceSnapshot {
    let mut buf = services_request(keys.len() as u32 + 2).unwrap();
    for (i, k) in keys.iter().enumerate() {
        let e = &mut buf[8 + i * SERVICE_ENTRY_SIZE..][..SERVICE_ENTRY_SIZE];
        match k {
            ServiceKey::Inet {
                protocol,
                addr: IpAddr::V4(a),
                port,
            } => {
                e[0..2].copy_from_slice(&protocol.to_raw().to_ne_bytes());
                e[4..8].copy_from_slice(&a.octets());
                e[8..10].copy_from_slice(&port.to_be_bytes());
            }
            ServiceKey::Fwmark { mark, .. } => {
                // The kernel keeps the protocol a mark service was given.
                e[0..2].copy_from_slice(&6u16.to_ne_bytes());
                e[12..16].copy_from_slice(&mark.to_ne_bytes());
            }
            other => panic!("no IPv6 service in a snapshot: {other}"),
        }
        e[16..19].copy_from_slice(b"wlc");
    }
    ServiceSnapshot::from_bytes(buf)
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_snapshot_reads_back_as_the_keys_a_dump_decodes() {
    let keys = [
        tcp("10.0.0.1"),
        ServiceKey::udp("10.0.0.2".parse().unwrap(), 53),
        ServiceKey::Inet {
            protocol: Protocol::from_raw(47),
            addr: "10.0.0.3".parse().unwrap(),
            port: 0,
        },
        ServiceKey::fwmark(7, AddressFamily::Inet),
    ];
    let got: Vec<ServiceKey> = snapshot(&keys)
        .services()
        .map(|s| snapshot_key(&s))
        .collect();
    assert_eq!(got, keys);
}

#[cfg(target_arch = "x86_64")]
#[test]
fn only_the_snapshots_own_ipv4_services_in_its_order_are_surely_listed() {
    let (a, b, c) = (tcp("10.0.0.1"), tcp("10.0.0.2"), tcp("10.0.0.3"));
    let v6 = tcp("fd00::1");
    let snap = snapshot(&[a, b, c]);
    // IPv6 services among them change nothing.
    assert!(Listed::new(entries(&[a, v6, b, c]), false).surely_has(&snap));
    // One missing, one more, another order: not sure.
    assert!(!Listed::new(entries(&[a, c]), false).surely_has(&snap));
    assert!(!Listed::new(entries(&[a, b, c, tcp("10.0.0.4")]), false).surely_has(&snap));
    assert!(!Listed::new(entries(&[b, a, c]), false).surely_has(&snap));
    assert!(Listed::new(Vec::new(), false).surely_has(&snapshot(&[])));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn repeats_are_dropped_unless_the_snapshot_showed_there_are_none() {
    let (a, b, c) = (tcp("10.0.0.1"), tcp("10.0.0.2"), tcp("10.0.0.3"));
    let v6 = tcp("fd00::1");
    let snap = snapshot(&[a, b, c]);
    let keys =
        |l: Listed| -> Vec<ServiceKey> { l.into_services().iter().map(|e| *e.key()).collect() };
    // An IPv4 repeat: the snapshot does not agree, the repeat goes.
    let mut l = Listed::new(entries(&[a, b, a, c]), false);
    assert!(!l.surely_has(&snap));
    assert_eq!(keys(l), [a, b, c]);
    // An IPv6 repeat: the IPv4 services agree, the repeat goes all the same.
    let mut l = Listed::new(entries(&[a, v6, b, v6, c]), false);
    assert!(l.surely_has(&snap));
    assert_eq!(keys(l), [a, v6, b, c]);
    // Looking a key up drops them first.
    let mut l = Listed::new(entries(&[a, a]), false);
    assert!(l.contains(&a));
    assert_eq!(keys(l), [a]);
}

#[test]
fn a_listed_key_is_found_before_and_after_the_set_is_made() {
    let (a, b) = (tcp("10.0.0.1"), tcp("10.0.0.2"));
    let mut listed = Listed::new(entries(&[a]), false);
    assert!(listed.add(ServiceEntry::new(Service::new(b))).is_continue());
    assert!(listed.contains(&a) && listed.contains(&b));
    let c = tcp("10.0.0.3");
    assert!(!listed.contains(&c));
    assert_eq!(
        listed.add(ServiceEntry::new(Service::new(c))),
        ControlFlow::Continue(())
    );
    assert!(listed.contains(&c));
    let order: Vec<ServiceKey> = listed.into_services().iter().map(|e| *e.key()).collect();
    assert_eq!(order, [a, b, c], "those found after the dump come last");
}

#[test]
fn a_client_remembers_what_no_snapshot_vouches_for() {
    let (v4, v6) = (tcp("10.0.0.1"), tcp("fd00::1"));
    let mut with_socket = Checks::new(SockoptSocket::open());
    // No IPv6 service listed yet: nothing is kept.
    with_socket.listed([v4].iter());
    with_socket.whole([v4].iter());
    assert!(with_socket.remembered.is_empty());
    with_socket.listed([v4, v6].iter());
    with_socket.whole([v4, v6].iter());
    assert_eq!(with_socket.remembered.iter().collect::<Vec<_>>(), [&v6]);
    // The next whole listing replaces it.
    with_socket.whole([v4].iter());
    assert!(with_socket.remembered.is_empty());

    let mut without = Checks::new(Err(io::Error::from_raw_os_error(libc::EAFNOSUPPORT)));
    without.listed([v4].iter());
    without.whole([v4].iter());
    assert_eq!(without.remembered.len(), 1);
    let shown = format!("{without:?}");
    assert!(
        shown.contains("no socket") && shown.contains("remembered: 1"),
        "{shown}"
    );
}
