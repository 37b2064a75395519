//! ipvs-agent with an IPv6 service and IPv6 real servers (TCP echo servers
//! in namespaces of their own, wired by IPv6): the table it makes, a server
//! killed (weight 0, its held connection kept, new ones to the others) and
//! restarted (its weight back).

use crate::agent_support::*;
use crate::common::*;

use std::net::{IpAddr, SocketAddr};

use crate::agent_kill::kill_and_restore;
use ipvsnl::Client;
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

    kill_and_restore("agent IPv6", &agent, &services, &rs, vip);
}
