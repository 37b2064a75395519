//! Gets and dumps: an abandoned dump read out before the next, a dump
//! interrupted, a DONE carrying an error, EBUSY, the family looked up again.

use std::time::Duration;

use super::driver::{kernel_with, run, Socket};
use super::items::{write, write_info, Count, Items};
use crate::emulator::{DumpQuirk, Fault, Kernel, When};
use crate::proto::{CallKind, Failure, Session};
use crate::RequestKind;

const T: Duration = Duration::from_secs(30);

/// Runs one service dump on `s` over `sock`.
pub(super) fn dump(
    s: &mut Session,
    sock: &mut Socket,
    items: Items,
) -> (Result<(), Failure>, Items) {
    let mut call = s.call(CallKind::Dump, write, items);
    run(&mut call, sock, 10_000);
    let r = call.result().expect("finished");
    let items = std::mem::take(call.replies());
    (r, items)
}

#[test]
fn a_dump_lists_every_part() {
    let k = kernel_with(60);
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    let (r, items) = dump(&mut s, &mut sock, Items::default());
    r.unwrap();
    assert_eq!(items.got, sock.listing());
    assert_eq!(items.got.len(), 60);
    assert_eq!(s.unfinished_dump(), None);
    // The lookup's reply and ACK, three parts at least, the DONE.
    assert!(sock.datagrams >= 6, "{} datagrams", sock.datagrams);
}

#[test]
fn a_dump_abandoned_half_way_is_read_out_before_the_next() {
    let k = kernel_with(60);
    let mut sock = Socket::new(&k);
    let listing = sock.listing();
    let mut s = Session::new(T);
    // A decode error in the second part ends the call early.
    let bad = listing[40];
    let (r, _) = dump(&mut s, &mut sock, Items::failing_at(Some(bad)));
    let item = format!("item {bad}");
    assert!(matches!(r, Err(Failure::Malformed(ref d)) if d.to_string().contains(&item)));
    assert!(s.unfinished_dump().is_some() && sock.port.dump_open());
    // The next dump on the same session gets all of its own, no EBUSY.
    let (r, items) = dump(&mut s, &mut sock, Items::default());
    r.unwrap();
    assert_eq!(items.got, listing);
    assert_eq!(sock.busy(), 0);
    assert_eq!(s.unfinished_dump(), None);
    // Dropped by its caller after the first part: the same.
    {
        let mut call = s.call(CallKind::Dump, write, Items::default());
        use crate::proto::{Input, Machine, Poll};
        let Poll::Transmit(bytes) = call.poll() else {
            unreachable!()
        };
        let bytes = bytes.to_vec();
        sock.transmit(&bytes).unwrap();
        call.handle(Input::Sent);
        let d = sock.receive_one().expect("the first part");
        call.handle(Input::Datagram(&d));
        let first = call.replies().got.len();
        assert!(first > 1 && first < 60, "{first} in the first part");
        assert_eq!(call.replies().got, listing[..first]);
    }
    assert!(s.unfinished_dump().is_some());
    let (r, items) = dump(&mut s, &mut sock, Items::default());
    r.unwrap();
    assert_eq!(items.got, listing);
    assert_eq!(sock.busy(), 0);
}

#[test]
fn without_the_read_out_the_kernel_says_ebusy() {
    // What the read-out prevents, and that EBUSY is a plain refusal.
    let k = kernel_with(60);
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    let bad = sock.listing()[1];
    let (r, _) = dump(&mut s, &mut sock, Items::failing_at(Some(bad)));
    assert!(r.is_err());
    s.state.unfinished_dump = None; // as if the session had not kept track
    let (r, _) = dump(&mut s, &mut sock, Items::default());
    assert!(matches!(r, Err(Failure::Refused(libc::EBUSY))), "{r:?}");
    assert_eq!(sock.busy(), 1);
}

#[test]
fn an_interrupted_dump_is_taken_again() {
    let k = kernel_with(7);
    for _ in 0..2 {
        k.inject(When::DumpPart(1), Fault::DumpQuirk(DumpQuirk::Interrupted));
    }
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    let (r, items) = dump(&mut s, &mut sock, Items::default());
    r.unwrap();
    assert_eq!(items.restarts, 2);
    assert_eq!(items.got, sock.listing(), "only the last pass kept");
    assert_eq!(k.faults_armed(), 0);
    // Interrupted every time: said so, after a bounded number of passes.
    for _ in 0..10 {
        k.inject(When::DumpPart(1), Fault::DumpQuirk(DumpQuirk::Interrupted));
    }
    let (r, items) = dump(&mut s, &mut sock, Items::default());
    assert!(matches!(r, Err(Failure::Interrupted)), "{r:?}");
    assert_eq!(items.restarts, 3);
    assert_eq!(k.faults_armed(), 6, "four passes");
}

#[test]
fn a_done_carrying_an_error_fails_the_dump() {
    let k = kernel_with(4);
    k.inject(
        When::DumpPart(1),
        Fault::DumpQuirk(DumpQuirk::DoneErrno(libc::EMSGSIZE)),
    );
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    let (r, _) = dump(&mut s, &mut sock, Items::default());
    assert!(matches!(r, Err(Failure::Refused(libc::EMSGSIZE))), "{r:?}");
    assert_eq!(s.unfinished_dump(), None, "the dump ended");
}

#[test]
fn a_dump_that_times_out_is_left_to_be_read_out() {
    let k = Kernel::new();
    k.inject(When::next(RequestKind::ListServices), Fault::Stall);
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    let (r, _) = dump(&mut s, &mut sock, Items::default());
    assert!(matches!(r, Err(Failure::TimedOut(t)) if t == T), "{r:?}");
    assert!(s.unfinished_dump().is_some());
    // A driver that can is told to move to a fresh socket; this one
    // stays, and the session still copes.
    assert!(s.wants_fresh_socket());
    // The kernel answers again: the next call looks for that dump's end,
    // then goes on.
    sock.port.recover();
    let (r, _) = dump(&mut s, &mut sock, Items::default());
    r.unwrap();
    assert_eq!(s.unfinished_dump(), None);
    // A dump whose only part (its DONE) is lost: the same.
    k.inject(When::next(RequestKind::ListServices), Fault::LoseReply);
    let (r, _) = dump(&mut s, &mut sock, Items::default());
    assert!(matches!(r, Err(Failure::TimedOut(t)) if t == T), "{r:?}");
    let (r, _) = dump(&mut s, &mut sock, Items::default());
    r.unwrap();
    assert_eq!(s.unfinished_dump(), None);
}

#[test]
fn a_get_after_a_reload_looks_the_family_up_again() {
    let k = Kernel::new();
    let cached = k.family_id();
    k.reload_module();
    let mut sock = Socket::new(&k);
    let mut s = Session::new(T);
    s.state.family = cached;
    let mut call = s.call(CallKind::Get, write_info, Count::default());
    run(&mut call, &mut sock, 100);
    assert!(call.result().unwrap().is_ok());
    assert_eq!(call.replies().0, 1);
    drop(call);
    assert_eq!(s.family(), k.family_id());
    assert_ne!(s.family(), cached);
    // Gone for good: unavailable.
    k.set_autoload(false);
    k.unload_module();
    let mut call = s.call(CallKind::Get, write_info, Count::default());
    run(&mut call, &mut sock, 100);
    assert!(matches!(call.result(), Some(Err(Failure::Unavailable))));
}

#[test]
fn truncated_and_garbled_answers_fail_the_call_in_words() {
    for fault in [Fault::Truncate, Fault::Garbage] {
        let k = kernel_with(9);
        k.inject(When::DumpPart(1), fault.clone());
        let mut sock = Socket::new(&k);
        let mut s = Session::new(T);
        s.state.family = k.family_id();
        let (r, _) = dump(&mut s, &mut sock, Items::default());
        assert!(matches!(r, Err(Failure::Malformed(_))), "{fault:?}: {r:?}");
        let (r, items) = dump(&mut s, &mut sock, Items::default());
        r.unwrap();
        assert_eq!(items.got.len(), 9);
    }
}
