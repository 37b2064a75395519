//! The emulated socket's own faults, through the library's client: a
//! receive queue that overflows, a send or a receive that fails, a
//! garbled datagram, a stranger's message; a daemon's stop answered with
//! nothing; and the dump framing IPVS never uses.

use std::net::IpAddr;

use ipvsnl::emulator::{DumpQuirk, Fault, Kernel, When};
use ipvsnl::{Client, DaemonRole, Request, RequestKind, Service, ServiceKey, SyncDaemon};

fn key(i: u16) -> ServiceKey {
    ServiceKey::tcp(IpAddr::from([10, 2, (i >> 8) as u8, i as u8]), 80)
}

fn with_services(n: u16) -> Kernel {
    let k = Kernel::new();
    let adds: Vec<Request> = (1..=n)
        .map(|i| Request::add_service(Service::new(key(i))))
        .collect();
    assert!(k.init_netns().apply(&adds).iter().all(|e| *e == 0));
    k
}

#[test]
fn a_full_receive_queue_loses_replies_as_unknown_never_as_refusals() {
    let k = with_services(40);
    let mut c = Client::emulated(&k);
    c.services().unwrap(); // the family looked up
    k.inject(When::next_request(), Fault::QueueLimit(4));
    // Forty adds of services there are: forty errors for a queue of 4.
    let again: Vec<Request> = (1..=40)
        .map(|i| Request::add_service(Service::new(key(i))))
        .collect();
    let outcomes = c.apply(&again);
    let refused = outcomes
        .iter()
        .filter(|o| matches!(o, Err(e) if e.is_refused()));
    let unknown = outcomes
        .iter()
        .filter(|o| matches!(o, Err(e) if e.is_unknown_outcome()));
    let (refused, unknown) = (refused.count(), unknown.count());
    assert!(unknown > 0, "the queue overflowed");
    assert!(refused >= 4, "what fitted was read: {refused}");
    assert_eq!(refused + unknown, 40);
    for o in &outcomes {
        if let Err(e) = o {
            assert!(!e.is_refused() || e.errno() == Some(libc::EEXIST), "{e}");
        }
    }
    // The socket took replies again once read empty: the client goes on.
    c.add_service(&Service::new(key(41))).unwrap();
    assert_eq!(c.services().unwrap().len(), 41);
}

#[test]
fn a_failed_send_is_not_sent_and_a_failed_receive_unknown() {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    k.inject(
        When::next(RequestKind::AddService),
        Fault::SendFails(libc::ENOBUFS),
    );
    let e = c.add_service(&Service::new(key(1))).unwrap_err();
    assert!(e.is_not_sent(), "{e}");
    assert!(k.init_netns().table().is_empty());
    k.inject(
        When::next(RequestKind::AddService),
        Fault::ReceiveFails(libc::EFAULT),
    );
    let e = c.add_service(&Service::new(key(1))).unwrap_err();
    assert!(e.is_unknown_outcome(), "{e}");
    assert_eq!(k.init_netns().table().len(), 1, "it was run");
    assert_eq!(k.faults_armed(), 0);
}

#[test]
fn a_garbled_part_fails_the_listing_and_the_next_is_whole() {
    let k = with_services(200);
    let mut c = Client::emulated(&k);
    k.inject(When::DumpPart(2), Fault::Garbage);
    let e = c.services().unwrap_err();
    assert!(e.is_decode(), "{e}");
    assert_eq!(c.services().unwrap().len(), 200);
}

#[test]
fn strangers_messages_are_passed_over() {
    let k = with_services(200);
    let mut c = Client::emulated(&k);
    k.inject(When::next(RequestKind::ResolveFamily), Fault::Stray);
    k.inject(When::next(RequestKind::AddService), Fault::Stray);
    k.inject(When::DumpPart(2), Fault::Stray);
    c.add_service(&Service::new(key(201))).unwrap();
    assert_eq!(c.services().unwrap().len(), 201);
    assert_eq!(k.faults_armed(), 0, "every stranger came");
}

#[test]
fn a_stop_answered_with_nothing_is_done() {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    c.start_sync_daemon(&SyncDaemon::new(DaemonRole::Master, "lo"))
        .unwrap();
    k.inject(When::next(RequestKind::StopDaemon), Fault::Unanswered);
    c.stop_sync_daemon(DaemonRole::Master).unwrap();
    assert!(k.init_netns().sync_daemons().is_empty());
    assert_eq!(k.waited(), std::time::Duration::ZERO, "no wait ran out");
    let stop = k
        .requests()
        .into_iter()
        .find(|t| t.kind == Some(RequestKind::StopDaemon))
        .unwrap();
    assert_eq!(stop.errno, Some(libc::EINTR));
    // Refused, a stop is answered as usual.
    k.inject(When::next(RequestKind::StopDaemon), Fault::Unanswered);
    let e = c.stop_sync_daemon(DaemonRole::Master).unwrap_err();
    assert_eq!(e.errno(), Some(libc::ESRCH), "{e}");
}

#[test]
fn dump_quirks_another_family_may_show() {
    let k = with_services(100);
    let mut c = Client::emulated(&k);
    // Interrupted: taken again, whole.
    k.inject(When::DumpPart(1), Fault::DumpQuirk(DumpQuirk::Interrupted));
    assert_eq!(c.services().unwrap().len(), 100);
    let dumps = k.requests().iter().filter(|t| t.dump).count();
    assert_eq!(dumps, 2, "the dump was taken again");
    // The DONE with the last part: whole, nothing left to wait for.
    k.inject(
        When::DumpPart(1),
        Fault::DumpQuirk(DumpQuirk::DoneWithLastPart),
    );
    assert_eq!(c.services().unwrap().len(), 100);
    assert_eq!(c.services().unwrap().len(), 100);
    assert_eq!(k.waited(), std::time::Duration::ZERO);
    // A DONE carrying an error: the listing fails with it.
    k.inject(
        When::DumpPart(1),
        Fault::DumpQuirk(DumpQuirk::DoneErrno(libc::EMSGSIZE)),
    );
    let e = c.services().unwrap_err();
    assert_eq!(e.errno(), Some(libc::EMSGSIZE), "{e}");
    assert_eq!(c.services().unwrap().len(), 100);
}

#[test]
fn faults_counted_from_their_arming_strike_at_their_own_changes() {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    k.inject(When::nth_change(2), Fault::Refuse(libc::EPERM));
    k.inject(When::nth_change(4), Fault::Refuse(libc::EACCES));
    let errnos: Vec<Option<i32>> = (1..=5)
        .map(|i| {
            c.add_service(&Service::new(key(i)))
                .err()
                .and_then(|e| e.errno())
        })
        .collect();
    assert_eq!(
        errnos,
        [None, Some(libc::EPERM), None, Some(libc::EACCES), None]
    );
}
