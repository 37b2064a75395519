//! ipvs-agent against the kernel with a flapping real server: its
//! listener toggled every check interval, faster than `rise` and `fall`
//! let a state change through. The kernel's weight must change no more
//! often than the hysteresis permits.

use crate::agent_support::*;
use crate::common::*;

use std::net::SocketAddr;
use std::thread;
use std::time::{Duration, Instant};

use ipvsnl::Client;
use ipvsnl_test_support::lab::backends::{Backend, Serve};

/// The agent's HTTP endpoint in the test's (own) namespace.
const METRICS_PORT: u16 = 9102;

/// Rise and fall of the test's check.
const RISE: f64 = 3.0;
const FALL: f64 = 3.0;

/// The check: every 200 ms (the flapping's period too), rise 3, fall 3.
const FLAP_CHECK: &str =
    r#"{ kind = "tcp", interval = "200ms", timeout = "200ms", fall = 3, rise = 3 }"#;

/// How long the server flaps.
const FLAPPING: Duration = Duration::from_secs(6);

/// What `/metrics` says of the flapping server at one scrape.
#[derive(Debug, Clone, Copy)]
struct Counts {
    checks: f64,
    failures: f64,
    to_down: f64,
    to_up: f64,
    requests: f64,
}

impl Counts {
    /// One scrape: the service's only server is `label`, so the TCP
    /// checks' count is its.
    fn read(agent: &Agent, label: &str) -> Counts {
        let m = agent.metrics();
        let server = ("server", label);
        Counts {
            checks: value(
                &m,
                "ipvs_agent_check_duration_seconds_count",
                &[("kind", "tcp")],
            ),
            // Every reason (refused, or a timeout if the guest stalls).
            failures: m
                .iter()
                .filter(|s| {
                    s.name == "ipvs_agent_check_failures_total"
                        && s.labels.get("server").map(String::as_str) == Some(label)
                })
                .map(|s| s.value.parse::<f64>().unwrap())
                .sum(),
            to_down: value(
                &m,
                "ipvs_agent_transitions_total",
                &[server, ("to", "down")],
            ),
            to_up: value(&m, "ipvs_agent_transitions_total", &[server, ("to", "up")]),
            requests: value(&m, "ipvs_agent_sync_requests_total", &[("outcome", "done")]),
        }
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn agent_a_flapping_server_does_not_flap_the_kernel_faster_than_its_hysteresis() {
    fresh_netns();
    let rs = Backend::start(1);
    rs.serve(8080, Serve::Close);
    let server = SocketAddr::new(rs.addr(), 8080);
    let services = [Svc::tcp("10.40.0.1", 80, vec![(rs.addr(), 8080, 1)]).checked(FLAP_CHECK)];
    let key = services[0].key();
    add_vips(&services);
    let dir = Scratch::new("flap");
    let file = dir.path("agent.toml");
    std::fs::write(&file, config_text(&services)).unwrap();
    let mut agent = Agent::start(&file, METRICS_PORT, dir.path("agent.log"));
    agent.wait_ready();
    let label = server.to_string();
    // Up for good (a first failure of a server started provisionally up
    // takes it out at once: not what this test is about).
    let settled = wait_for(PATIENCE, || {
        (Counts::read(&agent, &label).checks >= RISE).then_some(())
    });
    assert!(settled.is_some(), "no checks; log:\n{}", agent.log());
    let mut c = Client::new().unwrap();
    assert_eq!(kernel_weight(&mut c, &key, server), Some(1));
    let before = Counts::read(&agent, &label);

    // Flap: the listener toggled every interval, while the kernel's weight
    // is sampled every few ms on another thread's client.
    let sampling = std::sync::atomic::AtomicBool::new(true);
    let (weights, toggles) = thread::scope(|s| {
        let sampler = s.spawn(|| {
            let mut c = Client::new().unwrap();
            let mut seen = vec![kernel_weight(&mut c, &key, server)];
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                let w = kernel_weight(&mut c, &key, server);
                if seen.last() != Some(&w) {
                    seen.push(w);
                }
                thread::sleep(Duration::from_millis(5));
            }
            seen
        });
        let started = Instant::now();
        let mut toggles = 0;
        let mut up = true;
        while started.elapsed() < FLAPPING {
            thread::sleep(Duration::from_millis(200));
            if up {
                rs.stop(8080);
            } else {
                rs.serve(8080, Serve::Close);
            }
            up = !up;
            toggles += 1;
        }
        if !up {
            rs.serve(8080, Serve::Close);
        }
        let after = Counts::read(&agent, &label);
        sampling.store(false, std::sync::atomic::Ordering::Relaxed);
        (sampler.join().unwrap(), (toggles, after))
    });
    let (toggles, after) = toggles;
    let checks = after.checks - before.checks;
    let failures = after.failures - before.failures;
    let passes = checks - failures;
    let to_down = after.to_down - before.to_down;
    let to_up = after.to_up - before.to_up;
    let requests = after.requests - before.requests;
    let changes = weights.len() - 1;
    eprintln!(
        "agent flap: {toggles} toggles, {checks} checks ({failures} failed), \
         {to_down} down and {to_up} up transitions, {requests} requests, \
         {changes} weight changes seen ({weights:?})"
    );
    // It flapped faster than the hysteresis: both states seen many times.
    assert!(
        failures >= 5.0 && passes >= 5.0,
        "{checks} checks, {failures} failed: not flapping; log:\n{}",
        agent.log()
    );
    // Each transition takes `fall` (or `rise`) consecutive results of its
    // own, all within the flapping (the server was up for good before it).
    assert!(
        to_down <= (failures / FALL).floor() && to_up <= (passes / RISE).floor(),
        "{to_down} down for {failures} failures, {to_up} up for {passes} passes; log:\n{}",
        agent.log()
    );
    // They alternate, from up.
    assert!(
        to_up <= to_down && to_down <= to_up + 1.0,
        "{to_down} down and {to_up} up transitions"
    );
    // Every kernel change is a transition's (one request each at most,
    // syncs coalesce), and every weight change seen is a request's.
    assert!(
        requests <= to_down + to_up,
        "{requests} requests for {} transitions",
        to_down + to_up
    );
    assert!(
        changes as f64 <= requests,
        "{changes} weight changes seen ({weights:?}) for {requests} requests"
    );
    // The weights seen are the configured one and 0 only.
    for w in &weights {
        assert!(matches!(w, Some(0 | 1)), "{weights:?}");
    }
}
