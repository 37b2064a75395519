//! The emulated kernel's semantics, through the library: each command's
//! errnos (sent raw with `Netns::apply`, past the client's own checks),
//! the kernel's listing order, namespaces as separate tables, counters,
//! timeouts and daemons with the kernel's defaults.

use crate::ip;
use std::net::IpAddr;

use ipvsnl::emulator::{Connections, Kernel};
use ipvsnl::{
    AddressFamily, Client, DaemonRole, Destination, Forward, Netmask, Request, Scheduler, Service,
    ServiceKey, Stats, SyncDaemon, Timeouts, Tunnel,
};

fn tcp(addr: &str, port: u16) -> ServiceKey {
    ServiceKey::tcp(ip(addr), port)
}

#[test]
fn every_command_refuses_as_the_kernel_does() {
    let k = Kernel::new();
    let ns = k.init_netns();
    let svc = tcp("10.0.0.1", 80);
    let v6 = tcp("2001:db8::1", 80);
    let d = Destination::new(ip("10.1.0.1"), 80);
    let missing = tcp("10.0.0.9", 80);
    let cases: Vec<(&str, Request, i32)> = vec![
        (
            "delete a missing service",
            Request::DeleteService(missing),
            libc::ESRCH,
        ),
        (
            "edit a missing service",
            Request::edit_service(Service::new(missing)),
            libc::ESRCH,
        ),
        ("add", Request::add_service(Service::new(svc)), 0),
        (
            "add again",
            Request::add_service(Service::new(svc)),
            libc::EEXIST,
        ),
        (
            "an unknown scheduler",
            Request::add_service(
                Service::new(tcp("10.0.0.2", 80)).with_scheduler(Scheduler::new("nosuch").unwrap()),
            ),
            libc::ENOENT,
        ),
        (
            "an unknown scheduler on edit",
            Request::edit_service(
                Service::new(svc).with_scheduler(Scheduler::new("nosuch").unwrap()),
            ),
            libc::ENOENT,
        ),
        (
            "an unknown persistence engine",
            Request::add_service(Service::new(tcp("10.0.0.3", 80)).with_persistence_engine("nope")),
            libc::ENOENT,
        ),
        (
            "an IPv6 prefix of 0",
            Request::add_service(Service::new(v6).with_netmask(Netmask::V6(0))),
            libc::EINVAL,
        ),
        (
            "a destination of a missing service",
            Request::AddDestination(missing, d),
            libc::ESRCH,
        ),
        ("a destination", Request::AddDestination(svc, d), 0),
        (
            "the destination again",
            Request::AddDestination(svc, d),
            libc::EEXIST,
        ),
        (
            "edit a missing destination",
            Request::EditDestination(svc, Destination::new(ip("10.1.0.2"), 80)),
            libc::ENOENT,
        ),
        (
            "delete a missing destination",
            Request::DeleteDestination(svc, ip("10.1.0.2"), 80),
            libc::ENOENT,
        ),
        (
            "a lower threshold above the upper",
            Request::AddDestination(
                svc,
                Destination::new(ip("10.1.0.3"), 80).with_thresholds(5, 10),
            ),
            libc::ERANGE,
        ),
        (
            "a lower threshold without an upper one",
            Request::EditDestination(svc, d.with_thresholds(0, 10)),
            libc::ERANGE,
        ),
        (
            "a negative weight",
            Request::AddDestination(
                svc,
                Destination::new(ip("10.1.0.4"), 80).with_weight(u32::MAX),
            ),
            libc::ERANGE,
        ),
        (
            "GUE without a port",
            Request::AddDestination(
                svc,
                Destination::new(ip("10.1.0.5"), 80).with_forward(Forward::Tunnel(Tunnel::gue(0))),
            ),
            libc::EINVAL,
        ),
        (
            "address 0.0.0.0",
            Request::AddDestination(svc, Destination::new(ip("0.0.0.0"), 80)),
            libc::EINVAL,
        ),
        (
            "a multicast address",
            Request::AddDestination(svc, Destination::new(ip("224.0.0.1"), 80)),
            libc::EINVAL,
        ),
        (
            "the broadcast address",
            Request::AddDestination(svc, Destination::new(ip("255.255.255.255"), 80)),
            libc::EINVAL,
        ),
        (
            "IPv6 behind an IPv4 service, masqueraded",
            Request::AddDestination(svc, Destination::new(ip("2001:db8::5"), 80)),
            libc::EINVAL,
        ),
        (
            "IPv6 behind an IPv4 service, tunnelled",
            Request::AddDestination(
                svc,
                Destination::new(ip("2001:db8::5"), 80)
                    .with_forward(Forward::Tunnel(Tunnel::ipip())),
            ),
            0,
        ),
        (
            "a daemon while a mixed-family destination exists",
            Request::StartDaemon(SyncDaemon::new(DaemonRole::Master, "lo")),
            libc::EINVAL,
        ),
        (
            "delete it",
            Request::DeleteDestination(svc, ip("2001:db8::5"), 80),
            0,
        ),
        (
            "zero a missing service",
            Request::Zero(Some(missing)),
            libc::ESRCH,
        ),
        (
            "a daemon on a missing interface",
            Request::StartDaemon(SyncDaemon::new(DaemonRole::Backup, "eth9")),
            libc::ENODEV,
        ),
        (
            "a master",
            Request::StartDaemon(SyncDaemon::new(DaemonRole::Master, "lo")),
            0,
        ),
        (
            "a second master",
            Request::StartDaemon(SyncDaemon::new(DaemonRole::Master, "lo")),
            libc::EEXIST,
        ),
        (
            "stop a backup never started",
            Request::StopDaemon(DaemonRole::Backup),
            libc::ESRCH,
        ),
        (
            "a timeout above INT_MAX / HZ",
            Request::SetTimeouts(Timeouts::new(9_000_000, 0, 0)),
            libc::EINVAL,
        ),
        ("flush", Request::Flush, 0),
    ];
    let mut wrong = Vec::new();
    for (what, request, errno) in &cases {
        let got = ns.apply(std::slice::from_ref(request))[0];
        if got != *errno {
            wrong.push(format!("{what}: {got}, want {errno}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn services_list_by_hash_bucket_newest_first_then_marks_and_destinations_newest_first() {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    // Buckets (protocol ^ address ^ port, low byte): 10.0.0.1:80 is 0x57,
    // 10.0.0.2:80 is 0x54, 10.0.1.1:80 shares 10.0.0.1's.
    let added = [
        ServiceKey::fwmark(3, AddressFamily::Inet),
        tcp("10.0.0.1", 80),
        tcp("10.0.0.2", 80),
        tcp("10.0.1.1", 80),
    ];
    for key in &added {
        c.add_service(&Service::new(*key)).unwrap();
    }
    let listed: Vec<ServiceKey> = c.services().unwrap().iter().map(|e| *e.key()).collect();
    assert_eq!(listed, [added[2], added[3], added[1], added[0]]);
    let svc = added[1];
    for i in 1..=3 {
        c.add_destination(&svc, &Destination::new(IpAddr::from([10, 1, 0, i]), 80))
            .unwrap();
    }
    let dests: Vec<IpAddr> = c
        .destinations(&svc)
        .unwrap()
        .iter()
        .map(|d| d.destination.addr)
        .collect();
    assert_eq!(dests, [ip("10.1.0.3"), ip("10.1.0.2"), ip("10.1.0.1")]);
}

#[test]
fn namespaces_are_separate_tables_and_a_reload_empties_them_all() {
    let k = Kernel::new();
    let mut init = Client::emulated(&k);
    let mut blue = Client::emulated_in(&k.netns("blue"));
    init.add_service(&Service::new(tcp("10.0.0.1", 80)))
        .unwrap();
    blue.add_service(&Service::new(tcp("10.0.0.1", 80)))
        .unwrap();
    blue.add_service(&Service::new(tcp("10.0.0.2", 80)))
        .unwrap();
    assert_eq!(init.services().unwrap().len(), 1);
    assert_eq!(blue.services().unwrap().len(), 2);
    let before = init.family_id().unwrap();
    k.reload_module();
    // The clients find the new family id and the empty tables.
    assert!(init.services().unwrap().is_empty());
    assert!(blue.services().unwrap().is_empty());
    assert_ne!(init.family_id().unwrap(), before);
    assert_eq!(init.family_id().unwrap(), k.family_id().unwrap());
}

#[test]
fn counters_are_zero_set_by_the_test_and_zeroed_by_the_client() {
    let k = Kernel::new();
    let ns = k.init_netns();
    let mut c = Client::emulated(&k);
    let svc = tcp("10.0.0.1", 80);
    let d = Destination::new(ip("10.1.0.1"), 80);
    c.add_service(&Service::new(svc)).unwrap();
    c.add_destination(&svc, &d).unwrap();
    assert_eq!(c.service(&svc).unwrap().stats, Stats::default());
    let mut stats = Stats::default();
    stats.conns = 7;
    stats.in_bytes = 1 << 40;
    assert!(ns.set_service_stats(&svc, stats));
    let conns = Connections::default()
        .with_active(3)
        .with_inactive(2)
        .with_persistent(1);
    assert!(ns.set_destination_state(&svc, d.addr, 80, conns, stats));
    let e = c.service(&svc).unwrap();
    assert_eq!(e.stats.conns, 7);
    assert_eq!(e.stats.in_bytes, 1 << 40);
    let listed = &c.table().unwrap()[0].destinations[0];
    assert_eq!(
        (
            listed.active_conns,
            listed.inactive_conns,
            listed.persistent_conns
        ),
        (3, 2, 1)
    );
    assert_eq!(listed.stats.conns, 7);
    assert_eq!(c.totals().unwrap().conns, 7);
    c.zero(None).unwrap();
    let listed = &c.table().unwrap()[0];
    assert_eq!(listed.stats, Stats::default());
    assert_eq!(listed.destinations[0].stats, Stats::default());
    // Connections are live state, not counters.
    assert_eq!(listed.destinations[0].active_conns, 3);
}

#[test]
fn timeouts_info_and_daemons_carry_the_kernels_defaults() {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    assert_eq!(c.timeouts().unwrap(), Timeouts::new(900, 120, 300));
    // 0 leaves a timeout as it is.
    c.set_timeouts(&Timeouts::new(0, 60, 0)).unwrap();
    assert_eq!(c.timeouts().unwrap(), Timeouts::new(900, 60, 300));
    let info = c.info().unwrap();
    assert_eq!((info.version, info.conn_tab_size), (0x010201, 4096));
    k.init_netns().add_link("eth0", 1500);
    c.start_sync_daemon(&SyncDaemon::new(DaemonRole::Backup, "eth0").with_sync_id(4))
        .unwrap();
    let d = &c.sync_daemons().unwrap()[0];
    assert_eq!(d.role, DaemonRole::Backup);
    assert_eq!(d.max_len, Some(1472));
    assert_eq!(d.group, Some(ip("224.0.0.81")));
    assert_eq!((d.port, d.ttl), (Some(8848), Some(1)));
    assert_eq!(k.init_netns().sync_daemons(), c.sync_daemons().unwrap());
}

#[test]
fn without_cap_net_admin_even_listings_are_refused() {
    let k = Kernel::new();
    k.set_privileged(false);
    let mut c = Client::emulated(&k);
    let e = c.services().unwrap_err();
    assert!(e.is_permission_denied(), "{e}");
}

#[test]
fn a_namespace_without_lo_up_refuses_every_ipv4_destination() {
    let k = Kernel::new();
    let ns = k.netns("fresh");
    ns.set_loopback_up(false);
    let mut c = Client::emulated_in(&ns);
    let svc = tcp("10.0.0.1", 80);
    c.add_service(&Service::new(svc)).unwrap();
    let e = c
        .add_destination(&svc, &Destination::new(ip("10.1.0.1"), 80))
        .unwrap_err();
    assert_eq!(e.errno(), Some(libc::EINVAL), "{e}");
}
