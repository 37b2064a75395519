//! A dump that ends early (its caller wants no more, a reply it cannot
//! decode, a caller that drops it), with the kernel handing several
//! datagrams to one receive as a real socket's `recvmmsg` does: the end of
//! the dump is read wherever it comes, so no later call waits for an end
//! already read (on a real socket, a whole time-out).

use std::time::Duration;

use super::items::{write, Items};
use super::kernel::{run, Kernel, Req};
use crate::proto::{CallKind, Cause, Failure, Limits, Outcome, Session};

const T: Duration = Duration::from_secs(30);

fn dump(s: &mut Session, k: &mut Kernel, items: Items) -> (Result<(), Failure>, Vec<u32>) {
    let mut call = s.call(CallKind::Dump, write, items);
    run(&mut call, k, 10_000);
    let r = call.result().expect("finished");
    let got = std::mem::take(&mut call.replies().got);
    (r, got)
}

/// A kernel listing `items` items, `per_part` to a datagram, two
/// datagrams to a receive; its DONE alone or in the last part.
fn kernel(items: u32, per_part: u32, done_in_last_part: bool) -> Kernel {
    let mut k = Kernel::new(0x23, 100, |_| 0);
    k.dump_items = items;
    k.per_part = per_part;
    k.per_receive = 2;
    k.done_in_last_part = done_in_last_part;
    k
}

#[test]
fn a_dump_stopped_at_its_first_item_leaves_nothing_to_wait_for() {
    // 1, 5 and 11 items in one part (the kernel's page holds about a
    // dozen services), or in parts of 3; the DONE alone or with the last.
    for items in [1, 5, 11] {
        for per_part in [3, 12] {
            for done_in_last_part in [false, true] {
                let case =
                    format!("{items} items, {per_part} a part, DONE in last {done_in_last_part}");
                let mut k = kernel(items, per_part, done_in_last_part);
                let mut s = Session::new(T);
                let stop = Items {
                    stop_after: Some(1),
                    ..Items::default()
                };
                let (r, got) = dump(&mut s, &mut k, stop);
                r.unwrap();
                assert_eq!(got, [0], "{case}");
                // The next listing gets every item, without one receive
                // that waited in vain.
                let (r, got) = dump(&mut s, &mut k, Items::default());
                r.unwrap();
                assert_eq!(got, (0..items).collect::<Vec<_>>(), "{case}");
                assert_eq!(
                    k.stalls, 0,
                    "{case}: a receive waited for a reply already read"
                );
                assert_eq!(k.busy, 0, "{case}");
                assert_eq!(s.unfinished_dump(), None, "{case}");
            }
        }
    }
}

#[test]
fn a_decode_error_in_the_first_datagram_leaves_nothing_to_wait_for() {
    for items in [1, 5, 11, 40] {
        let mut k = kernel(items, 12, false);
        let mut s = Session::new(T);
        let bad = Items {
            fail_at: Some(0),
            ..Items::default()
        };
        let (r, _) = dump(&mut s, &mut k, bad);
        assert!(
            matches!(r, Err(Failure::Malformed(ref d)) if d.to_string().contains("item 0")),
            "{r:?}"
        );
        let (r, got) = dump(&mut s, &mut k, Items::default());
        r.unwrap();
        assert_eq!(got.len(), items as usize);
        assert_eq!(k.stalls, 0, "{items} items");
    }
}

#[test]
fn a_dump_dropped_unread_is_read_out_without_waiting() {
    // Dropped after its request was sent, before anything was read (an
    // async caller's time-out): the next call reads the queue out and
    // goes on; an empty queue means the dump is over.
    for items in [0, 5, 40] {
        let mut k = kernel(items, 12, false);
        let mut s = Session::new(T);
        s.state.family = Some(0x23);
        send_and_drop(&mut s, &mut k);
        assert!(s.unfinished_dump().is_some());
        let (r, got) = dump(&mut s, &mut k, Items::default());
        r.unwrap();
        assert_eq!(got.len(), items as usize);
        assert_eq!((k.stalls, k.busy), (0, 0), "{items} items");
    }
}

#[test]
fn an_apply_or_a_lookup_that_reads_a_dumps_end_frees_the_socket() {
    for lookup in [false, true] {
        // A short dump whose parts and DONE are queued before the next
        // call's answers: its call was dropped before reading any.
        let mut k = kernel(5, 12, true);
        let mut s = Session::new(T);
        s.state.family = Some(0x23);
        send_and_drop(&mut s, &mut k);
        assert!(s.unfinished_dump().is_some());
        if lookup {
            let mut m = s.resolve_family();
            run(&mut m, &mut k, 100);
            m.result().unwrap().unwrap();
        } else {
            let reqs = [Req(1), Req(2)];
            let mut seen = Vec::new();
            let mut m = s.apply(&reqs, &[false, false], Limits::new(65536, 64), |i, o| {
                seen.push((i, o))
            });
            run(&mut m, &mut k, 100);
            drop(m);
            assert_eq!(seen, [(0, Outcome::Done), (1, Outcome::Done)]);
        }
        assert_eq!(
            s.unfinished_dump(),
            None,
            "lookup {lookup}: the DONE was read"
        );
        let (r, got) = dump(&mut s, &mut k, Items::default());
        r.unwrap();
        assert_eq!(got.len(), 5);
        assert_eq!((k.stalls, k.busy), (0, 0), "lookup {lookup}");
    }
}

/// Sends a dump request on `s` and drops its call before reading.
fn send_and_drop(s: &mut Session, k: &mut Kernel) {
    use crate::proto::{Input, Machine, Poll};
    let mut call = s.call(CallKind::Dump, write, Items::default());
    let Poll::Transmit(bytes) = call.poll() else {
        unreachable!()
    };
    let bytes = bytes.to_vec();
    k.transmit(&bytes).unwrap();
    call.handle(Input::Sent);
}

#[test]
fn a_refused_family_lookup_is_not_a_refusal_of_the_call() {
    let mut k = kernel(3, 12, false);
    k.refuse_lookup = Some(libc::EPERM);
    let mut s = Session::new(T);
    let (r, _) = dump(&mut s, &mut k, Items::default());
    assert!(
        matches!(r, Err(Failure::NotSent(Cause::FamilyLookup(libc::EPERM)))),
        "{r:?}"
    );
    let e = crate::Error::of_failure(
        crate::Target::new(crate::RequestKind::ListServices, crate::Object::Table),
        r.unwrap_err(),
    );
    assert!(!e.is_refused(), "{e}");
    assert!(e.to_string().contains("IPVS family"), "{e}");
}
