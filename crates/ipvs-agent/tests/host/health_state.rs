//! The rise/fall hysteresis: results in, health and transitions out.

use ipvs_agent::check::{Failure, Health, Outcome, Reason, ServerHealth};
use ipvs_agent::config::StartState;

const PASS: Outcome = Outcome::Pass;

fn fail() -> Outcome {
    Outcome::Fail(Failure::Timeout)
}

/// Feeds `results` ('+' pass, '-' fail); gives the health after each.
fn run(h: &mut ServerHealth, results: &str) -> String {
    results
        .chars()
        .map(|c| {
            h.record(&if c == '+' { PASS } else { fail() });
            match h.health() {
                Health::Up => 'U',
                _ => 'D',
            }
        })
        .collect()
}

#[test]
fn a_healthy_server_falls_after_exactly_fall_consecutive_failures() {
    for fall in 1..=5u32 {
        let mut h = ServerHealth::new(2, fall, StartState::Up);
        h.record(&PASS);
        for i in 1..fall {
            assert!(h.record(&fail()).is_none(), "fall {fall}, failure {i}");
            assert_eq!(h.health(), Health::Up);
            assert_eq!(h.streak(), i);
        }
        let t = h.record(&fail()).expect("the fall-th failure");
        assert_eq!((t.from, t.to), (Health::Up, Health::Down));
        assert_eq!(
            t.reason,
            Reason::Fell {
                failures: fall,
                last: Failure::Timeout
            }
        );
    }
}

#[test]
fn a_failing_server_rises_after_exactly_rise_consecutive_successes() {
    for rise in 1..=5u32 {
        let mut h = ServerHealth::new(rise, 3, StartState::Down);
        for i in 1..rise {
            assert!(h.record(&PASS).is_none(), "rise {rise}, success {i}");
            assert_eq!(h.health(), Health::Down);
        }
        let t = h.record(&PASS).expect("the rise-th success");
        assert_eq!((t.from, t.to), (Health::Down, Health::Up));
        assert_eq!(t.reason, Reason::Rose { successes: rise });
        assert_eq!(
            t.reason.to_string(),
            format!("{rise} consecutive successes")
        );
    }
}

#[test]
fn flapping_within_the_hysteresis_changes_nothing() {
    // rise 2, fall 3: up, then failures never 3 in a row.
    let mut h = ServerHealth::new(2, 3, StartState::Up);
    assert_eq!(run(&mut h, "+--+--+-+--+"), "UUUUUUUUUUUU");
    // Down, then successes never 2 in a row.
    assert_eq!(run(&mut h, "---"), "UUD");
    assert_eq!(run(&mut h, "+-+-+--+-"), "DDDDDDDDD");
    // Two in a row: up.
    assert_eq!(run(&mut h, "++"), "DU");
}

#[test]
fn a_server_started_up_is_provisional_until_its_first_result() {
    let mut h = ServerHealth::new(2, 3, StartState::Up);
    assert_eq!(h.health(), Health::Up);
    assert!(h.is_provisional());
    let t = h.record(&Outcome::Fail(Failure::Refused)).unwrap();
    assert_eq!((t.from, t.to), (Health::Up, Health::Down));
    assert_eq!(
        t.reason.to_string(),
        "first check since start failed: connection refused"
    );
    assert!(!h.is_provisional());

    // A first success makes it fully up: `fall` failures needed then.
    let mut h = ServerHealth::new(2, 3, StartState::Up);
    assert_eq!(run(&mut h, "+--"), "UUU");
    assert!(!h.is_provisional());
    assert_eq!(run(&mut h, "-"), "D");
}

#[test]
fn a_server_started_down_needs_rise_successes() {
    let mut h = ServerHealth::new(3, 2, StartState::Down);
    assert_eq!(h.health(), Health::Down);
    assert!(!h.is_provisional());
    assert_eq!(run(&mut h, "++-+++"), "DDDDDU");
}

#[test]
fn zero_thresholds_count_as_one() {
    let mut h = ServerHealth::new(0, 0, StartState::Down);
    assert_eq!(run(&mut h, "+-+"), "UDU");
}

#[test]
fn each_transition_says_its_last_failure() {
    let mut h = ServerHealth::new(1, 2, StartState::Up);
    h.record(&PASS);
    h.record(&Outcome::Fail(Failure::Timeout));
    let t = h
        .record(&Outcome::Fail(Failure::Status {
            expected: 200,
            got: 503,
        }))
        .unwrap();
    assert_eq!(
        t.reason.to_string(),
        "2 consecutive failures, the last: status 503 (expected 200)"
    );
    for (f, text) in [
        (Failure::BodyMismatch, "body lacks the expected string"),
        (Failure::Tls("unknown issuer".into()), "TLS: unknown issuer"),
        (
            Failure::Rcode {
                expected: 0,
                got: 2,
            },
            "rcode 2 (expected 0)",
        ),
        (Failure::Exit(Some(3)), "exit status 3"),
        (Failure::Exit(None), "killed by a signal"),
        (
            Failure::Other("no route to host".into()),
            "no route to host",
        ),
    ] {
        assert_eq!(f.to_string(), text);
    }
}

#[test]
fn an_inconclusive_result_moves_nothing() {
    let short = || Outcome::Inconclusive("socket: Too many open files (os error 24)".into());
    // A provisional server stays provisional and up.
    let mut h = ServerHealth::new(2, 2, StartState::Up);
    for _ in 0..10 {
        assert!(h.record(&short()).is_none());
    }
    assert!(h.is_provisional());
    assert_eq!(h.health(), Health::Up);
    // A streak is neither broken nor advanced.
    h.record(&PASS);
    h.record(&fail());
    assert_eq!(h.streak(), 1);
    assert!(h.record(&short()).is_none());
    assert_eq!(h.streak(), 1);
    let t = h.record(&fail()).expect("the second failure in a row");
    assert_eq!(t.to, Health::Down);
    // A down server does not rise on them either.
    for _ in 0..10 {
        assert!(h.record(&short()).is_none());
    }
    assert_eq!(h.health(), Health::Down);
}
