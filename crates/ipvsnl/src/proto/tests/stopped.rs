//! A dump that ends early (its caller wants no more, a reply it cannot
//! decode, a caller that drops it), with two datagrams to a receive as
//! the client's `recvmmsg` takes them: the end of the dump is read
//! wherever it comes, so no later call waits for an end already read (on
//! a real socket, a whole time-out).

use std::time::Duration;

use super::call::dump;
use super::driver::{add, kernel_with, run, Socket};
use super::items::{write, Items};
use crate::emulator::{DumpQuirk, Fault, When};
use crate::proto::{CallKind, Cause, Failure, Limits, Outcome, Session};
use crate::{Request, RequestKind};

const T: Duration = Duration::from_secs(30);

/// A socket into a kernel listing `items` services, two datagrams to a
/// receive; the next `quirky` dumps' DONE in their last part (IPVS sends
/// it alone; another family may not).
fn socket(items: u32, quirky: usize) -> Socket {
    let k = kernel_with(items);
    for _ in 0..quirky {
        k.inject(
            When::DumpPart(1),
            Fault::DumpQuirk(DumpQuirk::DoneWithLastPart),
        );
    }
    let mut sock = Socket::new(&k);
    sock.per_receive = 2;
    sock
}

#[test]
fn a_dump_stopped_at_its_first_item_leaves_nothing_to_wait_for() {
    // In one part (a page holds a dozen services and more) or in several;
    // the DONE alone or with the last part.
    for items in [1, 5, 11, 60] {
        for done_with_last_part in [false, true] {
            let case = format!("{items} items, DONE in last part {done_with_last_part}");
            let mut sock = socket(items, if done_with_last_part { 2 } else { 0 });
            let listing = sock.listing();
            let mut s = Session::new(T);
            let stop = Items {
                stop_after: Some(1),
                ..Items::default()
            };
            let (r, items) = dump(&mut s, &mut sock, stop);
            r.unwrap();
            assert_eq!(items.got, listing[..1], "{case}");
            // The next listing gets every item, without one receive that
            // waited in vain.
            let (r, items) = dump(&mut s, &mut sock, Items::default());
            r.unwrap();
            assert_eq!(items.got, listing, "{case}");
            assert_eq!(
                sock.stalls, 0,
                "{case}: a receive waited for a reply already read"
            );
            assert_eq!(sock.busy(), 0, "{case}");
            assert_eq!(s.unfinished_dump(), None, "{case}");
        }
    }
}

#[test]
fn a_decode_error_in_the_first_datagram_leaves_nothing_to_wait_for() {
    for items in [1, 5, 11, 40] {
        let mut sock = socket(items, 0);
        let first = sock.listing()[0];
        let mut s = Session::new(T);
        let (r, _) = dump(&mut s, &mut sock, Items::failing_at(Some(first)));
        let item = format!("item {first}");
        assert!(
            matches!(r, Err(Failure::Malformed(ref d)) if d.to_string().contains(&item)),
            "{r:?}"
        );
        let (r, got) = dump(&mut s, &mut sock, Items::default());
        r.unwrap();
        assert_eq!(got.got.len(), items as usize);
        assert_eq!(sock.stalls, 0, "{items} items");
    }
}

#[test]
fn a_dump_dropped_unread_is_read_out_without_waiting() {
    // Dropped after its request was sent, before anything was read (an
    // async caller's time-out): the next call reads the queue out and
    // goes on; an empty queue means the dump is over.
    for items in [0, 5, 40] {
        let mut sock = socket(items, 0);
        let mut s = Session::new(T);
        s.state.family = sock.kernel.family_id();
        send_and_drop(&mut s, &mut sock);
        assert!(s.unfinished_dump().is_some());
        let (r, got) = dump(&mut s, &mut sock, Items::default());
        r.unwrap();
        assert_eq!(got.got.len(), items as usize);
        assert_eq!((sock.stalls, sock.busy()), (0, 0), "{items} items");
    }
}

#[test]
fn an_apply_or_a_lookup_that_reads_a_dumps_end_frees_the_socket() {
    for lookup in [false, true] {
        // A short dump whose part and DONE are queued before the next
        // call's answers: its call was dropped before reading any.
        let mut sock = socket(5, 1);
        let mut s = Session::new(T);
        s.state.family = sock.kernel.family_id();
        send_and_drop(&mut s, &mut sock);
        assert!(s.unfinished_dump().is_some());
        if lookup {
            let mut m = s.resolve_family();
            run(&mut m, &mut sock, 100);
            m.result().unwrap().unwrap();
        } else {
            let reqs: [Request; 2] = [add(100), add(101)];
            let mut seen = Vec::new();
            let mut m = s.apply(&reqs, &[false, false], Limits::new(65536, 64), |i, o| {
                seen.push((i, o))
            });
            run(&mut m, &mut sock, 100);
            drop(m);
            assert_eq!(seen, [(0, Outcome::Done), (1, Outcome::Done)]);
        }
        assert_eq!(
            s.unfinished_dump(),
            None,
            "lookup {lookup}: the DONE was read"
        );
        let (r, got) = dump(&mut s, &mut sock, Items::default());
        r.unwrap();
        assert_eq!(got.got.len(), if lookup { 5 } else { 7 });
        assert_eq!((sock.stalls, sock.busy()), (0, 0), "lookup {lookup}");
    }
}

/// Sends a dump request on `s` and drops its call before reading.
fn send_and_drop(s: &mut Session, sock: &mut Socket) {
    use crate::proto::{Input, Machine, Poll};
    let mut call = s.call(CallKind::Dump, write, Items::default());
    let Poll::Transmit(bytes) = call.poll() else {
        unreachable!()
    };
    let bytes = bytes.to_vec();
    sock.transmit(&bytes).unwrap();
    call.handle(Input::Sent);
}

#[test]
fn a_refused_family_lookup_is_not_a_refusal_of_the_call() {
    let mut sock = socket(3, 0);
    sock.kernel.inject(
        When::next(RequestKind::ResolveFamily),
        Fault::Refuse(libc::EPERM),
    );
    let mut s = Session::new(T);
    let (r, _) = dump(&mut s, &mut sock, Items::default());
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
