//! The kill-and-restart scenario the ipvs-agent kernel tests run for each
//! address family (`agent_health`: IPv4, `agent_ipv6`): one real server's
//! listener closed and opened again behind a running agent.

use crate::agent_support::*;

use std::net::{IpAddr, SocketAddr};

use ipvsnl::Client;
use ipvsnl_test_support::client::Conn;
use ipvsnl_test_support::lab::backends::{Backend, Serve};
use ipvsnl_test_support::oracle::kernel_table;
use ipvsnl_test_support::table_diff::assert_tables_equal;

/// With one connection held to each of `rs` (TCP echo servers on port
/// 8080, weight 1, behind `services[0]` at `vip`), closes `rs[1]`'s
/// listener and asserts: its weight is 0 in the kernel within
/// [`REACTION_LIMIT`]; the held connections (its own too) go on; 20 new
/// connections reach only the others, which keep weight 1; its metrics
/// say `refused` and one transition down. Then it listens again: its
/// weight is back within the limit (after `rise` passes), one transition
/// up, the held connections go on, the table is the configuration's and
/// new connections reach it. `what` names the case in the printed times.
pub fn kill_and_restore(
    what: &str,
    agent: &Agent,
    services: &[Svc],
    rs: &[Backend],
    vip: SocketAddr,
) {
    let key = services[0].key();
    let addrs: Vec<IpAddr> = rs.iter().map(Backend::addr).collect();
    let mut c = Client::new().unwrap();
    let mut held = hold_one_each(vip, &addrs);
    let victim = SocketAddr::new(rs[1].addr(), 8080);
    let label = victim.to_string();
    let server = [("server", label.as_str())];

    // Kill: new connections refused, the established ones go on.
    rs[1].stop(8080);
    let out = wait_weight(&mut c, agent, &key, victim, 0, REACTION_LIMIT);
    eprintln!("{what} kill: {victim} at weight 0 after {out:?} (interval 200 ms, fall 2)");
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
    // The others still hold their weight.
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
    let down = value(
        &m,
        "ipvs_agent_transitions_total",
        &[server[0], ("to", "down")],
    );
    assert_eq!(down, 1.0, "transitions down");

    // Restart: back at its weight after `rise` successes.
    rs[1].serve(8080, Serve::Echo);
    let back = wait_weight(&mut c, agent, &key, victim, 1, REACTION_LIMIT);
    eprintln!("{what} restart: {victim} at weight 1 after {back:?} (rise 2)");
    let m = agent.metrics();
    assert_eq!(value(&m, "ipvs_agent_server_up", &server), 1.0);
    let up = value(
        &m,
        "ipvs_agent_transitions_total",
        &[server[0], ("to", "up")],
    );
    assert_eq!(up, 1.0, "transitions up");
    assert_alive("after the restart", &mut held);
    assert_tables_equal("restored", &kernel_table(&mut c), &wanted_table(services));
    // New connections reach it again.
    let reached = wait_for(PATIENCE, || {
        let conn = Conn::open(vip, None);
        let s = conn.server();
        conn.reset();
        (s == victim.ip()).then_some(())
    });
    assert!(reached.is_some(), "no new connection reached {victim}");
}
