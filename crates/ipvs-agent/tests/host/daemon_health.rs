//! The loop on a paused clock and an emulated kernel: a failing server is
//! drained at exactly `fall` x interval, back after `rise`; flapping below
//! the hysteresis changes nothing in the kernel.

use ipvs_agent::check::{Failure, Health, Outcome};
use ipvsnl::emulator::Kernel;
use tokio::time::Instant;

use crate::daemon_support::*;

#[tokio::test(start_paused = true)]
async fn a_failing_server_is_drained_after_fall_checks_and_back_after_rise() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let t0 = Instant::now();
    let agent = start_default(&kernel, &prober);
    advance(MS).await;
    // The first round of checks passed: the first sync put both in.
    assert_eq!(weight(&kernel, &key(80), A), "10");
    assert_eq!(weight(&kernel, &key(80), B), "20");
    assert!(agent.handle.ready());

    // A fails from 3 s: its checks at 4, 6 and 8 s fail, the third takes it out.
    advance(3 * S - MS).await;
    prober.fail(A);
    advance(5 * S - MS).await; // t0 + 8 s - 1 ms
    assert_eq!(weight(&kernel, &key(80), A), "10");
    advance(2 * MS).await; // t0 + 8 s + 1 ms
    assert_eq!(weight(&kernel, &key(80), A), "0");
    assert_eq!(weight(&kernel, &key(80), B), "20");
    let state = agent.handle.state().await.unwrap();
    let a = state.server(addr(A)).unwrap();
    assert_eq!(a.health, Health::Down);
    assert_eq!(a.changed, Some(t0 + 8 * S));
    assert_eq!(state.last_sync.unwrap().finished, t0 + 8 * S);
    assert_eq!(state.last_sync.unwrap().requests, 1);

    // Back at 9 s: passes at 10 and 12 s bring it back at 12 s.
    advance(S - MS).await;
    prober.pass(A);
    advance(3 * S - MS).await; // t0 + 12 s - 1 ms
    assert_eq!(weight(&kernel, &key(80), A), "0");
    advance(2 * MS).await;
    assert_eq!(weight(&kernel, &key(80), A), "10");
    let state = agent.handle.state().await.unwrap();
    assert_eq!(state.server(addr(A)).unwrap().changed, Some(t0 + 12 * S));
    let text = agent.handle.metrics_text();
    assert!(
        text.contains("ipvs_agent_check_failures_total{service=\"TCP 192.0.2.1:80\",name=\"web\",server=\"10.0.0.1:80\",reason=\"refused\"} 3\n"),
        "{text}"
    );
    assert!(
        text.contains("server=\"10.0.0.1:80\",to=\"down\"} 1\n"),
        "{text}"
    );
    assert!(
        text.contains("server=\"10.0.0.1:80\",to=\"up\"} 1\n"),
        "{text}"
    );
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_check_that_never_ends_is_timed_by_the_daemon() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let t0 = Instant::now();
    let agent = start_default(&kernel, &prober);
    advance(MS).await;
    assert_eq!(weight(&kernel, &key(80), A), "10");

    // A never answers from 3 s: its checks at 4, 6 and 8 s end as timeouts
    // 1 s after each start (the check's timeout); the third, at 9 s, takes
    // it out.
    advance(3 * S - MS).await;
    prober.hang(A);
    advance(6 * S - MS).await; // t0 + 9 s - 1 ms
    assert_eq!(weight(&kernel, &key(80), A), "10");
    // Two that passed (0 and 2 s), three hung.
    assert_eq!(prober.probes(A), 5);
    advance(2 * MS).await; // t0 + 9 s + 1 ms
    assert_eq!(weight(&kernel, &key(80), A), "0");
    assert_eq!(weight(&kernel, &key(80), B), "20");
    let state = agent.handle.state().await.unwrap();
    assert_eq!(state.server(addr(A)).unwrap().changed, Some(t0 + 9 * S));
    let text = agent.handle.metrics_text();
    assert!(
        text.contains("server=\"10.0.0.1:80\",reason=\"timeout\"} 3\n"),
        "{text}"
    );
    assert!(!text.contains("reason=\"refused\""), "{text}");
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn flapping_below_the_hysteresis_changes_nothing_in_the_kernel() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let refused = || Outcome::Fail(Failure::Refused);
    // After a first pass: never 3 failures in a row.
    let mut script = vec![Outcome::Pass];
    for _ in 0..10 {
        script.extend([refused(), refused(), Outcome::Pass]);
    }
    prober.queue(A, script.clone());
    let agent = start_default(&kernel, &prober);
    advance(MS).await;
    let after_first_sync = changes(&kernel).len();
    assert_eq!(after_first_sync, 3, "{:?}", changes(&kernel));
    advance(62 * S).await;
    assert_eq!(prober.probes(A), 32);
    assert_eq!(
        changes(&kernel).len(),
        after_first_sync,
        "{:?}",
        changes(&kernel)
    );
    assert_eq!(weight(&kernel, &key(80), A), "10");
    let state = agent.handle.state().await.unwrap();
    assert_eq!(state.server(addr(A)).unwrap().health, Health::Up);
    assert_eq!(state.syncs, 1);

    // A down server flapping below `rise` stays out.
    prober.queue(A, [refused(), refused(), refused()]);
    advance(6 * S).await;
    assert_eq!(weight(&kernel, &key(80), A), "0");
    let before = changes(&kernel).len();
    let mut script = Vec::new();
    for _ in 0..10 {
        script.extend([Outcome::Pass, refused()]);
    }
    prober.queue(A, script);
    advance(40 * S).await;
    assert_eq!(changes(&kernel).len(), before);
    assert_eq!(weight(&kernel, &key(80), A), "0");
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_failed_sync_is_retried_after_a_backoff_that_doubles() {
    use ipvsnl::emulator::{Fault, When};
    use ipvsnl::RequestKind;
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let t0 = Instant::now();
    let agent = start_default(&kernel, &prober);
    advance(MS).await;
    // A goes down at 6 s; its weight-0 edit is refused twice (ENOMEM).
    for _ in 0..2 {
        kernel.inject(
            When::next(RequestKind::EditDestination),
            Fault::Refuse(libc_enomem()),
        );
    }
    prober.queue(A, vec![Outcome::Fail(Failure::Refused); 3]);
    advance(6 * S).await; // t0 + 6 s + 1 ms: the first try failed
    assert_eq!(weight(&kernel, &key(80), A), "10");
    let state = agent.handle.state().await.unwrap();
    assert_eq!(state.server(addr(A)).unwrap().changed, Some(t0 + 6 * S));
    // Retried 1 s later (refused again), then 2 s after that: done.
    advance(S).await;
    assert_eq!(weight(&kernel, &key(80), A), "10");
    advance(2 * S - 2 * MS).await; // t0 + 9 s - 1 ms
    assert_eq!(weight(&kernel, &key(80), A), "10");
    advance(2 * MS).await;
    assert_eq!(weight(&kernel, &key(80), A), "0");
    let last = agent.handle.state().await.unwrap().last_sync.unwrap();
    assert_eq!(last.finished, t0 + 9 * S);
    assert!(last.complete && last.listed, "{last:?}");
    let m = agent.handle.metrics_text();
    assert!(
        m.contains("ipvs_agent_syncs_total{result=\"incomplete\"} 2\n"),
        "{m}"
    );
    agent.stop(false).await;
}

/// ENOMEM (Linux).
fn libc_enomem() -> i32 {
    12
}
