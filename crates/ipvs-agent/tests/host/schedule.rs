//! When checks run: interval and jitter against a clock the test holds,
//! the queue of checks due.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use ipvs_agent::check::{seed_of, Schedule, Timetable};

const S: Duration = Duration::from_secs(1);

#[test]
fn without_jitter_checks_run_every_interval_exactly() {
    let t0 = Instant::now();
    let mut s = Schedule::new(2 * S, Duration::ZERO, 42);
    let mut at = s.first(t0);
    assert_eq!(at, t0);
    for k in 1..=10u32 {
        at = s.next(at);
        assert_eq!(at, t0 + 2 * S * k);
    }
}

#[test]
fn jitter_stays_within_its_bound_and_spreads_checks() {
    let t0 = Instant::now();
    let jitter = Duration::from_millis(500);
    let mut buckets = [0u32; 10];
    let mut firsts = HashSet::new();
    for server in 0..1000u32 {
        let mut s = Schedule::new(2 * S, jitter, seed_of(&("10.0.0.1", server)));
        let first = s.first(t0);
        assert!(first >= t0 && first <= t0 + jitter);
        firsts.insert(first);
        let offset = (first - t0).as_millis() as usize;
        buckets[(offset * 10 / 501).min(9)] += 1;
        let mut at = first;
        for _ in 0..20 {
            let next = s.next(at);
            assert!(
                next >= at + 2 * S && next <= at + 2 * S + jitter,
                "{:?}",
                next - at
            );
            at = next;
        }
    }
    // 1,000 servers do not start together: every 50 ms slice of the
    // jitter holds some (an even spread puts 100 in each).
    assert!(buckets.iter().all(|&n| n >= 50), "{buckets:?}");
    assert!(firsts.len() > 900);
}

#[test]
fn a_seed_gives_the_same_times_again() {
    let t0 = Instant::now();
    let times = |seed| {
        let mut s = Schedule::new(S, Duration::from_millis(300), seed);
        let mut at = s.first(t0);
        (0..5)
            .map(|_| {
                at = s.next(at);
                at
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(times(7), times(7));
    assert_ne!(times(7), times(8));
}

#[test]
fn the_timetable_gives_checks_in_time_order_when_due() {
    let t0 = Instant::now();
    let mut t = Timetable::new();
    t.insert(t0 + 3 * S, 'c');
    t.insert(t0 + S, 'a');
    t.insert(t0 + 2 * S, 'b');
    t.insert(t0 + S, 'd');
    assert_eq!(t.len(), 4);
    assert_eq!(t.next_due(), Some(t0 + S));
    assert_eq!(t.pop_due(t0), None);
    // Same time: in the order they went in.
    assert_eq!(t.pop_due(t0 + S), Some((t0 + S, 'a')));
    assert_eq!(t.pop_due(t0 + S), Some((t0 + S, 'd')));
    assert_eq!(t.pop_due(t0 + S), None);
    assert_eq!(t.pop_due(t0 + 10 * S).map(|x| x.1), Some('b'));
    assert_eq!(t.pop_due(t0 + 10 * S).map(|x| x.1), Some('c'));
    assert!(t.is_empty());
    assert_eq!(t.next_due(), None);
}
