//! Gets and dumps: an abandoned dump read out before the next, a dump
//! interrupted, a DONE carrying an error, EBUSY, the family looked up again.

use std::time::Duration;

use super::items::{write, Items};
use super::kernel::{run, Kernel};
use crate::proto::{CallKind, Failure, Session};

const T: Duration = Duration::from_secs(30);

/// Runs one dump on `s` against `k`.
fn dump(s: &mut Session, k: &mut Kernel, items: Items) -> (Result<(), Failure>, Items) {
    let mut call = s.call(CallKind::Dump, write, items);
    run(&mut call, k, 10_000);
    let r = call.result().expect("finished");
    let items = std::mem::take(call.replies());
    (r, items)
}

#[test]
fn a_dump_lists_every_part() {
    let mut k = Kernel::new(0x23, 100, |_| 0);
    k.dump_items = 10;
    let mut s = Session::new(T);
    let (r, items) = dump(&mut s, &mut k, Items::default());
    r.unwrap();
    assert_eq!(items.got, (0..10).collect::<Vec<_>>());
    assert_eq!(s.unfinished_dump(), None);
}

#[test]
fn a_dump_abandoned_half_way_is_read_out_before_the_next() {
    let mut k = Kernel::new(0x23, 100, |_| 0);
    k.dump_items = 10;
    let mut s = Session::new(T);
    // A decode error in the second part ends the call early.
    let (r, _) = dump(
        &mut s,
        &mut k,
        Items {
            fail_at: Some(4),
            ..Items::default()
        },
    );
    assert!(matches!(r, Err(Failure::Malformed(ref d)) if d.to_string().contains("item 4")));
    assert!(s.unfinished_dump().is_some() && k.dump_open());
    // The next dump on the same session gets all of its own, no EBUSY.
    let (r, items) = dump(&mut s, &mut k, Items::default());
    r.unwrap();
    assert_eq!(items.got, (0..10).collect::<Vec<_>>());
    assert_eq!(k.busy, 0);
    assert_eq!(s.unfinished_dump(), None);
    // Dropped by its caller after the first part: the same.
    {
        let mut call = s.call(CallKind::Dump, write, Items::default());
        use crate::proto::{Input, Machine, Poll};
        assert!(matches!(call.poll(), Poll::Transmit(_)));
        let Poll::Transmit(bytes) = call.poll() else {
            unreachable!()
        };
        let bytes = bytes.to_vec();
        k.transmit(&bytes).unwrap();
        call.handle(Input::Sent);
        if let super::kernel::Received::Datagram(d) = k.receive(crate::proto::Wait::Up(T)) {
            call.handle(Input::Datagram(&d));
        }
        assert_eq!(call.replies().got, [0, 1, 2]);
    }
    assert!(s.unfinished_dump().is_some());
    let (r, items) = dump(&mut s, &mut k, Items::default());
    r.unwrap();
    assert_eq!(items.got.len(), 10);
    assert_eq!(k.busy, 0);
}

#[test]
fn without_the_read_out_the_kernel_says_ebusy() {
    // What the read-out prevents, and that EBUSY is a plain refusal.
    let mut k = Kernel::new(0x23, 100, |_| 0);
    k.dump_items = 10;
    let mut s = Session::new(T);
    let (r, _) = dump(
        &mut s,
        &mut k,
        Items {
            fail_at: Some(1),
            ..Items::default()
        },
    );
    assert!(r.is_err());
    s.state.unfinished_dump = None; // as if the session had not kept track
    let (r, _) = dump(&mut s, &mut k, Items::default());
    assert!(matches!(r, Err(Failure::Refused(libc::EBUSY))), "{r:?}");
    assert_eq!(k.busy, 1);
}

#[test]
fn an_interrupted_dump_is_taken_again() {
    let mut k = Kernel::new(0x23, 100, |_| 0);
    k.dump_items = 7;
    k.interrupted_dumps = 2;
    let mut s = Session::new(T);
    let (r, items) = dump(&mut s, &mut k, Items::default());
    r.unwrap();
    assert_eq!(items.restarts, 2);
    assert_eq!(
        items.got,
        (0..7).collect::<Vec<_>>(),
        "only the last pass kept"
    );
    // Interrupted every time: said so, after a bounded number of passes.
    k.interrupted_dumps = u32::MAX;
    let (r, items) = dump(&mut s, &mut k, Items::default());
    assert!(matches!(r, Err(Failure::Interrupted)), "{r:?}");
    assert_eq!(items.restarts, 3);
}

#[test]
fn a_done_carrying_an_error_fails_the_dump() {
    let mut k = Kernel::new(0x23, 100, |_| 0);
    k.dump_items = 4;
    k.done_errno = libc::EMSGSIZE;
    let mut s = Session::new(T);
    let (r, _) = dump(&mut s, &mut k, Items::default());
    assert!(matches!(r, Err(Failure::Refused(libc::EMSGSIZE))), "{r:?}");
    assert_eq!(s.unfinished_dump(), None, "the dump ended");
}

#[test]
fn a_dump_that_times_out_is_left_to_be_read_out() {
    let mut k = Kernel::new(0x23, 100, |_| 0);
    k.dump_items = 0;
    k.faults.hang_after = Some(0);
    let mut s = Session::new(T);
    let (r, _) = dump(&mut s, &mut k, Items::default());
    assert!(matches!(r, Err(Failure::TimedOut(t)) if t == T), "{r:?}");
    assert!(s.unfinished_dump().is_some());
    // The next call waits for that dump's end once, then goes on.
    k.faults.hang_after = None;
    let (r, _) = dump(&mut s, &mut k, Items::default());
    r.unwrap();
}

#[test]
fn a_get_after_a_reload_looks_the_family_up_again() {
    let mut k = Kernel::new(0x30, 100, |_| 0);
    let mut s = Session::new(T);
    s.state.family = Some(0x2f);
    let mut call = s.call(CallKind::Get, write, Items::default());
    run(&mut call, &mut k, 100);
    assert!(call.result().unwrap().is_ok());
    drop(call);
    assert_eq!(s.family(), Some(0x30));
    // Gone for good: unavailable.
    k.unregistered = true;
    k.family = 0x31;
    let mut call = s.call(CallKind::Get, write, Items::default());
    run(&mut call, &mut k, 100);
    assert!(matches!(call.result(), Some(Err(Failure::Unavailable))));
}

#[test]
fn truncated_and_garbled_answers_fail_the_call_in_words() {
    for garbage in [false, true] {
        let mut k = Kernel::new(0x23, 100, |_| 0);
        k.dump_items = 9;
        let mut s = Session::new(T);
        s.state.family = Some(0x23);
        if garbage {
            k.faults.garbage = Some(1);
        } else {
            k.faults.truncate = Some(1);
        }
        let (r, _) = dump(&mut s, &mut k, Items::default());
        assert!(matches!(r, Err(Failure::Malformed(_))), "{r:?}");
        let (r, items) = dump(&mut s, &mut k, Items::default());
        r.unwrap();
        assert_eq!(items.got.len(), 9);
    }
}
