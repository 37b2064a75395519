//! The sync engine against the emulated kernel ([`crate::emulator`]): a
//! sync dropped mid-way, refusals, a kernel that stops answering, the
//! module reloaded between a sync's listing and its apply, a client whose
//! namespace cannot be told.

use std::future::Future;
use std::net::IpAddr;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::time::{Duration, Instant};

use crate::block_on::block_on;
use crate::emulator::{Fault, Kernel, Taken, When};
use crate::sync::emulated::{self, connect, put, TIMEOUT};
use crate::sync::{Drain, Found, PlanOptions, Scope, Syncer, Table};
use crate::{ApplyOptions, Destination, Request, Scheduler, Service, ServiceKey};

fn key(i: u8) -> ServiceKey {
    ServiceKey::tcp(IpAddr::from([10, 0, 0, i]), 80)
}

fn dest(i: u8) -> Destination {
    Destination::new(IpAddr::from([172, 16, 0, i]), 80)
}

fn service(i: u8) -> Service {
    Service::new(key(i)).with_scheduler(Scheduler::RoundRobin)
}

/// Services 1..=n, service i with destination i at weight `weight`.
fn table(n: u8, weight: u32) -> Table {
    (1..=n)
        .map(|i| (service(i), vec![dest(i).with_weight(weight)]))
        .collect()
}

/// A kernel holding `table(n, 1)`, no connections.
fn kernel(n: u8) -> Kernel {
    let k = Kernel::new();
    for i in 1..=n {
        put(&k, service(i), &[(dest(i), 0)]);
    }
    k
}

/// At the next change.
fn next_change() -> When {
    When::request(|t: &Taken| t.is_change())
}

struct Noop;

impl Wake for Noop {
    fn wake(self: Arc<Self>) {}
}

/// Polls `f` once: it must not finish (it waits on something).
fn poll_once(f: impl Future) {
    let waker = Waker::from(Arc::new(Noop));
    let mut cx = Context::from_waker(&waker);
    let f = pin!(f);
    assert!(f.poll(&mut cx).is_pending(), "the future finished");
}

#[test]
fn a_sync_dropped_before_its_weight_0_edit_went_out_has_not_begun_the_drain() {
    let max = Duration::from_millis(50);
    let k = Kernel::new();
    // r1 is busy, r2 idle; r1 leaves.
    put(&k, service(1), &[(dest(1), 5), (dest(2), 0)]);
    k.inject(next_change(), Fault::Hold);
    let mut core = connect(&k, true);
    let mut s = Syncer::new(PlanOptions::default().with_drain(Drain::new(max)));
    let mut want = Table::new();
    want.insert(service(1), [dest(2)]);
    // The sync lists, plans the weight-0 edit, and waits to send it: then
    // it is dropped (an async caller's timeout, say).
    poll_once(s.sync_in(&mut core, &want));
    assert!(emulated::changes(&k).is_empty(), "nothing was sent");
    assert!(
        s.draining().is_empty(),
        "a drain recorded before its edit went out: {:?}",
        s.draining()
    );
    // Longer than the drain's maximum later, the next sync: r1 is still
    // at weight 1 with its connections. It drains now; it is not deleted.
    std::thread::sleep(max + Duration::from_millis(10));
    assert_eq!(k.faults_armed(), 0, "the held datagram was the sync's");
    let began = Instant::now();
    let r = block_on(s.sync_in(&mut core, &want)).unwrap();
    assert!(r.is_complete(), "{r}");
    assert_eq!(
        r.requests(),
        [Request::EditDestination(key(1), dest(1).with_weight(0))]
    );
    assert_eq!(
        emulated::dest(&k, &key(1), dest(1).addr)
            .unwrap()
            .destination
            .weight,
        0
    );
    let since = s.draining().since(&(key(1), dest(1).addr, 80)).unwrap();
    assert!(since >= began, "the drain began with this sync's edit");
}

#[test]
fn a_refused_weight_0_edit_begins_no_drain() {
    let k = Kernel::new();
    put(&k, service(1), &[(dest(1), 5)]);
    k.inject(
        When::next(crate::RequestKind::EditDestination),
        Fault::Refuse(libc::ENOMEM),
    );
    let mut core = connect(&k, true);
    let mut s = Syncer::new(PlanOptions::default().with_drain(Drain::new(TIMEOUT)));
    let mut want = Table::new();
    want.insert(service(1), []);
    let r = block_on(s.sync_in(&mut core, &want)).unwrap();
    assert_eq!(r.failed(), 1, "{r}");
    assert!(s.draining().is_empty(), "{:?}", s.draining());
}

#[test]
fn only_services_the_view_is_unsure_of_are_read_back() {
    let k = kernel(3);
    // Service 2's edit is refused for a reason that leaves it as it was;
    // adding service 4 is refused once as if it existed (as if the view
    // were wrong: it is read back, planned again and added).
    k.inject(
        When::request(
            |t: &Taken| matches!(&t.request, Some(Request::EditDestination(k, _)) if *k == key(2)),
        ),
        Fault::Refuse(libc::EINVAL),
    );
    k.inject(
        When::request(
            |t: &Taken| matches!(&t.request, Some(Request::AddService(s)) if s.key == key(4)),
        ),
        Fault::Refuse(libc::EEXIST),
    );
    let mut core = connect(&k, true);
    let mut s = Syncer::new(PlanOptions::default());
    let want = table(4, 3);
    let r = block_on(s.sync_in(&mut core, &want)).unwrap();
    assert_eq!(r.failed(), 1, "{r}");
    let read: Vec<ServiceKey> = emulated::reads(&k);
    assert_eq!(read, [key(4)], "read back: {read:?}");
    // The view stayed true: a cached sync plans service 2 (unsettled)
    // again from it, without a listing.
    assert_eq!(k.faults_armed(), 0);
    let r = block_on(s.sync_cached_in(&mut core, &want)).unwrap();
    assert!(!r.listed() && r.is_complete(), "{r}");
    assert_eq!(
        r.requests(),
        [Request::EditDestination(key(2), dest(2).with_weight(3))]
    );
    assert_eq!(emulated::services(&k), 4);
}

#[test]
fn a_stalled_kernel_is_read_back_once_and_the_next_sync_lists() {
    let k = kernel(6);
    k.inject(next_change(), Fault::Stall);
    let mut core = connect(&k, true);
    // Batches of two: the first goes out and is never answered (unknown),
    // the other four requests are never sent.
    let mut s = Syncer::new(PlanOptions::default())
        .with_apply_options(ApplyOptions::default().with_max_batch_requests(2));
    let want = table(6, 2);
    let r = block_on(s.sync_in(&mut core, &want)).unwrap();
    assert_eq!(r.failed(), 6, "{r}");
    let not_sent = r.failures().filter(|(_, e)| e.is_not_sent()).count();
    assert_eq!(not_sent, 4, "{r}");
    assert_eq!(r.unknown().len(), 2, "{r}");
    assert!(r.unknown().iter().all(|u| u.found == Found::Unread), "{r}");
    // One read-back went out; it timed out, and no other followed.
    assert_eq!(emulated::reads(&k).len(), 1, "{:?}", k.requests());
    let waited = k.waited();
    assert!(
        waited <= TIMEOUT * 2,
        "waited {waited:?}: the apply's time-out and one read-back's"
    );
    assert!(s.cached().is_none(), "a view that could not be kept true");
}

#[test]
fn a_reload_between_the_listing_and_the_apply_leaves_no_view() {
    let k = kernel(3);
    k.inject(next_change(), Fault::Reload);
    let mut core = connect(&k, true);
    let mut s = Syncer::new(PlanOptions::default());
    let want = table(4, 1);
    // Listed before the reload; its one new service was planned for a
    // table that is gone: not sent to the new, empty one (its
    // destination skipped with it).
    let r = block_on(s.sync_in(&mut core, &want)).unwrap();
    assert!(!r.is_complete(), "{r}");
    assert!(r.failures().all(|(_, e)| e.is_family_changed()), "{r}");
    assert_eq!(emulated::services(&k), 0);
    // The view (four services) is not the kernel's (none): not kept.
    let r = block_on(s.sync_cached_in(&mut core, &want)).unwrap();
    assert!(r.listed(), "{r}");
    assert!(r.is_complete(), "{r}");
    assert_eq!(r.requests().len(), 8, "four services, each with one: {r}");
    assert_eq!(emulated::services(&k), 4);
    // Converged and unchanged since: trusted again.
    let r = block_on(s.sync_cached_in(&mut core, &want)).unwrap();
    assert!(!r.listed() && r.requests().is_empty(), "{r}");
}

#[test]
fn a_client_of_a_namespace_that_cannot_be_told_always_lists() {
    let mut core = connect(&kernel(2), false);
    let mut s = Syncer::new(PlanOptions::default());
    let want = table(2, 1);
    for _ in 0..2 {
        let r = block_on(s.sync_cached_in(&mut core, &want)).unwrap();
        assert!(r.listed() && r.requests().is_empty(), "{r}");
        assert!(s.cached().is_none());
    }
}

#[test]
fn a_scope_of_more_keys_keeps_the_view_unless_a_key_entering_is_in_the_kernel() {
    let k = kernel(3);
    let mut core = connect(&k, true);
    let mut s = Syncer::new(PlanOptions::new(Scope::keys([key(1), key(2)])));
    let mut want = table(2, 1);
    assert!(block_on(s.sync_in(&mut core, &want)).unwrap().is_complete());
    // Service 4 enters the scope and the table: the view stays, the
    // cached sync adds it.
    s.set_options(PlanOptions::new(Scope::keys([key(1), key(2), key(4)])));
    assert!(s.cached().is_some(), "the view kept");
    want.insert(service(4), [dest(4)]);
    let r = block_on(s.sync_cached_in(&mut core, &want)).unwrap();
    assert!(r.is_complete() && !r.listed(), "{r}");
    assert_eq!(r.requests().len(), 2, "{r}");
    assert!(k.init_netns().service(&key(4)).is_some());
    // Service 2 leaves the scope (and the table): the view stays.
    s.set_options(PlanOptions::new(Scope::keys([key(1), key(4)])));
    assert!(s.cached().is_some());
    want.remove(&key(2));
    let r = block_on(s.sync_cached_in(&mut core, &want)).unwrap();
    assert!(r.requests().is_empty() && !r.listed(), "{r}");
    assert!(k.init_netns().service(&key(2)).is_some(), "left alone");
    // Service 3, someone else's, enters: the view, which holds it without
    // its destinations, is dropped; the next sync lists.
    s.set_options(PlanOptions::new(Scope::keys([key(1), key(3), key(4)])));
    assert!(s.cached().is_none(), "the view dropped");
    want.insert(service(3), [dest(3).with_weight(7)]);
    let r = block_on(s.sync_cached_in(&mut core, &want)).unwrap();
    assert!(r.is_complete() && r.listed(), "{r}");
    let found = k.init_netns().service(&key(3)).unwrap();
    assert_eq!(found.destinations[0].destination.weight, 7);
}
