//! The pipelined apply: ACK accounting, refusals, overruns at every
//! position, time-outs, socket failures, the family looked up again.

use std::collections::BTreeMap;
use std::time::Duration;

use super::kernel::{apply, run, Kernel, Req};
use crate::proto::{Cause, Limits, Outcome, Session, Wait};

const T: Duration = Duration::from_secs(30);

fn reqs(n: u32) -> Vec<Req> {
    (0..n).map(Req).collect()
}

fn every_fifth(i: u32) -> i32 {
    if i % 5 == 2 {
        libc::EEXIST
    } else {
        0
    }
}

#[test]
fn refusals_and_acks_are_accounted_per_request() {
    let mut k = Kernel::new(0x23, 1000, every_fifth);
    let mut s = Session::new(T);
    let (out, waits) = apply(&mut s, &mut k, &reqs(100), Limits::new(256, 64));
    for (i, o) in &out {
        let want = match every_fifth(*i as u32) {
            0 => Outcome::Done,
            e => Outcome::Refused(e),
        };
        assert_eq!(*o, want, "request {i}");
    }
    assert_eq!(s.family(), Some(0x23));
    assert!(waits.iter().all(|w| *w == Wait::Up(T)), "{waits:?}");
}

#[test]
fn an_overrun_leaves_unseen_replies_unknown_never_refused() {
    // Every request refused, a buffer of 5 replies: most errors dropped.
    let mut k = Kernel::new(0x23, 5, |_| libc::EEXIST);
    let mut s = Session::new(T);
    let (out, waits) = apply(&mut s, &mut k, &reqs(40), Limits::new(1 << 20, 40));
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
    // The next apply on the same session works and waits normally.
    let mut k2 = Kernel::new(0x23, 1000, |_| 0);
    let (out, waits) = apply(&mut s, &mut k2, &reqs(3), Limits::new(1 << 20, 40));
    assert!(out.values().all(|o| *o == Outcome::Done));
    assert_eq!(waits, [Wait::Up(T)]);
}

#[test]
fn an_overrun_at_every_position_of_a_batch() {
    // Twelve requests, the even ones refused: six errors and the last
    // one's ACK, seven replies. Drop each in turn (and, the socket being
    // congested then, every reply after it).
    let n = 12u32;
    for lost in 1..=7 {
        let mut k = Kernel::new(0x23, 1000, |i| if i % 2 == 0 { libc::ESRCH } else { 0 });
        let mut s = Session::new(T);
        // The lookup's two replies come first: numbers 1 and 2.
        k.faults.drop_replies = [lost + 2].into();
        let (out, _) = apply(&mut s, &mut k, &reqs(n), Limits::new(1 << 20, n as usize));
        for (i, o) in &out {
            let v = k.last_verdict(*i as u32).unwrap();
            match o {
                Outcome::Done => assert_eq!(v, 0, "request {i}, dropping reply {lost}"),
                Outcome::Refused(e) => assert_eq!(*e, v),
                Outcome::Unknown(Cause::RepliesDropped) => {}
                other => panic!("request {i}: {other:?}"),
            }
        }
        let unknown = out.values().filter(|o| !o.is_known()).count();
        assert!(unknown >= 1, "dropping reply {lost}: {out:?}");
    }
}

#[test]
fn a_later_batch_is_smaller_after_an_overrun() {
    let mut k = Kernel::new(0x23, 4, |_| libc::EEXIST);
    let mut s = Session::new(T);
    let requests = reqs(64);
    let skip = vec![false; 64];
    let mut sink = |_: usize, _: Outcome| {};
    let mut m = s.apply(&requests, &skip, Limits::new(1 << 20, 32), &mut sink);
    run(&mut m, &mut k, 100_000);
    assert!(m.batch_requests() < 32, "{}", m.batch_requests());
}

#[test]
fn a_time_out_makes_the_batch_unknown_and_the_rest_not_sent() {
    let mut k = Kernel::new(0x23, 1000, |_| 0);
    k.faults.hang_after = Some(10);
    let mut s = Session::new(T);
    let (out, _) = apply(&mut s, &mut k, &reqs(30), Limits::new(1 << 20, 8));
    for (i, o) in &out {
        let want = match i {
            0..=7 => Outcome::Done,
            8..=15 => Outcome::Unknown(Cause::TimedOut(T)),
            _ => Outcome::NotSent(Cause::TimedOut(T)),
        };
        assert_eq!(*o, want, "request {i}");
        // The kernel took ten, then stopped answering.
        assert_eq!(k.received(*i as u32), *i < 10, "request {i}");
    }
}

#[test]
fn socket_failures_stop_the_apply_with_what_is_known() {
    // The second batch cannot be sent: it and the rest are not sent.
    let mut k = Kernel::new(0x23, 1000, |_| 0);
    k.faults.fail_send = Some(3); // lookup, batch 1, batch 2
    let mut s = Session::new(T);
    let (out, _) = apply(&mut s, &mut k, &reqs(20), Limits::new(1 << 20, 8));
    for (i, o) in &out {
        let want = if *i < 8 {
            Outcome::Done
        } else {
            Outcome::NotSent(Cause::Socket(libc::ENOBUFS))
        };
        assert_eq!(*o, want, "request {i}");
    }
    // A receive fails: the batch in flight is unknown.
    let mut k = Kernel::new(0x23, 1000, |_| 0);
    k.faults.fail_recv = Some(3); // lookup reply, lookup ACK, then batch 1
    let mut s = Session::new(T);
    let (out, _) = apply(&mut s, &mut k, &reqs(20), Limits::new(1 << 20, 8));
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
    for garbage in [false, true] {
        let mut k = Kernel::new(0x23, 1000, |i| if i == 3 { libc::EEXIST } else { 0 });
        let mut s = Session::new(T);
        s.forget_family();
        // Lookup: 2 datagrams; then the batch's error for request 3.
        if garbage {
            k.faults.garbage = Some(3);
        } else {
            k.faults.truncate = Some(3);
        }
        let (out, _) = apply(&mut s, &mut k, &reqs(6), Limits::new(1 << 20, 6));
        assert_eq!(out[&3], Outcome::Unknown(Cause::BadReply), "{out:?}");
        assert_eq!(out[&5], Outcome::Done, "the last one's ACK was read");
        assert!((0..3).all(|i| out[&i] == Outcome::Unknown(Cause::BadReply)));
    }
}

#[test]
fn strangers_and_late_replies_are_passed_over() {
    let mut k = Kernel::new(0x23, 1000, every_fifth);
    k.faults.stray_every = Some(2);
    let mut s = Session::new(T);
    s.set_last_seq(u32::MAX - 20); // and numbers wrap on the way
    let (out, _) = apply(&mut s, &mut k, &reqs(50), Limits::new(1 << 20, 16));
    for (i, o) in &out {
        let want = match every_fifth(*i as u32) {
            0 => Outcome::Done,
            e => Outcome::Refused(e),
        };
        assert_eq!(*o, want, "request {i}");
    }
}

#[test]
fn errors_in_any_order_before_the_ack() {
    use super::kernel::error;
    use crate::proto::{Input, Machine, Poll};
    let requests = reqs(6);
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
fn a_reloaded_module_is_looked_up_again_and_the_batch_resent() {
    let mut k = Kernel::new(0x24, 1000, every_fifth);
    let mut s = Session::new(T);
    s.state.family = Some(0x23); // cached before the reload
    let (out, _) = apply(&mut s, &mut k, &reqs(20), Limits::new(1 << 20, 8));
    assert_eq!(s.family(), Some(0x24));
    for (i, o) in &out {
        let want = match every_fifth(*i as u32) {
            0 => Outcome::Done,
            e => Outcome::Refused(e),
        };
        assert_eq!(*o, want, "request {i}");
    }
    // A real ENOENT (a missing scheduler) with the id unchanged stays a
    // refusal, after one look-up.
    let mut k = Kernel::new(0x24, 1000, |_| libc::ENOENT);
    let (out, _) = apply(&mut s, &mut k, &reqs(3), Limits::new(1 << 20, 8));
    assert!(out.values().all(|o| *o == Outcome::Refused(libc::ENOENT)));
    // Unloaded and not back: not applied, IPVS unavailable.
    let mut k = Kernel::new(0x25, 1000, |_| 0);
    k.unregistered = true;
    let (out, _) = apply(&mut s, &mut k, &reqs(10), Limits::new(1 << 20, 4));
    assert!(out
        .values()
        .all(|o| *o == Outcome::NotSent(Cause::Unavailable)));
    assert_eq!(s.family(), None);
}

#[test]
fn abandoning_an_apply_reports_what_is_known() {
    use crate::proto::{Input, Machine, Poll};
    let requests = reqs(10);
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
    let requests = reqs(3);
    let mut s = Session::new(T);
    let mut n = 0;
    let mut sink = |_: usize, _: Outcome| n += 1;
    let mut m = s.apply(&requests, &[true; 3], Limits::new(1 << 20, 4), &mut sink);
    let mut k = Kernel::new(0x23, 10, |_| 0);
    run(&mut m, &mut k, 10);
    drop(m);
    assert_eq!(n, 0);
    assert!(!k.received(0));
}
