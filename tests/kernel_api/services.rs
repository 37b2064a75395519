//! Services against the real kernel: add, edit, delete, get and list for
//! IPv4, IPv6 and fwmark (both families) on TCP, UDP and SCTP; every
//! scheduler the kernel ships; scheduler flags; persistence (timeout and
//! netmask); one-packet scheduling; the sip persistence engine; errors.

use crate::common;

use std::net::{IpAddr, Ipv4Addr};

use common::*;
use ipvsnl::{AddressFamily, Client, Netmask, Scheduler, Service, ServiceFlags, ServiceKey};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn all_keys() -> Vec<ServiceKey> {
    ipvsnl_test_support::keys::every_kind_of_key()
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn add_get_list_edit_delete_every_kind_of_key() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    assert!(c.services().unwrap().is_empty());
    let keys = all_keys();
    for k in &keys {
        c.add_service(&Service::new(*k).with_scheduler(Scheduler::RoundRobin))
            .unwrap_or_else(|e| panic!("add {k}: {e}"));
    }
    // Listed exactly as added (the kernel's order is its hash order).
    let mut listed: Vec<Service> = c
        .services()
        .unwrap()
        .into_iter()
        .map(|e| e.service)
        .collect();
    listed.sort_by_key(|s| s.key);
    let mut want: Vec<Service> = keys
        .iter()
        .map(|k| Service::new(*k).with_scheduler(Scheduler::RoundRobin))
        .collect();
    want.sort_by_key(|s| s.key);
    assert_eq!(listed, want);
    for s in &want {
        let got = c.service(&s.key).unwrap();
        assert_eq!(&got.service, s);
        assert_eq!(got.stats, ipvsnl::Stats::default());
    }
    // (No count check against /proc/net/ip_vs: with services in other
    // namespaces it skips entries of this one, see the report of
    // kernel_api/misc.rs; netlink is the source of truth.)

    // Edit: scheduler, persistence with a netmask of the right family.
    for k in &keys {
        let mask = match k.family() {
            AddressFamily::Inet => Netmask::V4(Ipv4Addr::new(255, 255, 255, 0)),
            _ => Netmask::V6(64),
        };
        let edited = Service::new(*k)
            .with_scheduler(Scheduler::WeightedRoundRobin)
            .with_persistence(1800)
            .with_netmask(mask);
        c.edit_service(&edited).unwrap();
        assert_eq!(c.service(k).unwrap().service, edited);
    }
    // Edit back to non-persistent: every flag is replaced.
    let plain = Service::new(keys[0]).with_scheduler(Scheduler::LeastConnection);
    c.edit_service(&plain).unwrap();
    assert_eq!(c.service(&keys[0]).unwrap().service, plain);

    for k in &keys {
        c.delete_service(k).unwrap();
        let e = c.service(k).unwrap_err();
        assert!(e.is_not_found(), "{e}");
        let e = c.delete_service(k).unwrap_err();
        assert!(e.is_not_found(), "{e}");
        assert_eq!(e.errno(), Some(libc::ESRCH));
    }
    assert!(c.services().unwrap().is_empty());
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn every_scheduler_module_the_kernel_ships() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let (maj, min) = kernel_version();
    let has_twos = (maj, min) >= (6, 7);
    let mut tried = Vec::new();
    for (i, sched) in Scheduler::named().enumerate() {
        let key = ServiceKey::tcp(IpAddr::from([10, 2, 0, i as u8 + 1]), 80);
        let svc = Service::new(key).with_scheduler(sched.clone());
        let r = c.add_service(&svc);
        if sched == Scheduler::TwoChoice && !has_twos {
            let e = r.unwrap_err();
            assert_eq!(e.errno(), Some(libc::ENOENT), "{e}");
            assert!(e.to_string().contains("ip_vs_twos"), "{e}");
            continue;
        }
        r.unwrap_or_else(|e| panic!("scheduler {sched}: {e}"));
        let got = c.service(&key).unwrap().service;
        assert_eq!(got.scheduler, sched);
        assert!(!matches!(got.scheduler, Scheduler::Other(_)), "{got:?}");
        tried.push(sched.name().to_owned());
    }
    let mut want: Vec<&str> = vec![
        "rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq", "fo", "ovf", "mh",
        "none",
    ];
    if has_twos {
        want.push("twos");
    }
    for w in want {
        assert!(tried.iter().any(|t| t == w), "{w} not exercised: {tried:?}");
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scheduler_flags_one_packet_and_persistence_engine() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let cases = [
        (
            ServiceKey::tcp(ip("10.3.0.1"), 80),
            Service::new(ServiceKey::tcp(ip("10.3.0.1"), 80))
                .with_scheduler(Scheduler::SourceHashing)
                .with_flags(ServiceFlags::SH_FALLBACK | ServiceFlags::SH_PORT),
        ),
        (
            ServiceKey::fwmark(7, AddressFamily::Inet6),
            Service::new(ServiceKey::fwmark(7, AddressFamily::Inet6))
                .with_scheduler(Scheduler::Maglev)
                .with_flags(ServiceFlags::MH_FALLBACK),
        ),
        (
            ServiceKey::sctp(ip("2001:db8::3"), 80),
            Service::new(ServiceKey::sctp(ip("2001:db8::3"), 80))
                .with_scheduler(Scheduler::Maglev)
                .with_flags(ServiceFlags::MH_PORT | ServiceFlags::SCHED3),
        ),
        (
            ServiceKey::udp(ip("10.3.0.2"), 53),
            Service::new(ServiceKey::udp(ip("10.3.0.2"), 53)).with_flags(ServiceFlags::ONE_PACKET),
        ),
        (
            ServiceKey::udp(ip("10.3.0.3"), 5060),
            Service::new(ServiceKey::udp(ip("10.3.0.3"), 5060))
                .with_scheduler(Scheduler::RoundRobin)
                .with_persistence(60)
                .with_persistence_engine("sip"),
        ),
        (
            ServiceKey::tcp(ip("2001:db8::4"), 80),
            Service::new(ServiceKey::tcp(ip("2001:db8::4"), 80))
                .with_persistence(2678400)
                .with_netmask(Netmask::V6(48)),
        ),
        (
            ServiceKey::fwmark(8, AddressFamily::Inet),
            Service::new(ServiceKey::fwmark(8, AddressFamily::Inet))
                .with_persistence(1)
                .with_netmask(Netmask::V4(Ipv4Addr::new(255, 255, 0, 0))),
        ),
    ];
    for (key, svc) in &cases {
        c.add_service(svc).unwrap_or_else(|e| panic!("{key}: {e}"));
        assert_eq!(&c.service(key).unwrap().service, svc);
    }
    // An edit without the engine removes it; without flags clears them.
    let (key, _) = &cases[4];
    let plain = Service::new(*key)
        .with_scheduler(Scheduler::RoundRobin)
        .with_persistence(60);
    c.edit_service(&plain).unwrap();
    assert_eq!(c.service(key).unwrap().service.persistence_engine, None);
    let (key, _) = &cases[0];
    c.edit_service(&Service::new(*key).with_scheduler(Scheduler::SourceHashing))
        .unwrap();
    assert_eq!(c.service(key).unwrap().service.flags, ServiceFlags::empty());
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn service_errors_are_precise() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let key = ServiceKey::tcp(ip("10.4.0.1"), 80);
    c.add_service(&Service::new(key)).unwrap();
    let e = c.add_service(&Service::new(key)).unwrap_err();
    assert!(e.is_already_exists(), "{e}");
    assert!(e.to_string().contains("service already exists"), "{e}");

    let other = ServiceKey::tcp(ip("10.4.0.2"), 80);
    let e = c
        .add_service(&Service::new(other).with_scheduler(Scheduler::new("nosuchsch").unwrap()))
        .unwrap_err();
    assert_eq!(e.errno(), Some(libc::ENOENT), "{e}");
    assert!(e.to_string().contains("ip_vs_nosuchsch"), "{e}");
    let e = c
        .add_service(&Service::new(other).with_persistence_engine("nosuchpe"))
        .unwrap_err();
    assert_eq!(e.errno(), Some(libc::ENOENT), "{e}");
    assert!(e.to_string().contains("nosuchpe"), "{e}");
    let e = c.edit_service(&Service::new(other)).unwrap_err();
    assert!(e.is_not_found(), "{e}");
    let e = c.zero(Some(&other)).unwrap_err();
    assert!(e.is_not_found(), "{e}");
    assert!(c.services().unwrap().len() == 1);

    // Refused before anything is sent.
    let e = c
        .add_service(&Service::new(other).with_netmask(Netmask::V6(64)))
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    let e = c
        .add_service(&Service::new(ServiceKey::fwmark(0, AddressFamily::Inet)))
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    assert_eq!(
        Scheduler::new("sixteen-chars-xx").unwrap_err().field(),
        "scheduler name"
    );
    let v6 = ServiceKey::tcp(ip("2001:db8::9"), 80);
    let e = c
        .add_service(&Service::new(v6).with_netmask(Netmask::V6(129)))
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    assert_eq!(c.services().unwrap().len(), 1);
}
