//! Requests the kernel handles but answers with nothing at all (a sync
//! daemon's stop whose thread never ran: the handler's `EINTR`, for which
//! netlink sends no reply; the emulator's [`Fault::Unanswered`]): a batch
//! that ends with one is closed by a no-op whose ACK ends it, so its
//! outcome is known at once, never a time-out.

use std::time::Duration;

use proptest::prelude::*;

use super::driver::{add, key, Socket};
use crate::emulator::{Fault, Kernel, When};
use crate::proto::tests::driver::apply;
use crate::proto::{Cause, Limits, Outcome, Session, Wait};
use crate::{DaemonRole, Request, RequestKind, SyncDaemon};

const T: Duration = Duration::from_secs(30);

fn start() -> Request {
    Request::start_daemon(SyncDaemon::new(DaemonRole::Master, "lo"))
}

fn stop() -> Request {
    Request::StopDaemon(DaemonRole::Master)
}

/// A kernel whose master sync daemon runs.
fn running() -> Kernel {
    let k = Kernel::new();
    assert_eq!(k.init_netns().apply(&[start()]), [0]);
    k
}

/// The next stop is done and answered with nothing.
fn silent_stop(k: &Kernel) {
    k.inject(When::next(RequestKind::StopDaemon), Fault::Unanswered);
}

/// Nothing is left queued for the next call.
fn nothing_left(sock: &mut Socket) {
    assert_eq!(sock.receive_one(), None);
}

fn wide() -> Limits {
    Limits::new(1 << 20, 64)
}

#[test]
fn a_stop_answered_with_nothing_is_done_at_once() {
    let k = running();
    silent_stop(&k);
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    s.state.family = k.family_id();
    let (out, waits) = apply(&mut s, &mut sock, &[add(0), stop()], wide());
    assert_eq!(out[&0], Outcome::Done);
    assert_eq!(out[&1], Outcome::Done);
    assert_eq!(waits, [Wait::Up(T)], "one receive: the closer's ACK");
    nothing_left(&mut sock);
    assert!(k.init_netns().sync_daemons().is_empty(), "stopped");
    let stops: Vec<_> = k
        .requests()
        .into_iter()
        .filter(|t| t.kind == Some(RequestKind::StopDaemon))
        .collect();
    assert_eq!(stops[0].errno, Some(libc::EINTR));
}

#[test]
fn without_the_closer_such_a_request_would_wait_out_the_timeout() {
    // The kernel's side of it: a last request that asks for an ACK and
    // gets nothing leaves the batch unknown after the time-out.
    let k = Kernel::new();
    let key1 = key(1);
    k.inject(
        When::request(move |t| t.service == Some(key1)),
        Fault::Unanswered,
    );
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    s.state.family = k.family_id();
    let (out, _) = apply(&mut s, &mut sock, &[add(0), add(1)], wide());
    assert_eq!(out[&1], Outcome::Unknown(Cause::TimedOut(T)));
    assert_eq!(k.init_netns().table().len(), 2, "both done");
}

#[test]
fn a_refused_stop_keeps_its_errno_and_leaves_nothing_queued() {
    let k = Kernel::new();
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    s.state.family = k.family_id();
    let (out, waits) = apply(&mut s, &mut sock, &[stop()], wide());
    assert_eq!(out[&0], Outcome::Refused(libc::ESRCH));
    assert_eq!(waits, [Wait::Up(T); 2], "its error, then the closer's ACK");
    nothing_left(&mut sock);
    // The session goes on as usual.
    let (out, _) = apply(&mut s, &mut sock, &[add(0)], wide());
    assert_eq!(out[&0], Outcome::Done);
}

#[test]
fn only_the_last_request_of_a_batch_needs_the_closer() {
    // Silent stops inside batches of two are done; the batches whose last
    // is a stop are closed, the others end on their last ACK. Another
    // program starts the daemon again before each stop but the first
    // (the race in which a stop goes unanswered).
    let k = running();
    let requests: Vec<Request> = (0..12)
        .map(|i| if i % 3 == 0 { stop() } else { add(i) })
        .collect();
    for i in [2, 5, 8] {
        let before = key(i);
        k.inject(
            When::request(move |t| t.service == Some(before)),
            Fault::Foreign(vec![start()]),
        );
    }
    for _ in 0..4 {
        silent_stop(&k);
    }
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    s.state.family = k.family_id();
    let (out, waits) = apply(&mut s, &mut sock, &requests, Limits::new(1 << 20, 2));
    assert!(out.values().all(|o| *o == Outcome::Done), "{out:?}");
    assert_eq!(waits.len(), 6, "one wait per batch: {waits:?}");
    nothing_left(&mut sock);
    assert_eq!(k.faults_armed(), 0);
}

#[test]
fn a_closer_lost_to_an_overrun_ends_with_the_barrier() {
    let k = running();
    silent_stop(&k);
    // The closer: the one message of no family.
    k.inject(When::request(|t| t.kind.is_none()), Fault::Overrun);
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    let (out, waits) = apply(&mut s, &mut sock, &[stop()], wide());
    assert_eq!(out[&0], Outcome::Unknown(Cause::RepliesDropped));
    assert!(waits.contains(&Wait::Queued), "{waits:?}");
    nothing_left(&mut sock);
}

#[test]
fn a_stop_under_a_stale_family_id_is_closed_and_the_next_one_too() {
    // The session's id is stale: the kernel refuses the batch as no such
    // family, its closer is answered all the same, the id is looked up:
    // changed, so nothing of it reached IPVS, and nothing is sent again.
    let k = Kernel::new();
    let stale = k.family_id();
    k.reload_module();
    assert_eq!(k.init_netns().apply(&[start()]), [0]);
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    s.state.family = stale;
    let (out, _) = apply(&mut s, &mut sock, &[add(0), stop()], wide());
    let changed = Outcome::NotSent(Cause::FamilyChanged);
    assert_eq!((out[&0], out[&1]), (changed, changed));
    assert_eq!(s.family(), k.family_id());
    assert_eq!(k.init_netns().sync_daemons().len(), 1);
    nothing_left(&mut sock);
    // Under the new id, the stop is handled silently and closed.
    silent_stop(&k);
    let (out, _) = apply(&mut s, &mut sock, &[add(0), stop()], wide());
    assert_eq!((out[&0], out[&1]), (Outcome::Done, Outcome::Done));
    assert!(k.init_netns().sync_daemons().is_empty());
    nothing_left(&mut sock);
}

/// One kind of request of the property: an add (new: done; else a
/// delete of a service there is not: `ESRCH`), or a stop of the master
/// daemon, done (0: after a start in the same list), done silently (2:
/// the same, the stop unanswered) or refused (1: none runs, `ESRCH`).
fn requests_of(kinds: &[(bool, usize)]) -> (Vec<Request>, Vec<i32>, Vec<Fault>) {
    let mut requests = Vec::new();
    let mut verdicts = Vec::new();
    // One fault for each stop, in order (a no-op: another writer that
    // writes nothing).
    let mut at_stops = Vec::new();
    for (i, &(silent, v)) in kinds.iter().enumerate() {
        let i = i as u32;
        match (silent, v) {
            (false, 0) => {
                requests.push(add(i));
                verdicts.push(0);
            }
            (false, _) => {
                requests.push(Request::DeleteService(key(i)));
                verdicts.push(libc::ESRCH);
            }
            (true, 1) => {
                requests.push(stop());
                verdicts.push(libc::ESRCH);
                at_stops.push(Fault::Foreign(Vec::new()));
            }
            (true, v) => {
                requests.push(start());
                verdicts.push(0);
                requests.push(stop());
                if v == 2 {
                    verdicts.push(libc::EINTR);
                    at_stops.push(Fault::Unanswered);
                } else {
                    verdicts.push(0);
                    at_stops.push(Fault::Foreign(Vec::new()));
                }
            }
        }
    }
    (requests, verdicts, at_stops)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Whatever the mix, with no faults every outcome is known and true,
    /// and no receive waits out the time-out; with faults (replies of
    /// adds or of the first closer lost to an overrun), an outcome is
    /// still never false.
    #[test]
    fn every_outcome_is_known_when_nothing_fails(
        kinds in proptest::collection::vec((any::<bool>(), 0usize..3), 1..50),
        batch_requests in 1usize..10,
        batch_bytes in 16usize..1024,
        faulty in any::<bool>(),
        overruns in proptest::collection::hash_set(0u32..50, 0..4),
        closer_overrun in any::<bool>(),
    ) {
        let (requests, verdicts, at_stops) = requests_of(&kinds);
        let k = Kernel::new();
        for f in at_stops {
            k.inject(When::next(RequestKind::StopDaemon), f);
        }
        if faulty {
            for i in overruns {
                let key = key(i);
                k.inject(When::request(move |t| t.service == Some(key)), Fault::Overrun);
            }
            if closer_overrun {
                k.inject(When::request(|t| t.kind.is_none()), Fault::Overrun);
            }
        }
        let mut sock = Socket::new(&k);
        let mut s = Session::new(T);
        let (out, _) = apply(&mut s, &mut sock, &requests, Limits::new(batch_bytes, batch_requests));
        let table = k.init_netns().table();
        for (i, o) in &out {
            let v = verdicts[*i];
            match o {
                Outcome::Done => {
                    prop_assert!(v == 0 || v == libc::EINTR, "{} {:?}", i, v);
                    if let Some(key) = requests[*i].service_key() {
                        prop_assert!(table.iter().any(|e| *e.key() == key), "{} done, not there", i);
                    }
                }
                Outcome::Refused(e) => prop_assert_eq!(*e, v),
                Outcome::Unknown(c) => {
                    prop_assert!(faulty, "request {} unknown ({:?}) with no fault", i, c);
                    prop_assert_eq!(*c, Cause::RepliesDropped);
                }
                o => prop_assert!(false, "request {}: {:?}", i, o),
            }
        }
        if !faulty {
            prop_assert_eq!(sock.stalls, 0);
        }
    }
}
