//! A configuration handed to the agent whole (`Handle::apply`, what a
//! fleet's generation becomes) applies as a reload of a file does: a diff,
//! kept servers keep their health.

use ipvs_agent::check::Health;
use ipvsnl::emulator::Kernel;
use ipvsnl::{Destination, Request};

use crate::daemon_support::*;

#[tokio::test(start_paused = true)]
async fn a_configuration_applied_whole_is_a_diff_that_keeps_health() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    // No file: a reload is refused, an applied configuration is not.
    let agent = start_default(&kernel, &prober);
    advance(MS).await;
    prober.fail(A);
    advance(7 * S).await;
    assert_eq!(weight(&kernel, &key(80), A), "0");
    kernel.clear_requests();

    assert!(agent.handle.apply(config(&text("1h", 30, ""))).await);
    advance(MS).await;
    let b = Destination::new(ip(B), 80).with_weight(30);
    assert_eq!(changes(&kernel), [Request::EditDestination(key(80), b)]);
    let state = agent.handle.state().await.unwrap();
    assert_eq!(state.server(addr(A)).unwrap().health, Health::Down);
    assert_eq!(state.config.services[0].servers[1].destination.weight, 30);
    assert!(agent
        .handle
        .metrics_text()
        .contains("\nipvs_agent_config_reloads_total 1\n"));
    assert!(!agent.handle.reload().await, "no file to reload");
    let handle = agent.handle.clone();
    agent.stop(false).await;
    assert!(!handle.apply(config(&text("1h", 40, ""))).await, "stopped");
}
