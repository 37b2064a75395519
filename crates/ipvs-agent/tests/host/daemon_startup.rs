//! The agent's start on an emulated kernel and a paused clock: a server
//! the kernel holds at weight 0 whose first check times out is never given
//! weight at a restart, and the restart sends nothing (nor does one over
//! a serving table with `start = "down"`); at a fresh start a
//! server still without a result when `start_wait` (3 s by default) ends
//! enters as its check's `start` says; a slow first check holds only its
//! own service, and the agent is ready within `start_wait`; a reload
//! during the wait, or `start_wait = "0s"`, puts services in at once.

use ipvs_agent::daemon::AgentOptions;
use ipvsnl::emulator::Kernel;
use ipvsnl::{Destination, Request, ServiceKey};
use tokio::time::Instant;

use crate::daemon_support::*;

/// B's own check: TCP every `interval`, `timeout` (the file's longest),
/// started as `start` says.
fn b_check(interval: &str, timeout: &str, start: &str) -> String {
    format!(
        "check = {{ kind = \"tcp\", interval = \"{interval}\", timeout = \"{timeout}\", \
         rise = 2, fall = 3, start = \"{start}\" }}\n"
    )
}

/// B's weight every millisecond for `d`, each sample with its time since
/// `t0`.
async fn sample_b(kernel: &Kernel, t0: Instant, d: std::time::Duration) -> Vec<(u128, String)> {
    let mut seen = Vec::new();
    let end = Instant::now() + d;
    while Instant::now() < end {
        advance(MS).await;
        let ms = (Instant::now() - t0).as_millis();
        seen.push((ms, weight(kernel, &key(80), B)));
    }
    seen
}

#[tokio::test(start_paused = true)]
async fn a_server_drained_in_the_kernel_whose_first_check_times_out_stays_at_0_at_restart() {
    // B's timeout below start_wait (the service settles at B's timeout)
    // and above it (it settles when the wait ends).
    for (interval, timeout) in [("2s", "1500ms"), ("10s", "5s")] {
        let kernel = Kernel::new();
        let prober = Scripted::default();
        let c = config(&text("1h", 20, &b_check(interval, timeout, "up")));
        // A first agent found B refusing: B at weight 0.
        prober.fail(B);
        let first = start(&kernel, c.clone(), &prober, AgentOptions::default());
        advance(MS).await;
        assert_eq!(weight(&kernel, &key(80), B), "0");
        first.stop(false).await;

        // B now drops every connection: its checks time out.
        prober.hang(B);
        kernel.clear_requests();
        let t0 = Instant::now();
        let second = start(&kernel, c, &prober, AgentOptions::default());
        let seen = sample_b(&kernel, t0, 12 * S).await;
        let above: Vec<_> = seen.iter().filter(|(_, w)| w != "0").collect();
        assert!(above.is_empty(), "B not at 0 at {above:?} ({timeout})");
        assert_eq!(changes(&kernel), Vec::<Request>::new(), "{timeout}");
        let state = second.handle.state().await.unwrap();
        assert!(state.ready, "{timeout}");
        let last = state.last_sync.unwrap();
        assert!(last.complete && last.requests == 0, "{last:?}");
        second.stop(false).await;
    }
}

#[tokio::test(start_paused = true)]
async fn at_a_fresh_start_a_server_without_a_result_enters_as_start_says() {
    for start_state in ["down", "up"] {
        let kernel = Kernel::new();
        let prober = Scripted::default();
        prober.hang(B);
        let c = config(&text("1h", 20, &b_check("10s", "5s", start_state)));
        let t0 = Instant::now();
        let agent = start(&kernel, c, &prober, AgentOptions::default());
        // A answered at once, B not: the service waits, at most 3 s.
        advance(3 * S - MS).await;
        assert_eq!(weight(&kernel, &key(80), A), "no service");
        assert!(!agent.handle.ready());
        advance(2 * MS).await; // t0 + 3 s + 1 ms
        assert_eq!(weight(&kernel, &key(80), A), "10", "start = {start_state}");
        assert!(agent.handle.ready());
        let entered = if start_state == "up" { "20" } else { "0" };
        assert_eq!(weight(&kernel, &key(80), B), entered);
        // B's first check times out at 5 s: out (start = "up"), or still
        // out (start = "down").
        let seen = sample_b(&kernel, t0, 10 * S).await;
        for (ms, w) in &seen {
            let want = if *ms > 5000 || start_state == "down" {
                "0"
            } else {
                entered
            };
            assert_eq!(w, want, "B at {ms} ms, start = {start_state}");
        }
        agent.stop(false).await;
    }
}

/// The usual service on port 80 and one on port 443 whose only server,
/// C, is checked by a command that takes its whole 25 s timeout.
fn with_slow_service() -> String {
    text(
        "1h",
        20,
        &format!(
            "[[service]]\nprotocol = \"tcp\"\naddress = \"{VIP}\"\nport = 443\n\
             [[service.server]]\naddress = \"{C}\"\nweight = 5\n\
             check = {{ kind = \"command\", command = [\"/bin/true\"], interval = \"30s\", \
             timeout = \"25s\" }}\n"
        ),
    )
}

const C: &str = "10.0.0.3";
const C_AT: &str = "10.0.0.3:443";

fn weight_c(kernel: &Kernel) -> String {
    weight(kernel, &key(443), C_AT)
}

#[tokio::test(start_paused = true)]
async fn a_slow_first_check_holds_its_own_service_only_and_at_most_start_wait() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    prober.hang(C_AT);
    let agent = start(
        &kernel,
        config(&with_slow_service()),
        &prober,
        AgentOptions::default(),
    );
    // The service whose servers answered is in at once.
    advance(MS).await;
    assert_eq!(weight(&kernel, &key(80), A), "10");
    assert_eq!(weight(&kernel, &key(80), B), "20");
    assert_eq!(weight_c(&kernel), "no service");
    assert!(!agent.handle.ready());
    // The wait's end: C enters provisionally up (its check's `start`), and
    // the agent is ready.
    advance(3 * S - 2 * MS).await; // t0 + 3 s - 1 ms
    assert_eq!(weight_c(&kernel), "no service");
    assert!(!agent.handle.ready());
    advance(2 * MS).await;
    assert_eq!(weight_c(&kernel), "5");
    assert!(agent.handle.ready());
    // C's check times out at 25 s: out.
    advance(22 * S).await;
    assert_eq!(weight_c(&kernel), "0");
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_restart_with_a_slow_first_check_sends_nothing_and_is_ready_within_start_wait() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let c = config(&with_slow_service());
    let first = start(&kernel, c.clone(), &prober, AgentOptions::default());
    advance(MS).await;
    assert_eq!(weight_c(&kernel), "5");
    first.stop(false).await;

    prober.hang(C_AT);
    kernel.clear_requests();
    let second = start(&kernel, c, &prober, AgentOptions::default());
    advance(3 * S - MS).await;
    assert!(!second.handle.ready());
    advance(2 * MS).await;
    assert!(second.handle.ready());
    assert_eq!(weight_c(&kernel), "5", "kept as the kernel held it");
    assert_eq!(changes(&kernel), Vec::<Request>::new());
    // Its first result, at 25 s, takes it out.
    advance(22 * S).await;
    let c_dest = Destination::new(ip(C), 443).with_weight(0);
    let key443: ServiceKey = key(443);
    assert_eq!(changes(&kernel), [Request::EditDestination(key443, c_dest)]);
    second.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_reload_during_the_wait_puts_the_services_it_changes_in_at_once() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    prober.hang(C_AT);
    let agent = start(
        &kernel,
        config(&with_slow_service()),
        &prober,
        AgentOptions::default(),
    );
    advance(S).await;
    assert_eq!(weight_c(&kernel), "no service");
    // C's weight changed: its service goes in now, C as its `start` says.
    let changed = with_slow_service().replace("weight = 5", "weight = 6");
    assert!(agent.handle.apply(config(&changed)).await);
    advance(MS).await;
    assert_eq!(weight_c(&kernel), "6");
    assert!(agent.handle.ready());
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn start_wait_0_puts_every_service_in_at_once_as_its_servers_began() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    prober.hang(C_AT);
    let text = with_slow_service().replace("[agent]\n", "[agent]\nstart_wait = \"0s\"\n");
    let agent = start(&kernel, config(&text), &prober, AgentOptions::default());
    advance(MS).await;
    assert_eq!(weight(&kernel, &key(80), A), "10");
    assert_eq!(weight_c(&kernel), "5");
    assert!(agent.handle.ready());
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_restart_over_a_serving_table_sends_nothing_even_with_start_down() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let c = config(&text("1h", 20, &b_check("2s", "1s", "down")));
    let first = start(&kernel, c.clone(), &prober, AgentOptions::default());
    // B proves itself first: in after `rise` (2) successes, at 2 s.
    advance(2 * S + MS).await;
    assert_eq!(weight(&kernel, &key(80), B), "20");
    first.stop(false).await;

    // Restarted over the table: B begins as the kernel holds it (serving),
    // not down again.
    kernel.clear_requests();
    let second = start(&kernel, c, &prober, AgentOptions::default());
    advance(MS).await;
    assert!(second.handle.ready());
    advance(10 * S).await;
    assert_eq!(changes(&kernel), Vec::<Request>::new());
    assert_eq!(weight(&kernel, &key(80), B), "20");
    second.stop(false).await;
}

/// A file where no server has a check (what `ipvs-agent import
/// keepalived` writes for PING_CHECK and UDP_CHECK): no service waits for
/// a first result, and the agent is ready after its first sync (it never
/// was: nothing ended the start, so no sync counted for readiness).
#[tokio::test(start_paused = true)]
async fn a_file_without_any_check_is_ready_after_its_first_sync() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let c = config(&format!(
        "[[service]]\nprotocol = \"tcp\"\naddress = \"{VIP}\"\nport = 80\n\
         [[service.server]]\naddress = \"{A}\"\nweight = 10\n"
    ));
    let agent = start(&kernel, c, &prober, AgentOptions::default());
    let mut waited = 0;
    while !agent.handle.ready() && waited < 10_000 {
        advance(MS).await;
        waited += 1;
    }
    assert_eq!(weight(&kernel, &key(80), A), "10");
    assert!(agent.handle.ready(), "not ready after {waited} ms");
    agent.stop(false).await;
}
