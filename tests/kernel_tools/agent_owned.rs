//! ipvs-agent's ownership record against the kernel: a service removed
//! from the file while the agent was down is drained (its servers at
//! weight 0 while a connection through it is held, the connection going
//! on) and then removed at the next start, while another tool's service
//! is left as it was; and an agent killed at moments spread over a reload
//! that removes one service and adds another (between a kernel change and
//! the record's write) leaves, at the next start, exactly the file's
//! services and the foreign one. Each agent keeps its record in the
//! test's scratch directory (`--state-dir`, `agent_support`).

use crate::agent_support::*;
use crate::common::*;

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
use ipvsnl::{Client, Destination, Service, ServiceKey};
use ipvsnl_test_support::lab::backends::{Backend, Serve};

const METRICS_PORT: u16 = 9102;

/// Another tool's service: 10.40.0.9:80 with 10.99.0.9:80 at weight 7
/// (no VIP, no server behind it: the kernel holds it all the same).
fn add_foreign(c: &mut Client) -> ServiceKey {
    let key = ServiceKey::tcp("10.40.0.9".parse().unwrap(), 80);
    let mut t = Table::new();
    t.insert(
        Service::new(key),
        [Destination::new("10.99.0.9".parse().unwrap(), 80).with_weight(7)],
    );
    let mut s = Syncer::new(PlanOptions::new(Scope::keys([key])));
    assert!(s.sync(c, &t).unwrap().is_complete());
    key
}

fn foreign_intact(c: &mut Client, key: &ServiceKey) {
    let server: SocketAddr = "10.99.0.9:80".parse().unwrap();
    assert_eq!(
        kernel_weight(c, key, server),
        Some(7),
        "the foreign service"
    );
}

/// The services of the kernel's table, sorted.
fn held_keys(c: &mut Client) -> Vec<ServiceKey> {
    let mut keys: Vec<ServiceKey> = c
        .services()
        .unwrap()
        .into_iter()
        .map(|s| s.service.key)
        .collect();
    keys.sort();
    keys
}

/// The file for `services`, drains at most 3 s.
fn file_text(services: &[&Svc]) -> String {
    let owned: Vec<Svc> = services
        .iter()
        .map(|s| Svc {
            protocol: s.protocol,
            vip: s.vip,
            port: s.port,
            check: s.check.clone(),
            servers: s.servers.clone(),
        })
        .collect();
    config_text(&owned).replace("[agent]\n", "[agent]\ndrain_max = \"3s\"\n")
}

/// Two echo servers on 8080, and the services `10.40.0.N:80` over them.
fn setup(vips: &[&str]) -> (Vec<Backend>, Vec<Svc>) {
    fresh_netns();
    let rs: Vec<Backend> = (1..=2).map(Backend::start).collect();
    for b in &rs {
        b.serve(8080, Serve::Echo);
    }
    let services: Vec<Svc> = vips
        .iter()
        .map(|v| Svc::tcp(v, 80, rs.iter().map(|b| (b.addr(), 8080, 1)).collect()))
        .collect();
    add_vips(&services);
    (rs, services)
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn agent_restart_drains_and_removes_a_service_removed_while_it_was_down() {
    let (rs, services) = setup(&["10.40.0.1", "10.40.0.3"]);
    let (a, b) = (&services[0], &services[1]);
    let mut c = Client::new().unwrap();
    let foreign = add_foreign(&mut c);
    let dir = Scratch::new("owned-restart");
    let file = dir.path("agent.toml");
    std::fs::write(&file, file_text(&[a, b])).unwrap();
    let mut agent = Agent::start(&file, METRICS_PORT, dir.path("agent-1.log"));
    agent.wait_ready();
    let addrs: Vec<IpAddr> = rs.iter().map(Backend::addr).collect();
    let vip_b = SocketAddr::new(b.vip, 80);
    let mut held = hold_one_each(vip_b, &addrs);
    // Stopped (SIGTERM: the table left as it is); B leaves the file.
    agent.signal(libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(500));
    agent.kill();
    std::fs::write(&file, file_text(&[a])).unwrap();

    let mut agent = Agent::start(&file, METRICS_PORT, dir.path("agent-2.log"));
    agent.wait_ready();
    // B's servers drain: weight 0, the held connections going on.
    for addr in &addrs {
        let server = SocketAddr::new(*addr, 8080);
        let w = wait_weight(&mut c, &agent, &b.key(), server, 0, REACTION_LIMIT);
        eprintln!("owned restart: {server} of {vip_b} at weight 0 after {w:?}");
    }
    assert_alive("while B drains", &mut held);
    for h in held {
        h.reset();
    }
    // Then B is removed (its drain at most 3 s, seen within a poll).
    let gone = wait_for(PATIENCE, || {
        (!held_keys(&mut c).contains(&b.key())).then_some(())
    });
    assert!(gone.is_some(), "B not removed; log:\n{}", agent.log());
    assert_eq!(held_keys(&mut c), {
        let mut k = vec![a.key(), foreign];
        k.sort();
        k
    });
    for addr in &addrs {
        let w = kernel_weight(&mut c, &a.key(), SocketAddr::new(*addr, 8080));
        assert_eq!(w, Some(1), "A's {addr}");
    }
    foreign_intact(&mut c, &foreign);
    agent.kill();
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn agent_killed_during_a_reload_converges_at_the_next_start_without_a_leak() {
    let (_rs, services) = setup(&["10.40.0.1", "10.40.0.3", "10.40.0.5"]);
    let (a, b, x) = (&services[0], &services[1], &services[2]);
    let mut c = Client::new().unwrap();
    let foreign = add_foreign(&mut c);
    let mut want = vec![a.key(), foreign];
    want.sort();
    let dir = Scratch::new("owned-crash");
    let file = dir.path("agent.toml");
    for i in 0..10u64 {
        // Running with A and B; a reload to A and X; killed 0 to 45 ms
        // after the SIGHUP (before, during or after its sync).
        std::fs::write(&file, file_text(&[a, b])).unwrap();
        let mut agent = Agent::start(&file, METRICS_PORT, dir.path(&format!("run-{i}.log")));
        agent.wait_ready();
        std::fs::write(&file, file_text(&[a, x])).unwrap();
        agent.signal(libc::SIGHUP);
        std::thread::sleep(Duration::from_millis(5 * i));
        agent.kill();
        let seen = held_keys(&mut c);
        // Started again with A alone: exactly A and the foreign service.
        std::fs::write(&file, file_text(&[a])).unwrap();
        let mut agent = Agent::start(&file, METRICS_PORT, dir.path(&format!("next-{i}.log")));
        agent.wait_ready();
        let converged = wait_for(PATIENCE, || (held_keys(&mut c) == want).then_some(()));
        assert!(
            converged.is_some(),
            "kill {i} ({} ms): left {:?}, then {:?}; log:\n{}",
            5 * i,
            seen,
            held_keys(&mut c),
            agent.log()
        );
        eprintln!(
            "owned crash {i}: killed at {} ms, the table then {seen:?}: converged",
            5 * i
        );
        foreign_intact(&mut c, &foreign);
        agent.kill();
    }
}
