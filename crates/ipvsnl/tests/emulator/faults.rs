//! The faults a daemon lives with, injected into the emulated kernel, and
//! what the library makes of them: lost replies are unknown outcomes, not
//! refusals; an overrun, a truncated datagram, a writer between dump
//! parts still give a whole listing; a reloaded or unloaded module; the
//! sync engine and the watcher through all of it.

use crate::ip;
use std::net::IpAddr;
use std::time::Duration;

use ipvsnl::emulator::{Fault, Kernel, Taken, When};
use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
use ipvsnl::{AsyncClient, Client, Destination, Request, RequestKind, Service, ServiceKey};

fn key(i: u16) -> ServiceKey {
    ServiceKey::tcp(IpAddr::from([10, 0, (i >> 8) as u8, i as u8]), 80)
}

/// Services 1..=n with two destinations each.
fn table(n: u16) -> Table {
    let mut t = Table::new();
    for i in 1..=n {
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

fn kernel_with(n: u16) -> Kernel {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    let r = Syncer::new(PlanOptions::new(Scope::All))
        .sync(&mut c, &table(n))
        .unwrap();
    assert!(r.is_complete(), "{r}");
    k
}

#[test]
fn a_lost_reply_is_an_unknown_outcome_and_the_wait_is_the_clients_timeout() {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    k.inject(When::next(RequestKind::AddService), Fault::LoseReply);
    let e = c.add_service(&Service::new(key(1))).unwrap_err();
    assert!(e.is_unknown_outcome(), "{e}");
    assert!(!e.is_refused(), "{e}");
    assert_eq!(k.waited(), c.options().timeout());
    // Applied all the same; the client is in step for the next call.
    assert_eq!(c.services().unwrap().len(), 1);
}

#[test]
fn an_overrun_in_a_batch_leaves_outcomes_unknown_never_refused() {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    let requests: Vec<Request> = (1..=40)
        .map(|i| Request::add_service(Service::new(key(i))))
        .collect();
    k.inject(When::nth_change(20), Fault::Overrun);
    let outcomes = c.apply(&requests);
    assert_eq!(outcomes.len(), 40);
    for o in &outcomes {
        if let Err(e) = o {
            assert!(e.is_unknown_outcome() || e.is_not_sent(), "{e}");
        }
    }
    // What is reported done is in the table.
    let listed = c.services().unwrap();
    for (r, o) in requests.iter().zip(&outcomes) {
        if o.is_ok() {
            let k = r.service_key().unwrap();
            assert!(
                listed.iter().any(|e| *e.key() == k),
                "{k} done but not listed"
            );
        }
    }
}

#[test]
fn a_listing_with_an_overrun_part_is_still_whole() {
    let k = kernel_with(200);
    let mut c = Client::emulated(&k);
    // The service dump comes in two parts of services (read with 32 KiB
    // buffers: 101 services a part) and its `NLMSG_DONE`: the second is
    // lost. (Not the `NLMSG_DONE`: the kernel makes a part only when the
    // socket has room for it, and never drops one; the emulator's fault
    // stands for a part of the answer lost all the same.)
    k.inject(When::DumpPart(2), Fault::Overrun);
    let listed = c.table().unwrap();
    assert_eq!(listed.len(), 200);
    assert!(listed.iter().all(|e| e.destinations.len() == 2));
    assert_eq!(k.faults_armed(), 0, "the overrun struck");
}

#[test]
fn a_truncated_dump_part_is_a_decode_error_not_a_short_listing() {
    let k = kernel_with(200);
    let mut c = Client::emulated(&k);
    k.inject(When::DumpPart(3), Fault::Truncate);
    let e = c.services().unwrap_err();
    assert!(e.is_decode(), "{e}");
    assert!(e.to_string().contains("did not fit"), "{e}");
    // The client is in step: the next listing is whole.
    assert_eq!(c.services().unwrap().len(), 200);
}

#[test]
fn a_writer_between_dump_parts_does_not_leave_a_listing_with_holes() {
    let k = kernel_with(200);
    let mut c = Client::emulated(&k);
    // Another program deletes the first listed service while the listing
    // is under way: a dump resumed by count skips one that exists.
    let first = *k.init_netns().table()[0].key();
    k.inject(
        When::DumpPart(2),
        Fault::Foreign(vec![Request::DeleteService(first)]),
    );
    let listed = c.services().unwrap();
    let now: Vec<ServiceKey> = k.init_netns().table().iter().map(|e| *e.key()).collect();
    let got: Vec<ServiceKey> = listed.iter().map(|e| *e.key()).collect();
    for key in &now {
        assert!(got.contains(key), "{key} exists and was not listed");
    }
}

#[test]
fn a_stalled_kernel_times_out_once_per_call() {
    let k = kernel_with(3);
    let mut c = Client::emulated(&k);
    k.inject(When::next(RequestKind::ListServices), Fault::Stall);
    let e = c.services().unwrap_err();
    assert!(e.is_timeout(), "{e}");
    assert_eq!(k.waited(), c.options().timeout());
}

#[test]
fn an_unloaded_module_is_unavailable_and_with_autoload_comes_back_empty() {
    let k = kernel_with(3);
    let mut c = Client::emulated(&k);
    let first = c.family_id().unwrap();
    k.set_autoload(false);
    k.unload_module();
    let e = c.services().unwrap_err();
    assert!(e.is_unavailable(), "{e}");
    k.set_autoload(true);
    assert!(c.services().unwrap().is_empty());
    assert_ne!(c.family_id().unwrap(), first);
}

#[test]
fn a_sync_converges_over_a_foreign_writer_between_two_calls() {
    let k = kernel_with(20);
    let mut c = Client::emulated(&k);
    let mut s = Syncer::new(PlanOptions::new(Scope::All));
    let want = table(20);
    assert!(s.sync(&mut c, &want).unwrap().requests().is_empty());
    // Another program deletes a destination and adds a service; the next
    // cached sync plans from a view that is no longer true.
    let ns = k.init_netns();
    let stray = ServiceKey::tcp(ip("10.8.0.1"), 80);
    let errs = ns.apply(&[
        Request::DeleteDestination(key(5), ip("10.9.0.1"), 80),
        Request::add_service(Service::new(stray)),
    ]);
    assert_eq!(errs, [0, 0]);
    let mut tries = 0;
    loop {
        tries += 1;
        let r = s.sync(&mut c, &want).unwrap();
        if r.is_complete() && r.requests().is_empty() {
            break;
        }
        assert!(tries < 4, "no convergence: {r}");
    }
    assert!(s.list(&mut c).unwrap().same_settings(&want));
}

#[test]
fn the_record_shows_each_request_with_its_answer() {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    let svc = Service::new(key(1));
    c.add_service(&svc).unwrap();
    let _ = c.add_service(&svc);
    let taken: Vec<(Option<RequestKind>, Option<i32>)> = k
        .requests()
        .iter()
        .map(|t: &Taken| (t.kind, t.errno))
        .collect();
    assert_eq!(
        taken,
        [
            (Some(RequestKind::ResolveFamily), Some(0)),
            (Some(RequestKind::AddService), Some(0)),
            (Some(RequestKind::AddService), Some(libc::EEXIST)),
        ]
    );
    assert_eq!(
        k.requests()[1].request,
        Some(Request::add_service(svc.clone()))
    );
}

#[test]
fn an_async_call_dropped_while_its_send_is_held_leaves_the_client_usable() {
    let k = Kernel::new();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let mut c = AsyncClient::emulated(&k);
            c.family_id().await.unwrap();
            k.inject(When::next(RequestKind::AddService), Fault::Hold);
            let held = tokio::time::timeout(
                Duration::from_millis(20),
                c.add_service(&Service::new(key(1))),
            )
            .await;
            assert!(held.is_err(), "the held send finished");
            assert!(k.init_netns().table().is_empty(), "held, not sent");
            c.add_service(&Service::new(key(2))).await.unwrap();
            assert_eq!(c.services().await.unwrap().len(), 1);
        });
}

#[test]
fn the_watcher_sees_what_another_writer_does() {
    let k = kernel_with(2);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let mut w = AsyncClient::emulated(&k).watch(Duration::from_millis(5));
            let first = w.next().await.unwrap();
            assert!(first.first);
            assert_eq!(first.changes.len(), 2);
            k.init_netns().apply(&[Request::DeleteService(key(1))]);
            let next = w.next().await.unwrap();
            assert_eq!(next.changes.len(), 1, "{:?}", next.changes);
            assert_eq!(*next.changes[0].service(), key(1));
        });
}
