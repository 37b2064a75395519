//! ipvs-agent with an IPv6 service and IPv6 real servers (TCP echo servers
//! in namespaces of their own, wired by IPv6): the table it makes, a server
//! killed (weight 0, its held connection kept, new ones to the others) and
//! restarted (its weight back).

use crate::agent_support::*;
use crate::common::*;

use std::net::{IpAddr, SocketAddr};

use ipvsnl::Client;
use ipvsnl_test_support::client::Conn;
use ipvsnl_test_support::commands::ip_batch;
use ipvsnl_test_support::lab::backends::{Backend, Serve};
use ipvsnl_test_support::oracle::kernel_table;
use ipvsnl_test_support::table_diff::assert_tables_equal;

/// The agent's HTTP endpoint in the test's (own) namespace.
const METRICS_PORT: u16 = 9102;
/// The IPv6 VIP, on the director's `lo`.
const VIP: &str = "fd00:40::1";

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn agent_ipv6_servers_are_checked_drained_and_restored() {
    fresh_netns();
    let rs: Vec<Backend> = (1..=3).map(Backend::start_v6).collect();
    for b in &rs {
        b.serve(8080, Serve::Echo);
    }
    let addrs: Vec<IpAddr> = rs.iter().map(Backend::addr).collect();
    assert!(addrs.iter().all(IpAddr::is_ipv6), "{addrs:?}");
    let services =
        [Svc::tcp(VIP, 80, addrs.iter().map(|a| (*a, 8080, 1)).collect()).checked(FAST_CHECK)];
    let key = services[0].key();
    let vip = SocketAddr::new(VIP.parse().unwrap(), 80);
    ip_batch(&[format!("addr add {VIP}/128 dev lo")]);
    let dir = Scratch::new("ipv6");
    let file = dir.path("agent.toml");
    std::fs::write(&file, config_text(&services)).unwrap();
    let mut agent = Agent::start(&file, METRICS_PORT, dir.path("agent.log"));
    agent.wait_ready();
    let mut c = Client::new().unwrap();
    assert_tables_equal("at start", &kernel_table(&mut c), &wanted_table(&services));
    let m = agent.metrics();
    for a in &addrs {
        let label = SocketAddr::new(*a, 8080).to_string();
        let up = value(&m, "ipvs_agent_server_up", &[("server", label.as_str())]);
        assert_eq!(up, 1.0, "{label}; log:\n{}", agent.log());
    }

    let mut held = hold_one_each(vip, &addrs);
    let victim = SocketAddr::new(rs[1].addr(), 8080);
    let label = victim.to_string();
    let server = [("server", label.as_str())];

    // Kill: weight 0, the held connection goes on, new ones reach the others.
    rs[1].stop(8080);
    let out = wait_weight(&mut c, &agent, &key, victim, 0, REACTION_LIMIT);
    eprintln!("agent IPv6 kill: {victim} at weight 0 after {out:?} (interval 200 ms, fall 2)");
    assert_alive("after the drain", &mut held);
    for _ in 0..20 {
        let conn = Conn::open(vip, None);
        assert_ne!(
            conn.server(),
            victim.ip(),
            "a new connection to the dead server"
        );
        conn.reset();
    }
    for b in [&rs[0], &rs[2]] {
        let w = kernel_weight(&mut c, &key, SocketAddr::new(b.addr(), 8080));
        assert_eq!(w, Some(1), "{}", b.addr());
    }
    let m = agent.metrics();
    let refused = value(
        &m,
        "ipvs_agent_check_failures_total",
        &[server[0], ("reason", "refused")],
    );
    assert!(
        refused >= 2.0,
        "refused failures: {refused}; log:\n{}",
        agent.log()
    );
    assert_eq!(value(&m, "ipvs_agent_server_up", &server), 0.0);

    // Restart: its full weight back after `rise` successes.
    rs[1].serve(8080, Serve::Echo);
    let back = wait_weight(&mut c, &agent, &key, victim, 1, REACTION_LIMIT);
    eprintln!("agent IPv6 restart: {victim} at weight 1 after {back:?} (rise 2)");
    assert_eq!(agent.metric("ipvs_agent_server_up", &server), 1.0);
    assert_alive("after the restart", &mut held);
    assert_tables_equal("restored", &kernel_table(&mut c), &wanted_table(&services));
    let reached = wait_for(PATIENCE, || {
        let conn = Conn::open(vip, None);
        let s = conn.server();
        conn.reset();
        (s == victim.ip()).then_some(())
    });
    assert!(reached.is_some(), "no new connection reached {victim}");
}
