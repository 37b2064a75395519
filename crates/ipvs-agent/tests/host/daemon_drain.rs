//! A failing server of a service with `remove_after_drain`: weight 0 at
//! once, deleted once its connections are gone or its drain has run
//! `drain_max`, whichever comes first, each seen within one drain poll
//! (5 s), on tokio's paused clock (the drains are timed by it too); a
//! kernel failing while a drain is under way is retried at the backoff.

use std::time::Duration;

use ipvs_agent::daemon::AgentOptions;
use ipvsnl::emulator::{Connections, Kernel};
use ipvsnl::Stats;

use crate::daemon_support::*;

/// The test's configuration: B drains for at most 20 s, then is deleted;
/// `persistent`: the service is persistent (its templates hold a drain).
fn draining(persistent: bool) -> String {
    let service = if persistent {
        "port = 80\nremove_after_drain = true\npersistence = { timeout = 300 }\n"
    } else {
        "port = 80\nremove_after_drain = true\n"
    };
    text("1h", 20, "")
        .replace("[agent]\n", "[agent]\ndrain_max = \"20s\"\n")
        .replace("port = 80\n", service)
}

/// Sets B's connection counts in the kernel.
fn b_connections(kernel: &Kernel, active: u32, persistent: u32) {
    let set = kernel.init_netns().set_destination_state(
        &key(80),
        ip(B),
        80,
        Connections::default()
            .with_active(active)
            .with_persistent(persistent),
        Stats::default(),
    );
    assert!(set, "B is in the kernel");
}

/// The paused clock's seconds from `t0` until B leaves the kernel (`None`
/// if it is still there after `limit`).
async fn seconds_until_b_is_gone(
    kernel: &Kernel,
    t0: tokio::time::Instant,
    limit: Duration,
) -> Option<u64> {
    while t0.elapsed() <= limit {
        if weight(kernel, &key(80), B) == "-" {
            return Some(t0.elapsed().as_secs());
        }
        advance(S).await;
    }
    None
}

#[tokio::test(start_paused = true)]
async fn a_drain_that_never_empties_ends_at_drain_max() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let agent = start(
        &kernel,
        config(&draining(false)),
        &prober,
        AgentOptions::default(),
    );
    advance(MS).await;
    b_connections(&kernel, 5, 0);
    prober.fail(B);
    // fall 3 x interval 2 s: out at the third failure.
    advance(6 * S + MS).await;
    assert_eq!(weight(&kernel, &key(80), B), "0");
    let out = tokio::time::Instant::now();
    let gone = seconds_until_b_is_gone(&kernel, out, 60 * S).await;
    // Not before drain_max (its connections stay), at most a poll after.
    let gone = gone.expect("B was never deleted");
    assert!(
        (20..=25).contains(&gone),
        "B deleted {gone} s after its drain began"
    );
    assert_eq!(weight(&kernel, &key(80), A), "10");
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_drain_of_a_persistent_service_ends_when_its_connections_and_templates_are_gone() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let agent = start(
        &kernel,
        config(&draining(true)),
        &prober,
        AgentOptions::default(),
    );
    advance(MS).await;
    b_connections(&kernel, 2, 1);
    prober.fail(B);
    advance(6 * S + MS).await;
    assert_eq!(weight(&kernel, &key(80), B), "0");
    let out = tokio::time::Instant::now();
    // The connections end at 7 s, a persistence template stays to 12 s.
    advance(7 * S).await;
    b_connections(&kernel, 0, 1);
    advance(5 * S).await;
    assert_eq!(
        weight(&kernel, &key(80), B),
        "0",
        "deleted with a template left"
    );
    b_connections(&kernel, 0, 0);
    let gone = seconds_until_b_is_gone(&kernel, out, 60 * S).await;
    let gone = gone.expect("B was never deleted");
    assert!(
        (12..=17).contains(&gone),
        "B deleted {gone} s after its drain began"
    );
    agent.stop(false).await;
}

/// The value of `ipvs_agent_syncs_total{result="error"}`.
fn failed_syncs(agent: &Running) -> u64 {
    let m = agent.handle.metrics_text();
    m.lines()
        .find_map(|l| l.strip_prefix("ipvs_agent_syncs_total{result=\"error\"} "))
        .map_or(0, |n| n.parse().unwrap())
}

#[tokio::test(start_paused = true)]
async fn a_kernel_that_fails_while_a_drain_is_under_way_is_retried_at_the_backoff_not_the_drain_poll(
) {
    use ipvsnl::emulator::{Fault, When};
    const ENOMEM: i32 = 12;
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let text = draining(false).replace("drain_max = \"20s\"", "drain_max = \"1h\"");
    let agent = start(&kernel, config(&text), &prober, AgentOptions::default());
    advance(MS).await;
    b_connections(&kernel, 5, 0);
    prober.fail(B);
    advance(6 * S + MS).await;
    assert_eq!(weight(&kernel, &key(80), B), "0");
    // B drains; from the next request on (the drain poll's, 5 s after B's
    // drain began) the kernel refuses every request (ENOMEM): every sync
    // fails.
    for _ in 0..1000 {
        kernel.inject(When::next_request(), Fault::Refuse(ENOMEM));
    }
    advance(5 * S).await;
    assert_eq!(failed_syncs(&agent), 1, "the drain poll failed");
    // Retried 1, 2, 4, 8, 16 s after each failure (the backoff doubles up
    // to the resync period, 1 h): 5 more tries in the next 60 s, where a
    // look at the drain every 5 s would have made 12 or more.
    advance(60 * S).await;
    assert_eq!(failed_syncs(&agent), 6);
    agent.stop(false).await;
}
