//! Destinations against the real kernel: add, edit, delete and list with
//! every forwarding method, weight, thresholds, every tunnel type with port
//! and checksum flags, a destination of the other family behind a tunnel,
//! connection counts and stats; the error cases, including the kernel's own
//! ERANGE/EINVAL paths reached with hand-built messages.

use crate::common;
use crate::rawnl;

use std::net::IpAddr;

use common::*;
use ipvsnl::wire::{DestAttr, IpvsAttr, IpvsCommand, IpvsMessage, ServiceAttr};
use ipvsnl::{
    Client, Destination, Forward, Operations, Service, ServiceKey, Stats, Tunnel, TunnelFlags,
    TunnelKind,
};
use rawnl::RawNl;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn sorted(mut v: Vec<Destination>) -> Vec<Destination> {
    v.sort();
    v
}

fn listed(c: &mut Client, key: &ServiceKey) -> Vec<Destination> {
    sorted(
        c.destinations(key)
            .unwrap()
            .into_iter()
            .map(|d| d.destination)
            .collect(),
    )
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn every_forwarding_method_weight_and_thresholds() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    for key in [
        ServiceKey::tcp(ip("10.0.0.1"), 80),
        ServiceKey::fwmark(3, ipvsnl::AddressFamily::Inet),
    ] {
        c.add_service(&Service::new(key)).unwrap();
        let dests = vec![
            Destination::new(ip("10.1.0.1"), 8080),
            Destination::new(ip("10.1.0.2"), 80)
                .with_forward(Forward::Route)
                .with_weight(0),
            Destination::new(ip("10.1.0.3"), 80)
                .with_forward(Forward::Tunnel(Tunnel::ipip()))
                .with_weight(ipvsnl::WEIGHT_MAX),
            Destination::new(ip("10.1.0.4"), 80)
                .with_forward(Forward::Local)
                .with_thresholds(100, 10),
            Destination::new(ip("10.1.0.5"), 80)
                .with_forward(Forward::Bypass)
                .with_thresholds(5, 5),
            Destination::new(ip("10.1.0.6"), 0).with_thresholds(i32::MAX as u32, 0),
        ];
        for d in &dests {
            c.add_destination(&key, d)
                .unwrap_or_else(|e| panic!("add {d:?} to {key}: {e}"));
        }
        assert_eq!(listed(&mut c, &key), sorted(dests.clone()));
        // Kernel order: newest first.
        let order: Vec<IpAddr> = c
            .destinations(&key)
            .unwrap()
            .iter()
            .map(|d| d.destination.addr)
            .collect();
        let mut newest_first: Vec<IpAddr> = dests.iter().map(|d| d.addr).collect();
        newest_first.reverse();
        assert_eq!(order, newest_first);
        for entry in c.destinations(&key).unwrap() {
            assert_eq!(entry.active_conns, 0);
            assert_eq!(entry.inactive_conns, 0);
            assert_eq!(entry.persistent_conns, 0);
            assert_eq!(entry.stats, Stats::default());
        }
        // Edit every one into another method, weight and thresholds.
        let edited: Vec<Destination> = dests
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let fwd = [
                    Forward::Route,
                    Forward::Masquerade,
                    Forward::Local,
                    Forward::Tunnel(Tunnel::gre()),
                    Forward::Masquerade,
                    Forward::Bypass,
                ][i];
                d.with_forward(fwd)
                    .with_weight(i as u32 * 7)
                    .with_thresholds(1000 + i as u32, i as u32)
            })
            .collect();
        for d in &edited {
            c.edit_destination(&key, d).unwrap();
        }
        assert_eq!(listed(&mut c, &key), sorted(edited.clone()));
        for d in &edited[..3] {
            c.delete_destination(&key, d.addr, d.port).unwrap();
        }
        assert_eq!(listed(&mut c, &key), sorted(edited[3..].to_vec()));
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn local_addresses_and_port_zero() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let key = ServiceKey::tcp(ip("10.0.0.1"), 80);
    c.add_service(&Service::new(key)).unwrap();
    c.add_destination(&key, &Destination::new(ip("127.0.0.1"), 8080))
        .unwrap();
    let d = &c.destinations(&key).unwrap()[0].destination;
    // The kernel keeps the method it was given (it does not turn a local
    // address into LOCALNODE on these kernels).
    assert_eq!(d.forward, Forward::Masquerade);
    c.add_destination(
        &key,
        &Destination::new(ip("127.0.0.2"), 80).with_forward(Forward::Local),
    )
    .unwrap();
    let mut got: Vec<Forward> = c
        .destinations(&key)
        .unwrap()
        .iter()
        .map(|d| d.destination.forward)
        .collect();
    got.sort();
    assert_eq!(got, vec![Forward::Masquerade, Forward::Local]);
    // Port 0 on an address-keyed service is accepted and listed as such.
    c.add_destination(&key, &Destination::new(ip("10.1.0.1"), 0))
        .unwrap();
    assert!(c
        .destinations(&key)
        .unwrap()
        .iter()
        .any(|d| d.destination.port == 0));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn tunnel_types_ports_flags_and_mixed_families() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let v4 = ServiceKey::udp(ip("10.0.0.1"), 53);
    let v6 = ServiceKey::tcp(ip("2001:db8::1"), 443);
    c.add_service(&Service::new(v4)).unwrap();
    c.add_service(&Service::new(v6)).unwrap();
    let tun = |t: Tunnel| Forward::Tunnel(t);
    let v4_dests = vec![
        Destination::new(ip("10.1.0.1"), 53).with_forward(tun(Tunnel::ipip())),
        Destination::new(ip("10.1.0.2"), 53).with_forward(tun(Tunnel::gue(6080))),
        Destination::new(ip("10.1.0.3"), 53)
            .with_forward(tun(Tunnel::gue(65535).with_flags(TunnelFlags::CSUM))),
        Destination::new(ip("10.1.0.4"), 53)
            .with_forward(tun(Tunnel::gue(1).with_flags(TunnelFlags::REMCSUM))),
        Destination::new(ip("10.1.0.5"), 53)
            .with_forward(tun(Tunnel::gre().with_flags(TunnelFlags::CSUM))),
        Destination::new(ip("10.1.0.6"), 53).with_forward(tun(Tunnel::gre())),
        // Mixed families: an IPv6 real server of an IPv4 service.
        Destination::new(ip("2001:db8::10"), 53)
            .with_forward(tun(Tunnel::ipip()))
            .with_weight(3),
        Destination::new(ip("2001:db8::11"), 53)
            .with_forward(tun(Tunnel::gue(7777).with_flags(TunnelFlags::CSUM))),
    ];
    for d in &v4_dests {
        c.add_destination(&v4, d)
            .unwrap_or_else(|e| panic!("add {d:?}: {e}"));
    }
    assert_eq!(listed(&mut c, &v4), sorted(v4_dests.clone()));
    let v6_dests = vec![
        Destination::new(ip("2001:db8::5"), 443)
            .with_forward(tun(Tunnel::gue(6080).with_flags(TunnelFlags::REMCSUM))),
        Destination::new(ip("10.9.0.1"), 443).with_forward(tun(Tunnel::gre())),
        Destination::new(ip("2001:db8::6"), 8443).with_forward(Forward::Masquerade),
    ];
    for d in &v6_dests {
        c.add_destination(&v6, d).unwrap();
    }
    assert_eq!(listed(&mut c, &v6), sorted(v6_dests.clone()));
    // Edit GUE -> GRE with flags, and a mixed-family one back to ipip.
    let e1 = v4_dests[1].with_forward(tun(Tunnel::gre().with_flags(TunnelFlags::REMCSUM)));
    c.edit_destination(&v4, &e1).unwrap();
    let got = c.destinations(&v4).unwrap();
    let found = got.iter().find(|d| d.destination.addr == e1.addr).unwrap();
    assert_eq!(found.destination, e1);
    let t = found.destination.forward.tunnel().unwrap();
    assert_eq!(
        (t.kind, t.port, t.flags),
        (TunnelKind::Gre, 0, TunnelFlags::REMCSUM)
    );
    // Deleting a mixed-family destination.
    c.delete_destination(&v4, ip("2001:db8::10"), 53).unwrap();
    assert_eq!(c.destinations(&v4).unwrap().len(), v4_dests.len() - 1);
    // A mixed-family destination without a tunnel is refused locally.
    let e = c
        .add_destination(&v4, &Destination::new(ip("2001:db8::99"), 53))
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    // Tunnel options on GUE without a port: refused locally.
    let e = c
        .add_destination(
            &v4,
            &Destination::new(ip("10.1.0.99"), 53).with_forward(tun(Tunnel::gue(0))),
        )
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn destination_errors_are_precise() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let key = ServiceKey::tcp(ip("10.0.0.1"), 80);
    let missing = ServiceKey::tcp(ip("10.0.0.2"), 80);
    c.add_service(&Service::new(key)).unwrap();
    let d = Destination::new(ip("10.1.0.1"), 80);
    c.add_destination(&key, &d).unwrap();
    let e = c.add_destination(&key, &d).unwrap_err();
    assert!(e.is_already_exists(), "{e}");
    assert!(e.to_string().contains("destination already exists"), "{e}");
    let e = c.delete_destination(&key, ip("10.1.0.9"), 80).unwrap_err();
    assert!(e.is_not_found(), "{e}");
    assert!(e.to_string().contains("no such destination"), "{e}");
    let e = c
        .edit_destination(&key, &Destination::new(ip("10.1.0.9"), 80))
        .unwrap_err();
    assert!(e.is_not_found(), "{e}");
    let e = c.add_destination(&missing, &d).unwrap_err();
    assert!(e.is_not_found(), "{e}");
    assert_eq!(e.errno(), Some(libc::ESRCH));
    let e = c.delete_destination(&missing, d.addr, d.port).unwrap_err();
    assert!(e.is_not_found(), "{e}");
    // GET_DEST of a missing service is an empty dump, not an error.
    assert!(c.destinations(&missing).unwrap().is_empty());
    // Bad threshold pairs and weights: refused before sending.
    for bad in [
        d.with_thresholds(0, 10),
        d.with_thresholds(5, 6),
        d.with_weight(ipvsnl::WEIGHT_MAX + 1),
        d.with_thresholds(ipvsnl::THRESHOLD_MAX + 1, 0),
    ] {
        let e = c.edit_destination(&key, &bad).unwrap_err();
        assert!(e.is_invalid_input(), "{e}");
    }
    // Non-unicast addresses: refused locally.
    for a in ["0.0.0.0", "255.255.255.255", "224.0.0.1"] {
        let e = c
            .add_destination(&key, &Destination::new(ip(a), 80))
            .unwrap_err();
        assert!(e.is_invalid_input(), "{a}: {e}");
    }
    assert_eq!(c.destinations(&key).unwrap().len(), 1);
}

fn raw_dest_request(cmd: IpvsCommand, dest: Vec<DestAttr>) -> IpvsMessage {
    let mut addr = [0u8; 16];
    addr[..4].copy_from_slice(&[10, 0, 0, 1]);
    IpvsMessage::new(
        cmd,
        vec![
            IpvsAttr::Service(vec![
                ServiceAttr::AddressFamily(libc::AF_INET as u16),
                ServiceAttr::Protocol(libc::IPPROTO_TCP as u16),
                ServiceAttr::Address(addr),
                ServiceAttr::Port(80),
            ]),
            IpvsAttr::Dest(dest),
        ],
    )
}

fn raw_dest(addr: [u8; 4], weight: u32, upper: u32, lower: u32, tun: (u8, u16)) -> Vec<DestAttr> {
    let mut a = [0u8; 16];
    a[..4].copy_from_slice(&addr);
    vec![
        DestAttr::AddressFamily(libc::AF_INET as u16),
        DestAttr::Address(a),
        DestAttr::Port(80),
        DestAttr::ForwardMethod(if tun.0 != 0 || tun.1 != 0 { 2 } else { 0 }),
        DestAttr::Weight(weight),
        DestAttr::TunnelType(tun.0),
        DestAttr::TunnelPort(tun.1),
        DestAttr::TunnelFlags(0),
        DestAttr::UpperThreshold(upper),
        DestAttr::LowerThreshold(lower),
    ]
}

/// What the library refuses locally, the kernel refuses too: sent raw, the
/// bad threshold pair and the negative weight give ERANGE, GUE without a
/// port EINVAL. The library's error text for those errnos is checked too.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn kernel_refuses_what_the_library_refuses_locally() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let key = ServiceKey::tcp(ip("10.0.0.1"), 80);
    c.add_service(&Service::new(key)).unwrap();
    let mut nl = RawNl::open().unwrap();
    let cases = [
        (raw_dest([10, 1, 0, 1], 1, 0, 10, (0, 0)), libc::ERANGE),
        (raw_dest([10, 1, 0, 2], 1, 5, 6, (0, 0)), libc::ERANGE),
        (
            raw_dest([10, 1, 0, 3], u32::MAX, 0, 0, (0, 0)),
            libc::ERANGE,
        ),
        (raw_dest([10, 1, 0, 4], 1, 0, 0, (1, 0)), libc::EINVAL),
        (raw_dest([224, 0, 0, 1], 1, 0, 0, (0, 0)), libc::EINVAL),
        // An upper threshold above INT_MAX: refused, as EINVAL.
        (
            raw_dest([10, 1, 0, 6], 1, u32::MAX, 0, (0, 0)),
            libc::EINVAL,
        ),
        (
            raw_dest([10, 1, 0, 7], 1, 0x8000_0000, 0, (0, 0)),
            libc::EINVAL,
        ),
    ];
    for (dest, errno) in cases {
        let x = nl
            .exchange(raw_dest_request(IpvsCommand::NewDest, dest.clone()), false)
            .unwrap();
        assert_eq!(x.errno, errno, "{dest:?}");
        let target =
            ipvsnl::Target::new(ipvsnl::RequestKind::AddDestination, ipvsnl::Object::Table);
        let e = ipvsnl::Error::refused(target, x.errno);
        if errno == libc::ERANGE {
            assert!(e.to_string().contains("threshold"), "{e}");
        }
    }
    // A sane raw add works, so the failures above are the values' fault.
    let x = nl
        .exchange(
            raw_dest_request(
                IpvsCommand::NewDest,
                raw_dest([10, 1, 0, 5], 2, 9, 3, (0, 0)),
            ),
            false,
        )
        .unwrap();
    assert_eq!(x.errno, 0);
    let got = c.destinations(&key).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].destination,
        Destination::new(ip("10.1.0.5"), 80)
            .with_weight(2)
            .with_thresholds(9, 3)
    );
}

/// A destination dump of many parts, read a few datagrams per receive
/// call: every destination once, by itself and in the whole-table listing,
/// with a get of the service (its reply and ACK) between the two.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn a_dump_of_many_parts_lists_each_destination_once() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let key = ServiceKey::tcp(ip("10.0.0.1"), 80);
    c.add_service(&Service::new(key)).unwrap();
    let mut want = Vec::new();
    for i in 0..250u32 {
        let d = Destination::new(IpAddr::from([172, 16, (i >> 8) as u8, i as u8]), 8080)
            .with_weight(i % 7);
        c.add_destination(&key, &d).unwrap();
        want.push(d);
    }
    assert_eq!(listed(&mut c, &key), sorted(want.clone()));
    assert_eq!(c.service(&key).unwrap().service.key, key);
    let table = c.table().unwrap();
    assert_eq!(table.len(), 1);
    let mut got: Vec<Destination> = table[0]
        .destinations
        .iter()
        .map(|d| d.destination)
        .collect();
    assert_eq!(got.len(), 250);
    got = sorted(got);
    assert_eq!(got, sorted(want));
}

// A weight set alone keeps every other setting of the destination (an
// edit replaces them all), through both clients.
crate::both!(a_weight_set_alone_keeps_forwarding_and_thresholds);

async fn a_weight_set_alone_keeps_forwarding_and_thresholds(c: &mut impl Operations) {
    let key = ServiceKey::tcp(ip("10.0.0.1"), 80);
    let missing = ServiceKey::tcp(ip("10.0.0.2"), 80);
    c.add_service(&Service::new(key)).await.unwrap();
    let tunnelled = Destination::new(ip("10.1.0.1"), 8080)
        .with_forward(Forward::Tunnel(
            Tunnel::gue(6080).with_flags(TunnelFlags::CSUM),
        ))
        .with_weight(3)
        .with_thresholds(100, 10);
    let routed = Destination::new(ip("10.1.0.2"), 80)
        .with_forward(Forward::Route)
        .with_weight(7)
        .with_thresholds(50, 5);
    for d in [&tunnelled, &routed] {
        c.add_destination(&key, d).await.unwrap();
    }
    let listed = |entries: Vec<ipvsnl::DestinationEntry>| {
        sorted(entries.into_iter().map(|e| e.destination).collect())
    };

    c.set_destination_weight(&key, tunnelled.addr, tunnelled.port, 5)
        .await
        .unwrap();
    assert_eq!(
        listed(c.destinations(&key).await.unwrap()),
        sorted(vec![tunnelled.with_weight(5), routed]),
    );
    c.set_destination_weight(&key, routed.addr, routed.port, 0)
        .await
        .unwrap();
    assert_eq!(
        listed(c.destinations(&key).await.unwrap()),
        sorted(vec![tunnelled.with_weight(5), routed.with_weight(0)]),
    );

    // Not there (another port of a listed address, a service that does
    // not exist): not found, and nothing changed.
    let e = c
        .set_destination_weight(&key, tunnelled.addr, 9, 5)
        .await
        .unwrap_err();
    assert!(e.is_not_found(), "{e}");
    assert_eq!(e.errno(), Some(libc::ENOENT), "{e}");
    let e = c
        .set_destination_weight(&missing, tunnelled.addr, tunnelled.port, 5)
        .await
        .unwrap_err();
    assert!(e.is_not_found(), "{e}");
    // A weight out of range: refused before anything is sent.
    let e = c
        .set_destination_weight(&key, routed.addr, routed.port, ipvsnl::WEIGHT_MAX + 1)
        .await
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    assert_eq!(
        listed(c.destinations(&key).await.unwrap()),
        sorted(vec![tunnelled.with_weight(5), routed.with_weight(0)]),
    );

    // Why: the whole-destination edit with only a weight given resets the
    // forwarding and thresholds to `Destination::new`'s.
    let only_weight = Destination::new(routed.addr, routed.port).with_weight(9);
    c.edit_destination(&key, &only_weight).await.unwrap();
    assert_eq!(
        listed(c.destinations(&key).await.unwrap()),
        sorted(vec![tunnelled.with_weight(5), only_weight]),
    );
}
