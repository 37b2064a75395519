//! Properties over random lists of real requests and random faults at
//! the emulated kernel's socket: every request ends with exactly one
//! outcome, and each outcome is true of what the kernel did; every call
//! ends, and leaves the session usable.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use proptest::prelude::*;

use super::call::dump;
use super::driver::{add, answered, kernel_with, key, run, Socket};
use super::items::Items;
use crate::emulator::{DumpQuirk, Fault, Kernel, When};
use crate::proto::{Limits, Outcome, Session};
use crate::{Request, RequestKind};

const ERRNOS: [i32; 4] = [0, libc::EEXIST, libc::ESRCH, libc::ENOENT];

/// A fault of the socket or the kernel, by number. (Not
/// [`Fault::LoseReply`] in a batch: netlink never loses a reply silently,
/// and an error lost so before the batch's ACK reads as done.)
fn fault(n: usize) -> Fault {
    match n {
        0 => Fault::Overrun,
        1 => Fault::Stray,
        2 => Fault::Truncate,
        3 => Fault::Garbage,
        4 => Fault::Stray,
        5 => Fault::ReceiveFails(libc::EBADF),
        6 => Fault::SendFails(libc::ENOBUFS),
        _ => Fault::Stall,
    }
}

/// Faults at requests (by item), at the family lookup, and the socket's
/// receive queue.
#[derive(Debug, Clone)]
struct Faults {
    lookup: Option<usize>,
    capacity: Option<usize>,
    at: Vec<(u32, usize)>,
}

fn faults(items: u32) -> impl Strategy<Value = Faults> {
    (
        proptest::option::of(0usize..8),
        proptest::option::of(1usize..60),
        proptest::collection::vec((0..items.max(1), 0usize..8), 0..8),
    )
        .prop_map(|(lookup, capacity, at)| Faults {
            lookup,
            capacity,
            at,
        })
}

impl Faults {
    /// Arms them: the lookup's first (the capacity then strikes at the
    /// message after it).
    fn arm(&self, k: &Kernel) {
        if let Some(f) = self.lookup {
            k.inject(When::next(RequestKind::ResolveFamily), fault(f));
        }
        if let Some(c) = self.capacity {
            k.inject(When::next_request(), Fault::QueueLimit(c));
        }
        for &(i, f) in &self.at {
            let key = key(i);
            k.inject(When::request(move |t| t.service == Some(key)), fault(f));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn every_request_ends_with_exactly_one_true_outcome(
        verdicts in proptest::collection::vec(0usize..4, 0..70),
        skips in proptest::collection::vec(any::<bool>(), 70),
        batch_requests in 1usize..24,
        batch_bytes in 16usize..2048,
        faults in faults(70),
        per_receive in 1usize..=2,
        cached in proptest::option::of(prop_oneof![Just(0x23u16), Just(0x22u16)]),
        unregistered in proptest::bool::weighted(0.05),
    ) {
        let n = verdicts.len();
        let k = Kernel::new();
        let requests: Vec<Request> = verdicts
            .iter()
            .enumerate()
            .map(|(i, &v)| answered(&k, i as u32, ERRNOS[v]))
            .collect();
        let skip: Vec<bool> = skips[..n].iter().map(|s| *s && n % 3 == 0).collect();
        if unregistered {
            k.set_autoload(false);
            k.unload_module();
        }
        faults.arm(&k);
        let mut sock = Socket::new(&k);
        sock.per_receive = per_receive;
        let mut s = Session::new(Duration::from_secs(5));
        s.state.family = cached;
        let mut out: BTreeMap<usize, Outcome> = BTreeMap::new();
        let mut twice = None;
        let mut sink = |i: usize, o: Outcome| {
            if out.insert(i, o).is_some() {
                twice = Some(i);
            }
        };
        let mut m = s.apply(&requests, &skip, Limits::new(batch_bytes, batch_requests), &mut sink);
        run(&mut m, &mut sock, 1_000_000);
        drop(m);
        prop_assert_eq!(twice, None, "a request got two outcomes");
        let listed: HashSet<_> = k.init_netns().table().iter().map(|e| *e.key()).collect();
        for (i, skipped) in skip.iter().enumerate() {
            let o = out.get(&i);
            prop_assert_eq!(o.is_some(), !skipped, "request {} outcome {:?}", i, o);
            let verdict = ERRNOS[verdicts[i]];
            match o {
                Some(Outcome::Done) => {
                    prop_assert_eq!(verdict, 0, "request {} done, the kernel refuses it", i);
                    prop_assert!(listed.contains(&key(i as u32)), "request {} done, not applied", i);
                }
                Some(Outcome::Refused(e)) => {
                    // The kernel's verdict; or, the id being stale and
                    // the look-up that would tell failing, the kernel's
                    // ENOENT for an unknown family (not applied either).
                    let stale = unregistered || cached == Some(0x22);
                    prop_assert!(
                        *e == verdict || stale && *e == libc::ENOENT,
                        "request {} refused with {}, the kernel says {}", i, e, verdict
                    );
                    prop_assert!(*e != 0 && *e != libc::ENOBUFS);
                    if verdict == 0 {
                        prop_assert!(!listed.contains(&key(i as u32)), "request {} refused, applied", i);
                    }
                }
                Some(Outcome::NotSent(_)) => {
                    prop_assert!(!sock.received(i as u32), "request {} not sent, received", i)
                }
                _ => {}
            }
        }
    }

    #[test]
    fn a_call_always_ends_and_leaves_the_session_usable(
        items in 0u32..150,
        fail_at in proptest::option::of(0u32..150),
        interrupted in 0usize..5,
        done_with_last_part in any::<bool>(),
        per_receive in 1usize..=2,
        lookup in proptest::option::of(0usize..8),
        // Room for the lookup's reply and ACK at least.
        capacity in proptest::option::of(2usize..8),
        at_dump in proptest::option::of(0usize..9),
        at_parts in proptest::collection::vec((1usize..6, 0usize..7), 0..4),
    ) {
        let k = kernel_with(items);
        for _ in 0..interrupted {
            k.inject(When::DumpPart(1), Fault::DumpQuirk(DumpQuirk::Interrupted));
        }
        if done_with_last_part {
            k.inject(When::DumpPart(1), Fault::DumpQuirk(DumpQuirk::DoneWithLastPart));
        }
        if let Some(f) = lookup {
            k.inject(When::next(RequestKind::ResolveFamily), fault(f));
        }
        if let Some(c) = capacity {
            k.inject(When::next_request(), Fault::QueueLimit(c));
        }
        if let Some(f) = at_dump {
            // A call is one request: its reply may be lost too.
            let f = if f == 8 { Fault::LoseReply } else { fault(f) };
            k.inject(When::next(RequestKind::ListServices), f);
        }
        // A writer between two parts can make the dump skip an entry.
        let foreign = at_parts.iter().any(|&(_, f)| f == 6);
        for (part, f) in at_parts {
            // At a part: the socket's faults, or another writer.
            let f = match f {
                6 => Fault::Foreign(vec![Request::DeleteService(key(0)), add(1000)]),
                f => fault(f),
            };
            k.inject(When::DumpPart(part), f);
        }
        let mut sock = Socket::new(&k);
        sock.per_receive = per_receive;
        let mut s = Session::new(Duration::from_secs(5));
        let (r, got) = dump(&mut s, &mut sock, Items::failing_at(fail_at));
        if fail_at.is_some_and(|i| i < items) && !foreign {
            prop_assert!(r.is_err(), "item {:?} cannot be decoded", fail_at);
        }
        // Whole or failed.
        if r.is_ok() && !foreign {
            prop_assert_eq!(got.got, sock.listing());
        }
        // Faults over, the same session lists everything, once.
        k.disarm();
        sock.port.recover();
        let (r, got) = dump(&mut s, &mut sock, Items::default());
        prop_assert!(r.is_ok(), "{:?}", r);
        prop_assert_eq!(got.got, sock.listing());
        prop_assert_eq!(sock.busy(), 0);
        prop_assert_eq!(s.unfinished_dump(), None);
    }
}
