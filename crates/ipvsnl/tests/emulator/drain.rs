//! The drain against the emulated kernel, as its docs tell a test to
//! write it: the counters are 0 until the test sets them, so a removed
//! destination is deleted at once; set, it is drained at weight 0 first.

use std::net::SocketAddr;
use std::time::Duration;

use ipvsnl::emulator::{Connections, Kernel};
use ipvsnl::sync::{Drain, PlanOptions, Scope, Syncer, Table};
use ipvsnl::{Client, Destination, Request, Service, ServiceKey, Stats};

fn at(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// A kernel and a draining syncer that put two destinations behind one
/// service; the destination at 10.1.0.1:8080 is then no longer wanted.
fn set_up() -> (Kernel, Client, Syncer, ServiceKey, Destination, Table) {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    let drain = Drain::new(Duration::from_secs(300));
    let mut s = Syncer::new(PlanOptions::new(Scope::All).with_drain(drain));
    let key = ServiceKey::tcp(at("10.0.0.1:80").ip(), 80);
    let leaving = Destination::from(at("10.1.0.1:8080"));
    let staying = Destination::from(at("10.1.0.2:8080"));
    let mut want = Table::new();
    want.insert(Service::new(key), [leaving, staying]);
    assert!(s.sync(&mut c, &want).unwrap().is_complete());
    want.remove_destination(&key, leaving.addr, leaving.port)
        .unwrap();
    (k, c, s, key, leaving, want)
}

#[test]
fn without_counters_set_a_removed_destination_is_deleted_at_once() {
    let (_k, mut c, mut s, key, leaving, want) = set_up();
    let r = s.sync(&mut c, &want).unwrap();
    assert_eq!(
        r.requests(),
        [Request::DeleteDestination(key, leaving.addr, leaving.port)]
    );
}

#[test]
fn with_connections_set_it_drains_at_weight_0_until_they_are_gone() {
    let (k, mut c, mut s, key, leaving, want) = set_up();
    let ns = k.init_netns();
    let idle = Connections::default().with_inactive(2);
    assert!(ns.set_destination_state(&key, leaving.addr, leaving.port, idle, Stats::default()));
    let r = s.sync(&mut c, &want).unwrap();
    assert_eq!(
        r.requests(),
        [Request::EditDestination(key, leaving.with_weight(0))]
    );
    // Still with clients: kept, nothing sent.
    let r = s.sync(&mut c, &want).unwrap();
    assert!(r.requests().is_empty(), "{r}");
    let listed = &ns.service(&key).unwrap().destinations;
    assert_eq!(listed.len(), 2);
    ns.set_destination_state(
        &key,
        leaving.addr,
        leaving.port,
        Connections::default(),
        Stats::default(),
    );
    let r = s.sync(&mut c, &want).unwrap();
    assert_eq!(
        r.requests(),
        [Request::DeleteDestination(key, leaving.addr, leaving.port)]
    );
}
