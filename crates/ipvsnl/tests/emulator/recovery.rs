//! A client after a kernel that stopped answering on its socket (the hang
//! of a netlink socket a controller meets in the field): the call that
//! timed out reports what is not known, and the next call goes out on a
//! fresh socket, so the client converges without being made again.

use std::net::IpAddr;

use ipvsnl::emulator::{Fault, Kernel, When};
use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
use ipvsnl::{AsyncClient, Client, Destination, RequestKind, Service, ServiceKey};

use crate::ip;

fn key(i: u8) -> ServiceKey {
    ServiceKey::tcp(IpAddr::from([10, 0, 0, i]), 80)
}

/// Three services with two destinations each: nine changes from empty.
fn want() -> Table {
    let mut t = Table::new();
    for i in 1..=3 {
        t.insert(
            Service::new(key(i)),
            [
                Destination::new(ip("10.9.0.1"), 80),
                Destination::new(ip("10.9.0.2"), 80),
            ],
        );
    }
    t
}

#[test]
fn a_sync_after_a_stalled_socket_converges_on_a_fresh_one() {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    let mut s = Syncer::new(PlanOptions::new(Scope::All));
    let timeout = c.options().timeout();
    // The kernel stops answering on the client's socket at the 4th change
    // (taken, not run).
    k.inject(When::nth_change(4), Fault::Stall);
    let r = s.sync(&mut c, &want()).unwrap();
    // What was in flight was unknown; read back on a fresh socket, it was
    // found not applied and sent again there, in the same sync.
    assert!(!r.unknown().is_empty(), "{r}");
    assert!(r.is_complete(), "{r}");
    assert_eq!(k.waited(), timeout, "one wait ran out, once");
    assert_eq!(k.init_netns().table().len(), 3);
    let r = s.sync(&mut c, &want()).unwrap();
    assert!(r.is_complete() && r.requests().is_empty(), "{r}");
    assert_eq!(k.waited(), timeout);
}

#[test]
fn a_read_that_timed_out_is_followed_by_one_on_a_fresh_socket() {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    c.add_service(&Service::new(key(1))).unwrap();
    k.inject(When::next(RequestKind::GetInfo), Fault::Stall);
    let e = c.info().unwrap_err();
    assert!(e.is_timeout() && !e.is_refused(), "{e}");
    let waited = k.waited();
    c.info().unwrap();
    c.add_service(&Service::new(key(2))).unwrap();
    assert_eq!(c.services().unwrap().len(), 2);
    assert_eq!(k.waited(), waited);
    // A change that timed out is unknown; the next one is answered.
    k.inject(When::next(RequestKind::AddService), Fault::Stall);
    let e = c.add_service(&Service::new(key(3))).unwrap_err();
    assert!(e.is_unknown_outcome() && e.is_timeout(), "{e}");
    c.add_service(&Service::new(key(4))).unwrap();
    // The stall took the add without running it.
    let listed: Vec<ServiceKey> = c.services().unwrap().iter().map(|e| *e.key()).collect();
    assert!(!listed.contains(&key(3)), "{listed:?}");
    assert!(listed.contains(&key(4)), "{listed:?}");
}

#[test]
fn a_service_dump_that_timed_out_is_followed_by_one_on_a_fresh_socket() {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    c.add_service(&Service::new(key(1))).unwrap();
    k.inject(When::next(RequestKind::ListServices), Fault::Stall);
    assert!(c.services().unwrap_err().is_timeout());
    let waited = k.waited();
    assert_eq!(c.services().unwrap().len(), 1);
    assert_eq!(c.table().unwrap().len(), 1);
    assert_eq!(k.waited(), waited);
}

#[tokio::test]
async fn the_async_client_moves_to_a_fresh_socket_too() {
    let k = Kernel::new();
    let mut c = AsyncClient::emulated(&k);
    let mut s = Syncer::new(PlanOptions::new(Scope::All));
    k.inject(When::nth_change(2), Fault::Stall);
    let r = s.sync_async(&mut c, &want()).await.unwrap();
    assert!(!r.is_complete(), "{r}");
    let waited = k.waited();
    let r = s.sync_async(&mut c, &want()).await.unwrap();
    assert!(r.is_complete(), "{r}");
    assert_eq!(k.waited(), waited);
    assert_eq!(k.init_netns().table().len(), 3);
}
