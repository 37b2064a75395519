//! The pipelined apply: ACK accounting, refusals, overruns at every
//! position, time-outs, socket failures, the family looked up again.

use std::collections::BTreeMap;
use std::time::Duration;

use super::driver::{add, answered, apply, key, run, Socket};
use crate::emulator::{Fault, Kernel, When};
use crate::proto::{Cause, Limits, Outcome, Session, Wait};
use crate::{Request, RequestKind};

const T: Duration = Duration::from_secs(30);

fn every_fifth(i: u32) -> i32 {
    if i % 5 == 2 {
        libc::EEXIST
    } else {
        0
    }
}

/// Requests `0..n` about items `from..`, answered as `verdict` says.
fn requests(k: &Kernel, from: u32, n: u32, verdict: impl Fn(u32) -> i32) -> Vec<Request> {
    (0..n).map(|i| answered(k, from + i, verdict(i))).collect()
}

/// Strikes at the first request about item `i`.
fn at(i: u32) -> When {
    let key = key(i);
    When::request(move |t| t.service == Some(key))
}

#[test]
fn refusals_and_acks_are_accounted_per_request() {
    let k = Kernel::new();
    let reqs = requests(&k, 0, 100, every_fifth);
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    let (out, waits) = apply(&mut s, &mut sock, &reqs, Limits::new(256, 64));
    for (i, o) in &out {
        let want = match every_fifth(*i as u32) {
            0 => Outcome::Done,
            e => Outcome::Refused(e),
        };
        assert_eq!(*o, want, "request {i}");
    }
    assert_eq!(s.family(), Some(sock.family()));
    assert!(waits.iter().all(|w| *w == Wait::Up(T)), "{waits:?}");
    // Done is applied: every new service is listed.
    assert_eq!(k.init_netns().table().len(), 100);
}

#[test]
fn an_overrun_leaves_unseen_replies_unknown_never_refused() {
    // Every request refused, a queue of 5 replies: most errors dropped.
    let k = Kernel::new();
    let reqs = requests(&k, 0, 40, |_| libc::EEXIST);
    k.inject(When::next_request(), Fault::QueueLimit(5));
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    let (out, waits) = apply(&mut s, &mut sock, &reqs, Limits::new(1 << 20, 40));
    let refused = out
        .values()
        .filter(|o| **o == Outcome::Refused(libc::EEXIST));
    let unknown = out
        .values()
        .filter(|o| **o == Outcome::Unknown(Cause::RepliesDropped));
    assert_eq!(refused.count() + unknown.count(), 40, "{out:?}");
    assert!(out
        .values()
        .all(|o| !matches!(o, Outcome::Refused(libc::ENOBUFS))));
    // The queue was read out without waiting, then the barrier's ACK
    // waited the full time-out (never a short drain wait).
    assert!(waits.contains(&Wait::Queued));
    assert!(waits
        .iter()
        .all(|w| matches!(w, Wait::Queued | Wait::Up(T))));
    // The next apply on the same session and socket works and waits
    // normally.
    let reqs = requests(&k, 100, 3, |_| 0);
    let (out, waits) = apply(&mut s, &mut sock, &reqs, Limits::new(1 << 20, 40));
    assert!(out.values().all(|o| *o == Outcome::Done));
    assert_eq!(waits, [Wait::Up(T)]);
}

#[test]
fn an_overrun_at_every_position_of_a_batch() {
    // Twelve requests, the even ones refused: six errors and the last
    // one's ACK, seven replies. Drop each in turn (and, the socket being
    // congested then, every reply after it).
    let n = 12u32;
    let verdict = |i: u32| if i % 2 == 0 { libc::ESRCH } else { 0 };
    let answering = [0, 2, 4, 6, 8, 10, 11];
    for lost in answering {
        let k = Kernel::new();
        let reqs = requests(&k, 0, n, verdict);
        k.inject(at(lost), Fault::Overrun);
        let mut sock = Socket::new(&k);
        let mut s = Session::new(T);
        let (out, _) = apply(&mut s, &mut sock, &reqs, Limits::new(1 << 20, n as usize));
        let listed = k.init_netns().table();
        for (i, o) in &out {
            let i = *i as u32;
            match o {
                Outcome::Done => {
                    assert_eq!(verdict(i), 0, "request {i}, dropping reply of {lost}");
                    assert!(listed.iter().any(|e| *e.key() == key(i)));
                }
                Outcome::Refused(e) => assert_eq!(*e, verdict(i)),
                Outcome::Unknown(Cause::RepliesDropped) => {}
                other => panic!("request {i}: {other:?}"),
            }
        }
        let unknown = out.values().filter(|o| !o.is_known()).count();
        assert!(unknown >= 1, "dropping the reply of {lost}: {out:?}");
    }
}

#[test]
fn a_later_batch_is_smaller_after_an_overrun() {
    let k = Kernel::new();
    let reqs = requests(&k, 0, 64, |_| libc::EEXIST);
    k.inject(When::next_request(), Fault::QueueLimit(4));
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    let skip = vec![false; 64];
    let mut sink = |_: usize, _: Outcome| {};
    let mut m = s.apply(&reqs, &skip, Limits::new(1 << 20, 32), &mut sink);
    run(&mut m, &mut sock, 100_000);
    assert!(m.batch_requests() < 32, "{}", m.batch_requests());
    drop(m);
    // Reading the queue out found it empty, often: no wait ran out.
    assert!(!s.wants_fresh_socket());
}

#[test]
fn a_time_out_makes_the_batch_unknown_and_the_rest_not_sent() {
    let k = Kernel::new();
    let reqs = requests(&k, 0, 30, |_| 0);
    // The kernel runs ten, then stops answering.
    k.inject(When::nth_change(11), Fault::Stall);
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    assert!(!s.wants_fresh_socket());
    let (out, _) = apply(&mut s, &mut sock, &reqs, Limits::new(1 << 20, 8));
    assert!(s.wants_fresh_socket(), "a wait ran out");
    for (i, o) in &out {
        let want = match i {
            0..=7 => Outcome::Done,
            8..=15 => Outcome::Unknown(Cause::TimedOut(T)),
            _ => Outcome::NotSent(Cause::TimedOut(T)),
        };
        assert_eq!(*o, want, "request {i}");
        assert_eq!(sock.ran(*i as u32), *i < 10, "request {i}");
        assert_eq!(sock.received(*i as u32), *i < 16, "request {i}");
    }
}

#[test]
fn socket_failures_stop_the_apply_with_what_is_known() {
    // The second batch cannot be sent: it and the rest are not sent.
    let k = Kernel::new();
    let reqs = requests(&k, 0, 20, |_| 0);
    k.inject(at(8), Fault::SendFails(libc::ENOBUFS));
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    let (out, _) = apply(&mut s, &mut sock, &reqs, Limits::new(1 << 20, 8));
    for (i, o) in &out {
        let want = if *i < 8 {
            Outcome::Done
        } else {
            Outcome::NotSent(Cause::Socket(libc::ENOBUFS))
        };
        assert_eq!(*o, want, "request {i}");
        assert_eq!(sock.received(*i as u32), *i < 8, "request {i}");
    }
    // A receive fails: the batch in flight is unknown.
    let k = Kernel::new();
    let reqs = requests(&k, 0, 20, |_| 0);
    k.inject(at(0), Fault::ReceiveFails(libc::EBADF));
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    let (out, _) = apply(&mut s, &mut sock, &reqs, Limits::new(1 << 20, 8));
    for (i, o) in &out {
        let want = if *i < 8 {
            Outcome::Unknown(Cause::Socket(libc::EBADF))
        } else {
            Outcome::NotSent(Cause::Socket(libc::EBADF))
        };
        assert_eq!(*o, want, "request {i}");
    }
}

#[test]
fn a_truncated_or_garbled_reply_is_not_a_guess() {
    for fault in [Fault::Truncate, Fault::Garbage] {
        let k = Kernel::new();
        let reqs = requests(&k, 0, 6, |i| if i == 3 { libc::EEXIST } else { 0 });
        // The batch's first reply: the error for request 3.
        k.inject(at(3), fault.clone());
        let mut sock = Socket::new(&k);
        let mut s = Session::new(T);
        let (out, _) = apply(&mut s, &mut sock, &reqs, Limits::new(1 << 20, 6));
        assert_eq!(
            out[&3],
            Outcome::Unknown(Cause::BadReply),
            "{fault:?} {out:?}"
        );
        assert_eq!(out[&5], Outcome::Done, "the last one's ACK was read");
        assert!((0..3).all(|i| out[&i] == Outcome::Unknown(Cause::BadReply)));
    }
}

#[test]
fn strangers_and_late_replies_are_passed_over() {
    let k = Kernel::new();
    let reqs = requests(&k, 0, 50, every_fifth);
    k.inject(When::next(RequestKind::ResolveFamily), Fault::Stray);
    for i in (0..50).step_by(2) {
        k.inject(at(i), Fault::Stray);
    }
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    s.set_last_seq(u32::MAX - 20); // and numbers wrap on the way
    let (out, _) = apply(&mut s, &mut sock, &reqs, Limits::new(1 << 20, 16));
    for (i, o) in &out {
        let want = match every_fifth(*i as u32) {
            0 => Outcome::Done,
            e => Outcome::Refused(e),
        };
        assert_eq!(*o, want, "request {i}");
    }
    assert_eq!(k.faults_armed(), 0, "every stranger came");
}

/// An `NLMSG_ERROR` answering `seq` (0: an ACK), as the kernel frames it.
fn error(seq: u32, errno: i32) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&36u32.to_ne_bytes());
    v.extend_from_slice(&ipvsnl_wire::netlink_packet_core::NLMSG_ERROR.to_ne_bytes());
    v.extend_from_slice(&0x100u16.to_ne_bytes()); // NLM_F_CAPPED
    v.extend_from_slice(&seq.to_ne_bytes());
    v.extend_from_slice(&4321u32.to_ne_bytes());
    v.extend_from_slice(&(-errno).to_ne_bytes());
    for word in [16u32, 0, seq, 0] {
        v.extend_from_slice(&word.to_ne_bytes());
    }
    v
}

#[test]
fn errors_in_any_order_before_the_ack() {
    use crate::proto::{Input, Machine, Poll};
    let requests: Vec<Request> = (0..6).map(add).collect();
    let skip = vec![false; 6];
    let mut s = Session::new(T);
    s.state.family = Some(0x23);
    let mut out = BTreeMap::new();
    let mut sink = |i: usize, o: Outcome| assert!(out.insert(i, o).is_none());
    let mut m = s.apply(&requests, &skip, Limits::new(1 << 20, 6), &mut sink);
    assert!(matches!(m.poll(), Poll::Transmit(_)));
    m.handle(Input::Sent);
    // Numbers 1..=6; errors for 4, then 2, then the ACK of 6.
    for d in [error(4, libc::ESRCH), error(2, libc::EEXIST), error(6, 0)] {
        assert!(matches!(m.poll(), Poll::Receive(_)));
        m.handle(Input::Datagram(&d));
    }
    assert_eq!(m.poll(), Poll::Finished);
    drop(m);
    let got: Vec<Outcome> = out.into_values().collect();
    use Outcome::{Done, Refused};
    assert_eq!(
        got,
        [
            Done,
            Refused(libc::EEXIST),
            Done,
            Refused(libc::ESRCH),
            Done,
            Done
        ]
    );
}

#[test]
fn a_reloaded_module_is_looked_up_again_and_the_apply_ends_family_changed() {
    let k = Kernel::new();
    let cached = k.family_id();
    k.reload_module();
    let reqs = requests(&k, 0, 20, every_fifth);
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    s.state.family = cached; // before the reload
    let (out, _) = apply(&mut s, &mut sock, &reqs, Limits::new(1 << 20, 8));
    assert_ne!(s.family(), cached);
    assert_eq!(s.family(), k.family_id());
    // The first batch refused as stale, the rest not sent: none of it
    // reached the reloaded module, none of it is sent to it.
    assert_eq!(out.len(), 20);
    for (i, o) in &out {
        assert_eq!(*o, Outcome::NotSent(Cause::FamilyChanged), "request {i}");
    }
    assert_eq!(k.requests().iter().filter(|t| t.is_change()).count(), 8);
    // A real ENOENT (a missing scheduler) with the id unchanged stays a
    // refusal, after one look-up; at the first request of a batch or
    // after others, and the apply goes on.
    let reqs = requests(&k, 100, 3, |_| libc::ENOENT);
    let (out, _) = apply(&mut s, &mut sock, &reqs, Limits::new(1 << 20, 8));
    assert!(out.values().all(|o| *o == Outcome::Refused(libc::ENOENT)));
    let verdict = |i| if i % 4 == 2 { libc::ENOENT } else { 0 };
    let reqs = requests(&k, 200, 12, verdict);
    let (out, _) = apply(&mut s, &mut sock, &reqs, Limits::new(1 << 20, 4));
    for (i, o) in &out {
        let want = match verdict(*i as u32) {
            0 => Outcome::Done,
            e => Outcome::Refused(e),
        };
        assert_eq!(*o, want, "request {i}");
    }
    // Unloaded and not back: not applied, IPVS unavailable.
    k.set_autoload(false);
    k.unload_module();
    let reqs: Vec<Request> = (300..310).map(add).collect();
    let (out, _) = apply(&mut s, &mut sock, &reqs, Limits::new(1 << 20, 4));
    assert!(out
        .values()
        .all(|o| *o == Outcome::NotSent(Cause::Unavailable)));
    assert_eq!(s.family(), None);
}

#[test]
fn a_stale_refusal_whose_lookup_fails_is_not_called_a_refusal() {
    // The module reloaded under the session's cached id: every request of
    // the batch is refused with ENOENT. The lookup that would tell a stale
    // id from a real refusal fails; the requests were not applied, but
    // whether IPVS refused them is unknown, and the lookup's error is kept.
    let lookup_failures = [
        (Fault::Refuse(libc::EPERM), Cause::FamilyLookup(libc::EPERM)),
        (Fault::LoseReply, Cause::TimedOut(T)),
    ];
    for (fault, cause) in lookup_failures {
        let k = Kernel::new();
        let cached = k.family_id();
        k.reload_module();
        k.inject(When::next(RequestKind::ResolveFamily), fault);
        let reqs: Vec<Request> = (0..6).map(add).collect();
        let mut sock = Socket::new(&k);
        let mut s = Session::new(T);
        s.state.family = cached;
        let (out, _) = apply(&mut s, &mut sock, &reqs, Limits::new(1 << 20, 4));
        let unconfirmed = Outcome::FamilyUnconfirmed {
            errno: libc::ENOENT,
            lookup: cause,
        };
        // The first batch was refused so; the second was never sent.
        assert!((0..4).all(|i| out[&i] == unconfirmed), "{cause:?}: {out:?}");
        assert!(
            (4..6).all(|i| out[&i] == Outcome::NotSent(cause)),
            "{out:?}"
        );
        assert!(!out.values().any(|o| matches!(o, Outcome::Refused(_))));
        assert!(k.init_netns().table().is_empty());
    }
}

#[test]
fn abandoned_while_looking_the_family_up_again_nothing_is_called_refused() {
    use crate::proto::{Input, Machine, Poll};
    let k = Kernel::new();
    let cached = k.family_id();
    k.reload_module();
    let reqs: Vec<Request> = (0..3).map(add).collect();
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    s.state.family = cached;
    let mut out = BTreeMap::new();
    let mut sink = |i: usize, o: Outcome| assert!(out.insert(i, o).is_none());
    let mut m = s.apply(&reqs, &[false; 3], Limits::new(1 << 20, 8), &mut sink);
    let Poll::Transmit(batch) = m.poll() else {
        panic!("the batch goes first")
    };
    let batch = batch.to_vec();
    sock.transmit(&batch).unwrap();
    m.handle(Input::Sent);
    // Its refusals are read; then the lookup is due, and the caller
    // gives up.
    while let Poll::Receive(_) = m.poll() {
        let d = sock.receive_one().expect("a refusal");
        m.handle(Input::Datagram(&d));
    }
    assert!(matches!(m.poll(), Poll::Transmit(_)));
    drop(m);
    let unconfirmed = Outcome::FamilyUnconfirmed {
        errno: libc::ENOENT,
        lookup: Cause::Abandoned,
    };
    assert_eq!(out.len(), 3);
    assert!(out.values().all(|o| *o == unconfirmed), "{out:?}");
}

#[test]
fn abandoning_an_apply_reports_what_is_known() {
    use crate::proto::{Input, Machine, Poll};
    let requests: Vec<Request> = (0..10).map(add).collect();
    let skip = vec![false; 10];
    let mut s = Session::new(T);
    s.state.family = Some(0x23);
    let mut out = BTreeMap::new();
    let mut sink = |i: usize, o: Outcome| assert!(out.insert(i, o).is_none());
    let mut m = s.apply(&requests, &skip, Limits::new(1 << 20, 4), &mut sink);
    assert!(matches!(m.poll(), Poll::Transmit(_)));
    m.handle(Input::Sent);
    drop(m); // the caller gave up while the first batch was with the kernel
    assert_eq!(out.len(), 10);
    assert!((0..4).all(|i| out[&i] == Outcome::Unknown(Cause::Abandoned)));
    assert!((4..10).all(|i| out[&i] == Outcome::NotSent(Cause::Abandoned)));
    // The session goes on: the next apply's numbers are new.
    assert!(s.last_seq() >= 4);
}

#[test]
fn skipped_requests_get_no_outcome_and_nothing_is_sent_for_none() {
    let requests: Vec<Request> = (0..3).map(add).collect();
    let mut s = Session::new(T);
    let mut n = 0;
    let mut sink = |_: usize, _: Outcome| n += 1;
    let mut m = s.apply(&requests, &[true; 3], Limits::new(1 << 20, 4), &mut sink);
    let k = Kernel::new();
    let mut sock = Socket::new(&k);
    run(&mut m, &mut sock, 10);
    drop(m);
    assert_eq!(n, 0);
    assert!(k.requests().is_empty(), "{:?}", k.requests());
}
