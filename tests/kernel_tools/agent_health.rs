//! ipvs-agent against the kernel with real servers (TCP echo, HTTP, HTTPS,
//! DNS, each in a namespace of its own) and real traffic: the table it
//! makes at start, a server killed and restarted, a server that never
//! answers.

use crate::agent_support::*;
use crate::common::*;

use std::net::SocketAddr;

use crate::agent_kill::kill_and_restore;
use ipvsnl::Client;
use ipvsnl_test_support::lab::backends::{Backend, Serve};
use ipvsnl_test_support::oracle::kernel_table;
use ipvsnl_test_support::table_diff::assert_tables_equal;

/// The agent's HTTP endpoint in each test's (own) namespace.
const METRICS_PORT: u16 = 9102;

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn agent_start_makes_the_table_of_the_file_and_checks_every_kind() {
    fresh_netns();
    let rs: Vec<Backend> = (1..=2).map(Backend::start).collect();
    for b in &rs {
        b.serve(8080, Serve::Echo);
        b.serve(8081, Serve::Http);
        b.serve(8443, Serve::Https);
        b.serve(5353, Serve::Dns);
    }
    // Loose timings: this test proves what each kind of check accepts, and
    // a TLS handshake of a debug build under TCG on a loaded machine took
    // over 900 ms.
    let slow = |kind: &str, extra: &str| {
        format!(
            r#"{{ kind = "{kind}", interval = "3s", timeout = "3s", fall = 2, rise = 2{extra} }}"#
        )
    };
    let each = |port: u16, base: u32| -> Vec<_> {
        rs.iter()
            .zip(0..)
            .map(|(b, i)| (b.addr(), port, base + i))
            .collect()
    };
    let services = [
        Svc::tcp("10.40.0.1", 80, each(8080, 1)).checked(&slow("tcp", "")),
        Svc::tcp("10.40.0.2", 80, each(8081, 3)).checked(&slow(
            "http",
            r#", path = "/health", body_contains = "10.30.""#,
        )),
        Svc::tcp("10.40.0.3", 443, each(8443, 5)).checked(&slow("https", ", tls_verify = false")),
        Svc {
            protocol: "udp",
            ..Svc::tcp("10.40.0.4", 53, each(5353, 7))
        }
        .checked(&slow("dns", r#", query = "health.example.", type = "A""#)),
    ];
    add_vips(&services);
    let dir = Scratch::new("start");
    let file = dir.path("agent.toml");
    std::fs::write(&file, config_text(&services)).unwrap();

    let mut agent = Agent::start(&file, METRICS_PORT, dir.path("agent.log"));
    let took = agent.wait_ready();
    eprintln!("agent start: /ready after {took:?}");
    let mut c = Client::new().unwrap();
    assert_tables_equal(
        "after the first sync",
        &kernel_table(&mut c),
        &wanted_table(&services),
    );

    // Every server checked at least once by its kind, none failing.
    let m = agent.metrics();
    for kind in ["tcp", "http", "https", "dns"] {
        let n = value(
            &m,
            "ipvs_agent_check_duration_seconds_count",
            &[("kind", kind)],
        );
        assert!(n >= 2.0, "{kind} checks: {n}; log:\n{}", agent.log());
    }
    let up: Vec<_> = m
        .iter()
        .filter(|s| s.name == "ipvs_agent_server_up")
        .collect();
    assert_eq!(up.len(), 8, "{up:?}");
    for s in &up {
        assert_eq!(s.value, "1", "{s:?}; log:\n{}", agent.log());
    }
    let failures: Vec<_> = m
        .iter()
        .filter(|s| s.name == "ipvs_agent_check_failures_total")
        .collect();
    assert!(failures.is_empty(), "{failures:?}");
    for b in &rs {
        for port in [8080, 8081, 8443, 5353] {
            assert!(b.accepted(port) > 0, "{}:{port} never checked", b.addr());
        }
    }
    assert_eq!(agent.ready_status(), 200);
    assert_eq!(value(&m, "ipvs_agent_ready", &[]), 1.0);
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn agent_kill_drains_the_server_keeps_its_connection_and_restores_it() {
    fresh_netns();
    let rs: Vec<Backend> = (1..=3).map(Backend::start).collect();
    for b in &rs {
        b.serve(8080, Serve::Echo);
    }
    let addrs: Vec<_> = rs.iter().map(Backend::addr).collect();
    let services = [Svc::tcp(
        "10.40.0.1",
        80,
        addrs.iter().map(|a| (*a, 8080, 1)).collect(),
    )
    .checked(FAST_CHECK)];
    let vip: SocketAddr = "10.40.0.1:80".parse().unwrap();
    add_vips(&services);
    let dir = Scratch::new("kill");
    let file = dir.path("agent.toml");
    std::fs::write(&file, config_text(&services)).unwrap();
    let mut agent = Agent::start(&file, METRICS_PORT, dir.path("agent.log"));
    agent.wait_ready();
    let mut c = Client::new().unwrap();
    assert_tables_equal("at start", &kernel_table(&mut c), &wanted_table(&services));

    kill_and_restore("agent", &agent, &services, &rs, vip);
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn agent_a_server_that_never_answers_fails_by_timeout() {
    fresh_netns();
    let check = r#"{ kind = "http", interval = "500ms", timeout = "300ms", fall = 2, rise = 2 }"#;
    let (rs, service) = http_and_silent(check);
    let services = [service];
    let key = services[0].key();
    add_vips(&services);
    let dir = Scratch::new("silent");
    let file = dir.path("agent.toml");
    std::fs::write(&file, config_text(&services)).unwrap();
    let mut agent = Agent::start(&file, METRICS_PORT, dir.path("agent.log"));
    agent.wait_ready();

    let mut c = Client::new().unwrap();
    let silent = SocketAddr::new(rs[1].addr(), 8081);
    wait_weight(&mut c, &agent, &key, silent, 0, REACTION_LIMIT);
    let label = silent.to_string();
    let timeouts = wait_for(PATIENCE, || {
        let n = agent.metric(
            "ipvs_agent_check_failures_total",
            &[("server", &label), ("reason", "timeout")],
        );
        (n >= 2.0).then_some(n)
    });
    assert!(
        timeouts.is_some(),
        "no timeout failures; log:\n{}",
        agent.log()
    );
    // The silent server fails by timeout only.
    let m = agent.metrics();
    let reasons: Vec<_> = m
        .iter()
        .filter(|s| s.name == "ipvs_agent_check_failures_total" && s.labels["server"] == label)
        .map(|s| s.labels["reason"].clone())
        .collect();
    assert_eq!(reasons, ["timeout"], "log:\n{}", agent.log());
    assert_eq!(
        value(&m, "ipvs_agent_server_up", &[("server", &label)]),
        0.0
    );
    // The one that answers stays (or comes back) in.
    let healthy = SocketAddr::new(rs[0].addr(), 8081);
    wait_weight(&mut c, &agent, &key, healthy, 1, PATIENCE);
    assert!(
        agent.log().contains("timeout"),
        "the log names no timeout:\n{}",
        agent.log()
    );
    // The silent server holds every check's connection until the check
    // gives up: it accepted them.
    assert!(rs[1].accepted(8081) >= 2);
}
