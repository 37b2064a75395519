//! Requests the kernel handles but answers with nothing at all (a sync
//! daemon's stop whose thread never ran: the handler's `EINTR`, for which
//! netlink sends no reply): a batch that ends with one is closed by a no-op
//! whose ACK ends it, so its outcome is known at once, never a time-out.

use std::time::Duration;

use proptest::prelude::*;

use super::kernel::{apply, Faults, Kernel, Received, Req};
use crate::proto::{Cause, Encode, Limits, Outcome, Session, Wait};

const T: Duration = Duration::from_secs(30);

/// A request as the kernel sees [`Req`], of a kind that may go unanswered
/// (`silent`) or not.
#[derive(Debug, Clone, Copy)]
struct Kind {
    index: u32,
    silent: bool,
}

impl Encode for Kind {
    fn encode(&self, out: &mut Vec<u8>, family: u16, seq: u32, flags: u16) {
        Req(self.index).encode(out, family, seq, flags);
    }
    fn may_go_unanswered(&self) -> bool {
        self.silent
    }
}

fn plain(index: u32) -> Kind {
    Kind {
        index,
        silent: false,
    }
}

fn stop(index: u32) -> Kind {
    Kind {
        index,
        silent: true,
    }
}

/// Nothing is left queued for the next call.
fn nothing_left(k: &mut Kernel) {
    assert!(matches!(k.receive(Wait::Queued), Received::TimedOut));
}

fn wide() -> Limits {
    Limits::new(1 << 20, 64)
}

#[test]
fn a_stop_answered_with_nothing_is_done_at_once() {
    let mut k = Kernel::new(0x23, 100, |i| if i == 1 { libc::EINTR } else { 0 });
    let mut s = Session::new(T);
    s.state.family = Some(0x23);
    let (out, waits) = apply(&mut s, &mut k, &[plain(0), stop(1)], wide());
    assert_eq!(out[&0], Outcome::Done);
    assert_eq!(out[&1], Outcome::Done);
    assert_eq!(waits, [Wait::Up(T)], "one receive: the closer's ACK");
    nothing_left(&mut k);
}

#[test]
fn without_the_closer_such_a_request_would_wait_out_the_timeout() {
    // The kernel's side of it: a last request that asks for an ACK and
    // gets nothing leaves the batch unknown after the time-out.
    let mut k = Kernel::new(0x23, 100, |i| if i == 1 { libc::EINTR } else { 0 });
    let mut s = Session::new(T);
    s.state.family = Some(0x23);
    let (out, _) = apply(&mut s, &mut k, &[plain(0), plain(1)], wide());
    assert_eq!(out[&1], Outcome::Unknown(Cause::TimedOut(T)));
}

#[test]
fn a_refused_stop_keeps_its_errno_and_leaves_nothing_queued() {
    let mut k = Kernel::new(0x23, 100, |_| libc::ESRCH);
    let mut s = Session::new(T);
    s.state.family = Some(0x23);
    let (out, waits) = apply(&mut s, &mut k, &[stop(0)], wide());
    assert_eq!(out[&0], Outcome::Refused(libc::ESRCH));
    assert_eq!(waits, [Wait::Up(T); 2], "its error, then the closer's ACK");
    nothing_left(&mut k);
    // The session goes on as usual.
    let mut k = Kernel::new(0x23, 100, |_| 0);
    let (out, _) = apply(&mut s, &mut k, &[plain(0)], wide());
    assert_eq!(out[&0], Outcome::Done);
}

#[test]
fn only_the_last_request_of_a_batch_needs_the_closer() {
    // Silent stops inside batches of two are done; the batches whose last
    // is a stop are closed, the others end on their last ACK.
    let verdict = |i: u32| if i % 3 == 0 { libc::EINTR } else { 0 };
    let mut k = Kernel::new(0x23, 100, verdict);
    let mut s = Session::new(T);
    s.state.family = Some(0x23);
    let requests: Vec<Kind> = (0..12)
        .map(|i| if i % 3 == 0 { stop(i) } else { plain(i) })
        .collect();
    let (out, waits) = apply(&mut s, &mut k, &requests, Limits::new(1 << 20, 2));
    assert!(out.values().all(|o| *o == Outcome::Done), "{out:?}");
    assert_eq!(waits.len(), 6, "one wait per batch: {waits:?}");
    nothing_left(&mut k);
}

#[test]
fn a_closer_lost_to_an_overrun_ends_with_the_barrier() {
    // Replies 1-2 are the lookup's; 3 is the closer's ACK, dropped.
    let mut k = Kernel::new(0x23, 100, |_| libc::EINTR);
    k.faults.drop_replies = [3].into();
    let mut s = Session::new(T);
    let (out, waits) = apply(&mut s, &mut k, &[stop(0)], wide());
    assert_eq!(out[&0], Outcome::Unknown(Cause::RepliesDropped));
    assert!(waits.contains(&Wait::Queued), "{waits:?}");
    nothing_left(&mut k);
}

#[test]
fn a_stop_sent_again_under_a_new_family_id_is_closed_too() {
    // The session's id is stale: the kernel refuses the stop as no such
    // family, the id is looked up, the stop goes again and is handled
    // silently.
    let mut k = Kernel::new(0x23, 100, |_| libc::EINTR);
    let mut s = Session::new(T);
    s.state.family = Some(0x22);
    let (out, _) = apply(&mut s, &mut k, &[plain(0), stop(1)], wide());
    assert_eq!(out[&0], Outcome::Done);
    assert_eq!(out[&1], Outcome::Done);
    assert_eq!(s.family(), Some(0x23));
    assert!(k.received(1));
    nothing_left(&mut k);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Whatever the mix, with no faults every outcome is known and true,
    /// and no receive waits out the time-out; with faults, an outcome is
    /// still never false (a request not sent never reached the kernel).
    #[test]
    fn every_outcome_is_known_when_nothing_fails(
        kinds in proptest::collection::vec((any::<bool>(), 0usize..3), 1..50),
        batch_requests in 1usize..10,
        batch_bytes in 16usize..1024,
        faulty in any::<bool>(),
        drop_replies in proptest::collection::hash_set(1usize..60, 0..4),
    ) {
        // A silent kind is done (0), refused (ESRCH) or done silently
        // (EINTR); another kind is done or refused.
        let table: Vec<i32> = kinds
            .iter()
            .map(|&(silent, v)| match (silent, v) {
                (_, 0) => 0,
                (true, 2) => libc::EINTR,
                _ => libc::ESRCH,
            })
            .collect();
        let requests: Vec<Kind> = kinds
            .iter()
            .enumerate()
            .map(|(i, &(silent, _))| Kind { index: i as u32, silent })
            .collect();
        let mut k = Kernel::new(0x23, 1000, move |i| table[i as usize]);
        if faulty {
            k.faults = Faults { drop_replies, ..Faults::default() };
        }
        let mut s = Session::new(T);
        let (out, _) = apply(&mut s, &mut k, &requests, Limits::new(batch_bytes, batch_requests));
        for (i, o) in &out {
            let v = k.last_verdict(*i as u32);
            match o {
                Outcome::Done => prop_assert!(matches!(v, Some(0 | libc::EINTR)), "{} {:?}", i, v),
                Outcome::Refused(e) => prop_assert_eq!(Some(*e), v),
                Outcome::Unknown(c) => {
                    prop_assert!(faulty, "request {} unknown ({:?}) with no fault", i, c);
                    prop_assert_eq!(*c, Cause::RepliesDropped);
                }
                // Dropped replies can fail the family lookup itself (its
                // few tries each dropped): then nothing is sent, truly.
                Outcome::NotSent(c) => prop_assert!(
                    faulty && *c == Cause::RepliesDropped && !k.received(*i as u32),
                    "request {} not sent: {:?}",
                    i,
                    c
                ),
            }
        }
    }
}
