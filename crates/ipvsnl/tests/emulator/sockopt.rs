//! The socket-option listing against the emulated kernel: what it reads
//! through `IP_VS_SO_GET_SERVICES` and `..._GET_DESTS` is what netlink
//! lists, and what the older interface cannot show (IPv6, a destination
//! of the other family) still comes whole, through netlink.

use crate::ip;
use std::net::IpAddr;

use ipvsnl::emulator::{Connections, Kernel};
use ipvsnl::{
    AddressFamily, Client, ClientOptions, Destination, Forward, Request, RequestKind, Scheduler,
    Service, ServiceFlags, ServiceKey, Stats, Tunnel,
};

/// IPv4, IPv6 and mark services; weights, thresholds, every forwarding,
/// a tunnel to an IPv6 server behind an IPv4 service; connection counts.
fn populated() -> Kernel {
    let k = Kernel::new();
    let v4 = ServiceKey::tcp(ip("10.0.0.1"), 80);
    let v6 = ServiceKey::udp(ip("2001:db8::1"), 53);
    let mark = ServiceKey::fwmark(7, AddressFamily::Inet);
    let mut requests = vec![
        Request::add_service(
            Service::new(v4)
                .with_scheduler(Scheduler::SourceHashing)
                .with_persistence(300)
                .with_flags(ServiceFlags::PERSISTENT),
        ),
        Request::add_service(Service::new(v6)),
        Request::add_service(Service::new(mark)),
        Request::AddDestination(v6, Destination::new(ip("2001:db8::10"), 53)),
        Request::AddDestination(
            v4,
            Destination::new(ip("2001:db8::11"), 80).with_forward(Forward::Tunnel(Tunnel::ipip())),
        ),
    ];
    for (i, forward) in [
        Forward::Masquerade,
        Forward::Route,
        Forward::Tunnel(Tunnel::gre()),
    ]
    .into_iter()
    .enumerate()
    {
        let d = Destination::new(IpAddr::from([10, 1, 0, i as u8 + 1]), 80)
            .with_forward(forward)
            .with_weight(i as u32 + 2)
            .with_thresholds(100, 10);
        requests.push(Request::AddDestination(v4, d));
        // The older interface has no tunnel parameters: the mark service's
        // destinations can be listed through it, the others' not.
        if d.forward.tunnel().is_none() {
            requests.push(Request::AddDestination(mark, d));
        }
    }
    let ns = k.init_netns();
    assert!(ns.apply(&requests).iter().all(|&e| e == 0));
    assert!(ns.set_destination_state(
        &v4,
        ip("10.1.0.2"),
        80,
        Connections::default()
            .with_active(4)
            .with_inactive(5)
            .with_persistent(6),
        Stats::default()
    ));
    k
}

#[test]
fn a_listing_through_the_socket_options_is_the_netlink_listing() {
    let k = populated();
    let mut by_sockopt = Client::emulated_with_options(
        &k.init_netns(),
        ClientOptions::default().with_socket_option_listing(true),
    );
    let mut by_netlink = Client::emulated_with_options(
        &k.init_netns(),
        ClientOptions::default().with_socket_option_listing(false),
    );
    k.clear_requests();
    let got = by_sockopt.table_settings().unwrap();
    let dumps = k
        .requests()
        .iter()
        .filter(|t| t.kind == Some(RequestKind::ListDestinations))
        .count();
    let want = by_netlink.table_settings().unwrap();
    assert_eq!(got, want);
    assert_eq!(got.len(), 3);
    // Only what the older interface cannot give whole went to netlink:
    // the IPv6 service, and the IPv4 one with tunnels (one to an IPv6
    // server).
    assert_eq!(dumps, 2, "{:?}", k.requests());
    let busy = got
        .iter()
        .flat_map(|e| &e.destinations)
        .find(|d| d.destination.addr == ip("10.1.0.2"))
        .unwrap();
    assert_eq!(
        (
            busy.active_conns,
            busy.inactive_conns,
            busy.persistent_conns
        ),
        (4, 5, 6)
    );
}

#[test]
fn without_the_module_the_socket_options_are_not_there_and_netlink_says_so() {
    let k = populated();
    let mut c = Client::emulated(&k);
    k.set_autoload(false);
    k.unload_module();
    let e = c.table_settings().unwrap_err();
    assert!(e.is_unavailable(), "{e}");
}

/// The rows `for_each_settings_row` visits, each with its destinations.
fn visited(c: &mut Client) -> Vec<ipvsnl::ServiceEntry> {
    let mut rows = Vec::new();
    c.for_each_settings_row(|row| {
        rows.push(row.clone());
        std::ops::ControlFlow::Continue(())
    })
    .unwrap();
    rows
}

#[test]
fn the_settings_rows_visited_are_the_settings_listing() {
    let k = populated();
    for sockopt in [true, false] {
        let opts = ClientOptions::default().with_socket_option_listing(sockopt);
        let mut c = Client::emulated_with_options(&k.init_netns(), opts);
        let want = c.table_settings().unwrap();
        k.clear_requests();
        let got = visited(&mut c);
        assert_eq!(got, want, "socket options {sockopt}");
        // The same kernel work: by sockopt, netlink dumps only for the
        // IPv6 service and the tunnelled one; else one per service.
        let dumps = k
            .requests()
            .iter()
            .filter(|t| t.kind == Some(RequestKind::ListDestinations))
            .count();
        assert_eq!(dumps, if sockopt { 2 } else { 3 }, "{:?}", k.requests());
    }
}

#[test]
fn a_settings_visit_stops_when_told_and_the_client_goes_on() {
    let k = populated();
    let mut c = Client::emulated(&k);
    let want = c.table_settings().unwrap();
    let mut seen = Vec::new();
    c.for_each_settings_row(|row| {
        seen.push(row.clone());
        std::ops::ControlFlow::Break(())
    })
    .unwrap();
    assert_eq!(seen, want[..1]);
    assert_eq!(visited(&mut c), want);
}

fn reversed(keys: &[ServiceKey]) -> Vec<usize> {
    (0..keys.len()).rev().collect()
}

/// The IPv6 service left out.
fn ipv4_only(keys: &[ServiceKey]) -> Vec<usize> {
    (0..keys.len())
        .filter(|&i| keys[i].family() == AddressFamily::Inet)
        .collect()
}

#[test]
fn settings_rows_come_in_the_callers_order_each_with_its_destinations() {
    let k = populated();
    for sockopt in [true, false] {
        let opts = ClientOptions::default().with_socket_option_listing(sockopt);
        let mut c = Client::emulated_with_options(&k.init_netns(), opts);
        let want = c.table_settings().unwrap();
        assert!(want.len() >= 3);
        for (order, expected) in [
            (reversed as fn(&[ServiceKey]) -> Vec<usize>, {
                let mut w = want.clone();
                w.reverse();
                w
            }),
            (ipv4_only, {
                let mut w = want.clone();
                w.retain(|e| e.service.key.family() == AddressFamily::Inet);
                w
            }),
        ] {
            k.clear_requests();
            let mut got = Vec::new();
            c.for_each_settings_row_in(order, |row| {
                got.push(row.clone());
                std::ops::ControlFlow::Continue(())
            })
            .unwrap();
            assert_eq!(got, expected, "socket options {sockopt}");
            // Out of the snapshot's order, the same kernel work: by
            // sockopt, netlink dumps only for the IPv6 service (if
            // visited) and the tunnelled one.
            let dumps = k
                .requests()
                .iter()
                .filter(|t| t.kind == Some(RequestKind::ListDestinations))
                .count();
            let ipv6 = got
                .iter()
                .any(|e| e.service.key.family() == AddressFamily::Inet6);
            let want_dumps = if sockopt {
                1 + usize::from(ipv6)
            } else {
                got.len()
            };
            assert_eq!(dumps, want_dumps, "socket options {sockopt}");
        }
    }
}

fn past_the_end(keys: &[ServiceKey]) -> Vec<usize> {
    vec![0, keys.len()]
}

fn twice(_: &[ServiceKey]) -> Vec<usize> {
    vec![1, 0, 1]
}

#[test]
fn a_visiting_order_out_of_range_or_repeated_is_refused_before_any_visit() {
    let k = populated();
    let mut c = Client::emulated(&k);
    for (order, says) in [
        (
            past_the_end as fn(&[ServiceKey]) -> Vec<usize>,
            "index 3 is past the 3 services listed",
        ),
        (twice, "service 1 is in it twice"),
    ] {
        let mut visits = 0;
        let e = c
            .for_each_settings_row_in(order, |_| {
                visits += 1;
                std::ops::ControlFlow::Continue(())
            })
            .unwrap_err();
        assert!(matches!(e, ipvsnl::Error::InvalidInput(_)), "{e}");
        assert!(e.to_string().contains(says), "{e}");
        assert_eq!(visits, 0);
    }
    // The client goes on.
    assert_eq!(visited(&mut c), c.table_settings().unwrap());
}
