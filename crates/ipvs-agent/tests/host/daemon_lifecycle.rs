//! The loop's lifecycle on an emulated kernel: a restart over an
//! unchanged table sends nothing; reloads apply as a diff or are refused
//! whole; another owner's service is left alone; a change behind the
//! agent's back is repaired at the next resync; stop leaves or removes
//! the agent's services.

use ipvs_agent::check::Health;
use ipvs_agent::daemon::AgentOptions;
use ipvsnl::emulator::Kernel;
use ipvsnl::{Destination, Request, Service, ServiceKey};

use crate::daemon_support::*;

#[tokio::test(start_paused = true)]
async fn a_restart_over_an_unchanged_table_sends_no_request() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let c = config(&text("1h", 20, ""));
    let first = start(&kernel, c.clone(), &prober, AgentOptions::default());
    advance(MS).await;
    assert_eq!(changes(&kernel).len(), 3);
    first.stop(false).await;
    assert_eq!(weight(&kernel, &key(80), A), "10", "left in place");

    kernel.clear_requests();
    let second = start(&kernel, c, &prober, AgentOptions::default());
    advance(MS).await;
    assert!(second.handle.ready());
    assert_eq!(changes(&kernel), Vec::<Request>::new());
    advance(10 * S).await;
    assert_eq!(changes(&kernel), Vec::<Request>::new());
    second.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_server_dead_at_restart_is_never_put_back() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let c = config(&text("1h", 20, ""));
    let first = start(&kernel, c.clone(), &prober, AgentOptions::default());
    advance(MS).await;
    prober.fail(A);
    advance(7 * S).await;
    assert_eq!(weight(&kernel, &key(80), A), "0");
    first.stop(false).await;
    kernel.clear_requests();
    // The first sync waits for the first round of checks: A's failure
    // keeps it at 0.
    let second = start(&kernel, c, &prober, AgentOptions::default());
    advance(MS).await;
    assert!(second.handle.ready());
    assert_eq!(changes(&kernel), Vec::<Request>::new());
    second.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_reload_with_one_server_changed_sends_only_its_request_and_keeps_health() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let path = write_file("reload-one.toml", &text("1h", 20, ""));
    let options = AgentOptions::default().with_config_path(&path);
    let agent = start(&kernel, config(&text("1h", 20, "")), &prober, options);
    advance(MS).await;
    prober.fail(A);
    advance(7 * S).await;
    assert_eq!(weight(&kernel, &key(80), A), "0");
    kernel.clear_requests();

    std::fs::write(&path, text("1h", 30, "")).unwrap();
    assert!(agent.handle.reload().await);
    advance(MS).await;
    let b = Destination::new(ip(B), 80).with_weight(30);
    assert_eq!(changes(&kernel), [Request::EditDestination(key(80), b)]);
    assert_eq!(weight(&kernel, &key(80), B), "30");
    // A is still down: its state was kept, its weight not touched.
    let state = agent.handle.state().await.unwrap();
    assert_eq!(state.server(addr(A)).unwrap().health, Health::Down);
    assert_eq!(weight(&kernel, &key(80), A), "0");
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_reload_with_errors_keeps_the_running_configuration_and_counts_the_error() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let good = text("1h", 20, "");
    let path = write_file("reload-bad.toml", &good);
    let options = AgentOptions::default().with_config_path(&path);
    let agent = start(&kernel, config(&good), &prober, options);
    advance(MS).await;
    kernel.clear_requests();
    // A change and an error: nothing of it is applied.
    let bad = text(
        "1h",
        30,
        "[[service.server]]\naddress = \"10.0.0.3\"\nweight = -1\n",
    );
    std::fs::write(&path, bad).unwrap();
    assert!(!agent.handle.reload().await);
    advance(10 * S).await;
    assert_eq!(changes(&kernel), Vec::<Request>::new());
    let state = agent.handle.state().await.unwrap();
    assert_eq!(state.reload_errors, 1);
    assert_eq!(*state.config, config(&good));
    let m = agent.handle.metrics_text();
    assert!(
        m.contains("\nipvs_agent_config_reload_errors_total 1\n"),
        "{m}"
    );
    assert!(
        m.contains("\nipvs_agent_config_last_reload_successful 0\n"),
        "{m}"
    );
    // The file fixed: applied.
    std::fs::write(&path, text("1h", 30, "")).unwrap();
    assert!(agent.handle.reload().await);
    advance(MS).await;
    assert_eq!(weight(&kernel, &key(80), B), "30");
    let m = agent.handle.metrics_text();
    assert!(
        m.contains("\nipvs_agent_config_last_reload_successful 1\n"),
        "{m}"
    );
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_service_removed_from_the_file_is_removed_from_the_kernel() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let two = text(
        "1h",
        20,
        &format!("[[service]]\nprotocol = \"tcp\"\naddress = \"{VIP}\"\nport = 443\n[[service.server]]\naddress = \"{A}\"\n"),
    );
    let path = write_file("reload-remove.toml", &two);
    let options = AgentOptions::default().with_config_path(&path);
    let agent = start(&kernel, config(&two), &prober, options);
    advance(MS).await;
    assert!(kernel.init_netns().service(&key(443)).is_some());
    kernel.clear_requests();
    std::fs::write(&path, text("1h", 20, "")).unwrap();
    assert!(agent.handle.reload().await);
    advance(MS).await;
    assert_eq!(changes(&kernel), [Request::DeleteService(key(443))]);
    assert!(kernel.init_netns().service(&key(443)).is_none());
    agent.stop(false).await;
}

/// A service of another tool: 198.51.100.1:80 with one server.
fn foreign(kernel: &Kernel) -> ServiceKey {
    let key = ServiceKey::tcp(ip("198.51.100.1"), 80);
    let errnos = kernel.init_netns().apply(&[
        Request::add_service(Service::new(key)),
        Request::AddDestination(key, Destination::new(ip("10.9.9.9"), 80)),
    ]);
    assert_eq!(errnos, [0, 0]);
    key
}

#[tokio::test(start_paused = true)]
async fn another_owners_service_is_left_alone_even_at_removal() {
    let kernel = Kernel::new();
    let other = foreign(&kernel);
    let before = kernel.init_netns().service(&other).unwrap();
    kernel.clear_requests();
    let prober = Scripted::default();
    let agent = start(
        &kernel,
        config(&text("30s", 20, "")),
        &prober,
        AgentOptions::default(),
    );
    advance(65 * S).await;
    agent.stop(true).await;
    assert!(
        changes(&kernel)
            .iter()
            .all(|r| r.service_key() != Some(other)),
        "{:?}",
        changes(&kernel)
    );
    assert_eq!(kernel.init_netns().service(&other), Some(before));
    assert!(kernel.init_netns().service(&key(80)).is_none());
}

#[tokio::test(start_paused = true)]
async fn a_change_behind_the_agents_back_is_repaired_at_the_next_resync() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let agent = start(
        &kernel,
        config(&text("30s", 20, "")),
        &prober,
        AgentOptions::default(),
    );
    advance(MS).await;
    let edit = Request::EditDestination(key(80), Destination::new(ip(A), 80).with_weight(99));
    assert_eq!(kernel.init_netns().apply(&[edit]), [0]);
    advance(30 * S - 2 * MS).await; // t0 + 30 s - 1 ms
    assert_eq!(weight(&kernel, &key(80), A), "99");
    advance(2 * MS).await;
    assert_eq!(weight(&kernel, &key(80), A), "10");
    let last = agent.handle.state().await.unwrap().last_sync.unwrap();
    assert!(
        last.listed && last.complete && last.requests == 1,
        "{last:?}"
    );
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn stop_leaves_the_table_or_removes_the_agents_services() {
    for remove in [false, true] {
        let kernel = Kernel::new();
        let prober = Scripted::default();
        let options = AgentOptions::default().with_remove_on_exit(remove);
        let agent = start(&kernel, config(&text("1h", 20, "")), &prober, options);
        advance(MS).await;
        kernel.clear_requests();
        agent.handle.stop();
        agent.task.await.unwrap().unwrap();
        if remove {
            assert_eq!(changes(&kernel), [Request::DeleteService(key(80))]);
        } else {
            assert_eq!(changes(&kernel), Vec::<Request>::new());
            assert_eq!(weight(&kernel, &key(80), B), "20");
        }
    }
}
