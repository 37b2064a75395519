//! Properties over random request lists and random fault scripts: every
//! request ends with exactly one outcome, and each outcome is true of what
//! the kernel did.

use std::collections::BTreeMap;
use std::time::Duration;

use proptest::prelude::*;

use super::items::{write, Items};
use super::kernel::{run, Faults, Kernel, Req};
use crate::proto::{CallKind, Limits, Outcome, Session};

const ERRNOS: [i32; 4] = [0, libc::EEXIST, libc::ESRCH, libc::ENOENT];

fn faults() -> impl Strategy<Value = Faults> {
    (
        proptest::option::of(1usize..12),
        proptest::option::of(1usize..40),
        proptest::option::of(0usize..80),
        proptest::collection::hash_set(1usize..120, 0..6),
        proptest::option::of(1usize..40),
        proptest::option::of(1usize..40),
        proptest::option::of(2usize..6),
    )
        .prop_map(
            |(fail_send, fail_recv, hang_after, drop_replies, truncate, garbage, stray_every)| {
                Faults {
                    fail_send,
                    fail_recv,
                    hang_after,
                    drop_replies,
                    truncate,
                    garbage,
                    stray_every,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn every_request_ends_with_exactly_one_true_outcome(
        verdicts in proptest::collection::vec(0usize..4, 0..70),
        skips in proptest::collection::vec(any::<bool>(), 70),
        capacity in 1usize..60,
        batch_requests in 1usize..24,
        batch_bytes in 16usize..2048,
        faults in faults(),
        cached in proptest::option::of(prop_oneof![Just(0x23u16), Just(0x22u16)]),
        unregistered in proptest::bool::weighted(0.05),
    ) {
        let n = verdicts.len();
        let table: Vec<i32> = verdicts.iter().map(|&v| ERRNOS[v]).collect();
        let requests: Vec<Req> = (0..n as u32).map(Req).collect();
        let skip: Vec<bool> = skips[..n].iter().map(|s| *s && n % 3 == 0).collect();
        let mut k = Kernel::new(0x23, capacity, move |i| table[i as usize]);
        k.faults = faults;
        k.unregistered = unregistered;
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
        run(&mut m, &mut k, 1_000_000);
        drop(m);
        prop_assert_eq!(twice, None, "a request got two outcomes");
        for (i, skipped) in skip.iter().enumerate() {
            let o = out.get(&i);
            prop_assert_eq!(o.is_some(), !skipped, "request {} outcome {:?}", i, o);
            let applied = k.receipts.iter().any(|r| r.0 == i as u32 && r.1 == 0);
            match o {
                Some(Outcome::Done) => prop_assert!(applied, "request {} done, not applied", i),
                Some(Outcome::Refused(e)) => {
                    prop_assert!(!applied, "request {} refused, applied", i);
                    prop_assert!(*e != 0 && *e != libc::ENOBUFS);
                }
                Some(Outcome::NotSent(_)) => {
                    prop_assert!(!k.received(i as u32), "request {} not sent, received", i)
                }
                _ => {}
            }
        }
    }

    #[test]
    fn a_call_always_ends_and_leaves_the_session_usable(
        items in 0u32..40,
        per_part in 1u32..6,
        fail_at in proptest::option::of(0u32..40),
        interrupted in 0u32..5,
        faults in faults(),
    ) {
        let mut k = Kernel::new(0x23, 64, |_| 0);
        k.dump_items = items;
        k.per_part = per_part;
        k.interrupted_dumps = interrupted;
        k.faults = faults;
        let mut s = Session::new(Duration::from_secs(5));
        let mut call = s.call(CallKind::Dump, write, Items::failing_at(fail_at));
        run(&mut call, &mut k, 100_000);
        prop_assert!(call.result().is_some());
        drop(call);
        // Faults over, the same session lists everything, once.
        k.faults = Faults::default();
        k.interrupted_dumps = 0;
        let mut call = s.call(CallKind::Dump, write, Items::default());
        run(&mut call, &mut k, 100_000);
        let r = call.result();
        prop_assert!(matches!(r, Some(Ok(()))), "{:?}", r);
        prop_assert_eq!(&call.replies().got, &(0..items).collect::<Vec<_>>());
        prop_assert_eq!(k.busy, 0);
    }
}
