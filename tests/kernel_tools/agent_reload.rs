//! ipvs-agent's lifecycle against the kernel with real servers and held
//! connections: a reload (SIGHUP) that changes one weight sends one
//! request; a file with an error changes nothing; an agent killed and
//! started again over its table sends nothing and cuts nothing.

use crate::agent_support::*;
use crate::common::*;

use std::net::{IpAddr, SocketAddr};

use ipvsnl::Client;
use ipvsnl_test_support::client::Conn;
use ipvsnl_test_support::lab::backends::{Backend, Serve};
use ipvsnl_test_support::oracle::kernel_table;
use ipvsnl_test_support::table_diff::assert_tables_equal;

const METRICS_PORT: u16 = 9102;

/// Three echo servers behind 10.40.0.1:80, one connection held to each,
/// and the agent ready: what both tests start from.
struct Setup {
    rs: Vec<Backend>,
    services: Vec<Svc>,
    file: std::path::PathBuf,
    dir: Scratch,
    held: Vec<Conn>,
    c: Client,
}

const VIP: &str = "10.40.0.1:80";

fn setup(test: &str) -> (Setup, Agent) {
    fresh_netns();
    let rs: Vec<Backend> = (1..=3).map(Backend::start).collect();
    for b in &rs {
        b.serve(8080, Serve::Echo);
    }
    let addrs: Vec<IpAddr> = rs.iter().map(Backend::addr).collect();
    let services = vec![Svc::tcp(
        "10.40.0.1",
        80,
        addrs.iter().map(|a| (*a, 8080, 1)).collect(),
    )];
    add_vips(&services);
    let dir = Scratch::new(test);
    let file = dir.path("agent.toml");
    std::fs::write(&file, config_text(&services)).unwrap();
    let mut agent = Agent::start(&file, METRICS_PORT, dir.path("agent-1.log"));
    agent.wait_ready();
    let mut c = Client::new().unwrap();
    assert_tables_equal("at start", &kernel_table(&mut c), &wanted_table(&services));
    let held = hold_one_each(VIP.parse().unwrap(), &addrs);
    let setup = Setup {
        rs,
        services,
        file,
        dir,
        held,
        c,
    };
    (setup, agent)
}

/// Waits until the metric `name` is `want`.
fn wait_metric(agent: &Agent, name: &str, want: f64) {
    let got = wait_for(PATIENCE, || (agent.metric(name, &[]) == want).then_some(()));
    assert!(
        got.is_some(),
        "{name} = {}, not {want}; log:\n{}",
        agent.metric(name, &[]),
        agent.log()
    );
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn agent_reload_of_one_weight_sends_one_request_and_a_bad_file_nothing() {
    let (mut s, agent) = setup("reload");
    let key = s.services[0].key();
    let changed = SocketAddr::new(s.rs[1].addr(), 8080);
    let before = agent.requests_sent();
    assert!(before >= 4.0, "the first sync sent {before} requests");

    // One server's weight changed: exactly one request (its edit).
    s.services[0].servers[1].2 = 5;
    std::fs::write(&s.file, config_text(&s.services)).unwrap();
    agent.signal(libc::SIGHUP);
    wait_metric(&agent, "ipvs_agent_config_reloads_total", 1.0);
    wait_weight(&mut s.c, &agent, &key, changed, 5, PATIENCE);
    let sent = wait_for(PATIENCE, || {
        let d = agent.requests_sent() - before;
        (d >= 1.0).then_some(d)
    });
    assert_eq!(sent, Some(1.0), "requests of the reload");
    assert_alive("after the reload", &mut s.held);
    assert_tables_equal(
        "after the reload",
        &kernel_table(&mut s.c),
        &wanted_table(&s.services),
    );
    assert_eq!(
        agent.metric("ipvs_agent_config_last_reload_successful", &[]),
        1.0
    );
    // The other servers kept their health: no transition anywhere.
    let m = agent.metrics();
    for sample in m
        .iter()
        .filter(|x| x.name == "ipvs_agent_transitions_total")
    {
        assert_eq!(sample.value, "0", "{sample:?}");
    }

    // A file with an error: refused whole, the table as it was.
    let good = kernel_table(&mut s.c);
    let bad = config_text(&s.services).replace("weight = 5", "weight = -5");
    assert_ne!(bad, config_text(&s.services));
    std::fs::write(&s.file, bad).unwrap();
    agent.signal(libc::SIGHUP);
    wait_metric(&agent, "ipvs_agent_config_reload_errors_total", 1.0);
    assert_eq!(
        agent.metric("ipvs_agent_config_last_reload_successful", &[]),
        0.0
    );
    assert_eq!(agent.metric("ipvs_agent_config_reloads_total", &[]), 1.0);
    assert_eq!(
        agent.requests_sent() - before,
        1.0,
        "requests after the bad file"
    );
    assert_tables_equal("after a bad file", &kernel_table(&mut s.c), &good);
    let log = agent.log();
    assert!(
        log.contains("`weight` must be an integer"),
        "the log does not say why:\n{log}"
    );
    assert_alive("after the bad file", &mut s.held);
    drop(s.dir);
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn agent_sigkill_and_restart_sends_nothing_and_cuts_nothing() {
    let (mut s, agent) = setup("restart");
    let table = kernel_table(&mut s.c);
    agent.kill();
    assert_alive("with the agent dead", &mut s.held);
    assert_tables_equal("with the agent dead", &kernel_table(&mut s.c), &table);

    let mut again = Agent::start(&s.file, METRICS_PORT, s.dir.path("agent-2.log"));
    again.wait_ready();
    assert_eq!(again.requests_sent(), 0.0, "log:\n{}", again.log());
    assert!(again.metric("ipvs_agent_syncs_total", &[("result", "complete")]) >= 1.0);
    // A few rounds of checks later, still nothing sent.
    let rounds = wait_for(PATIENCE, || {
        let n = again.metric(
            "ipvs_agent_check_duration_seconds_count",
            &[("kind", "tcp")],
        );
        (n >= 4.0 * s.rs.len() as f64).then_some(())
    });
    assert!(rounds.is_some(), "checks do not run; log:\n{}", again.log());
    assert_eq!(again.requests_sent(), 0.0, "log:\n{}", again.log());
    assert_tables_equal("after the restart", &kernel_table(&mut s.c), &table);
    assert_alive("after the restart", &mut s.held);
    // New connections still spread over every server.
    let vip: SocketAddr = VIP.parse().unwrap();
    let fresh = hold_one_each(vip, &s.rs.iter().map(Backend::addr).collect::<Vec<_>>());
    for c in fresh {
        c.reset();
    }
}
