//! The decision layer: server health to the desired table, quorum, sorry
//! server, withdrawal, removal once drained (through the library's pure
//! planner), and the whole chain from check results against a clock the
//! test holds.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use ipvs_agent::check::{Failure, Health, Outcome, Schedule, ServerHealth, Timetable};
use ipvs_agent::config::{parse_str, Config, RealServer};
use ipvs_agent::desired::{desired, plan_options, ServiceState};
use ipvsnl::sync::{plan, DrainLedger, Table};
use ipvsnl::{Request, ServiceKey};

fn config(service_extra: &str, servers: &[(&str, u32)]) -> Config {
    let mut text = format!(
        "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n{service_extra}\n"
    );
    for (addr, weight) in servers {
        text.push_str(&format!(
            "[[service.server]]\naddress = \"{addr}\"\nweight = {weight}\n\
             check = {{ kind = \"tcp\", interval = \"2s\", timeout = \"1s\", rise = 2, fall = 3 }}\n"
        ));
    }
    parse_str("t.toml", &text).unwrap_or_else(|e| panic!("{e}"))
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// The desired table with the servers named in `down` failing.
fn with_down(c: &Config, down: &[&str]) -> ipvs_agent::desired::Desired {
    let down: Vec<IpAddr> = down.iter().map(|s| ip(s)).collect();
    desired(c, |_, s: &RealServer| {
        if down.contains(&s.destination.addr) {
            Health::Down
        } else {
            Health::Up
        }
    })
}

/// Each server's weight in the table, by address ("-" when absent).
fn weights(t: &Table, key: &ServiceKey, addrs: &[&str]) -> Vec<String> {
    addrs
        .iter()
        .map(|a| {
            t.get(key)
                .and_then(|s| s.destination(&ip(a), 80))
                .map_or("-".to_string(), |d| d.destination.weight.to_string())
        })
        .collect()
}

const A: &str = "10.0.0.1";
const B: &str = "10.0.0.2";
const SORRY: &str = "10.0.9.9";

#[test]
fn a_failing_server_gets_weight_0_and_its_weight_back_when_healthy() {
    let c = config("", &[(A, 10), (B, 20)]);
    let key = c.services[0].service.key;
    let up = with_down(&c, &[]);
    assert_eq!(weights(&up.table, &key, &[A, B]), ["10", "20"]);
    assert_eq!(up.services[0].state, ServiceState::Serving);
    assert_eq!(up.services[0].healthy_weight, 30);
    let one = with_down(&c, &[A]);
    assert_eq!(weights(&one.table, &key, &[A, B]), ["0", "20"]);
    assert_eq!(one.services[0].healthy_weight, 20);
    // The service itself is the configured one, unchanged.
    assert_eq!(one.table.get(&key).unwrap().service, c.services[0].service);
}

#[test]
fn with_removal_a_failing_server_leaves_the_table_and_the_syncer_drains_it() {
    let c = config("remove_after_drain = true", &[(A, 10), (B, 20)]);
    let key = c.services[0].service.key;
    let current = with_down(&c, &[]).table;
    let wanted = with_down(&c, &[A]).table;
    assert_eq!(weights(&wanted, &key, &[A, B]), ["-", "20"]);
    // The library's planner with the agent's options: a server without
    // connections (what a table built here holds) is deleted at once; one
    // with connections would get weight 0 and be kept until they are gone
    // or `drain_max` has passed (ipvsnl::sync::Drain).
    let options = plan_options(&c);
    assert_eq!(options.drain.map(|d| d.max), Some(Duration::from_secs(300)));
    let p = plan(
        &current,
        &wanted,
        &options,
        &DrainLedger::new(),
        Instant::now(),
    );
    assert_eq!(p.requests(), [Request::DeleteDestination(key, ip(A), 80)]);
    // Without removal the same failure is one weight-0 edit.
    let c = config("", &[(A, 10), (B, 20)]);
    let wanted = with_down(&c, &[A]).table;
    let p = plan(
        &current,
        &wanted,
        &plan_options(&c),
        &DrainLedger::new(),
        Instant::now(),
    );
    assert!(
        matches!(p.requests(), [Request::EditDestination(k, d)] if *k == key && d.addr == ip(A) && d.weight == 0)
    );
}

#[test]
fn below_the_quorum_the_sorry_server_is_added() {
    let extra =
        format!("quorum = {{ min_weight = 15 }}\nsorry_server = {{ address = \"{SORRY}\" }}");
    let c = config(&extra, &[(A, 10), (B, 10)]);
    let key = c.services[0].service.key;
    assert_eq!(with_down(&c, &[]).services[0].state, ServiceState::Serving);
    assert_eq!(
        weights(&with_down(&c, &[]).table, &key, &[A, B, SORRY]),
        ["10", "10", "-"]
    );
    // 10 healthy < 15: the sorry server joins the healthy one.
    let d = with_down(&c, &[B]);
    assert_eq!(d.services[0].state, ServiceState::Sorry);
    assert_eq!(weights(&d.table, &key, &[A, B, SORRY]), ["10", "0", "1"]);
    let d = with_down(&c, &[A, B]);
    assert_eq!(weights(&d.table, &key, &[A, B, SORRY]), ["0", "0", "1"]);
}

#[test]
fn every_server_down_with_the_default_quorum_brings_the_sorry_server() {
    let extra = format!("sorry_server = {{ address = \"{SORRY}\", weight = 3 }}");
    let c = config(&extra, &[(A, 1), (B, 1)]);
    let key = c.services[0].service.key;
    assert_eq!(
        weights(&with_down(&c, &[A]).table, &key, &[A, B, SORRY]),
        ["0", "1", "-"]
    );
    assert_eq!(
        weights(&with_down(&c, &[A, B]).table, &key, &[A, B, SORRY]),
        ["0", "0", "3"]
    );
}

#[test]
fn below_the_quorum_a_service_is_withdrawn_or_kept_as_configured() {
    let c = config(
        "quorum = { min_weight = 2, below = \"withdraw\" }",
        &[(A, 1), (B, 1)],
    );
    let key = c.services[0].service.key;
    let d = with_down(&c, &[A]);
    assert_eq!(d.services[0].state, ServiceState::Withdrawn);
    assert!(d.table.get(&key).is_none());
    // The agent's scope still holds it: the syncer deletes it. Another
    // tool's service in the kernel is left alone.
    let other = ServiceKey::udp(ip("198.51.100.1"), 53);
    let mut current = with_down(&c, &[]).table;
    current.insert(ipvsnl::Service::new(other), []);
    let p = plan(
        &current,
        &d.table,
        &plan_options(&c),
        &DrainLedger::new(),
        Instant::now(),
    );
    assert_eq!(p.requests(), [Request::DeleteService(key)]);

    let c = config(
        "quorum = { min_weight = 2, below = \"keep\" }",
        &[(A, 1), (B, 1)],
    );
    let d = with_down(&c, &[A]);
    assert_eq!(d.services[0].state, ServiceState::Degraded);
    assert_eq!(weights(&d.table, &key, &[A, B]), ["0", "1"]);
}

#[test]
fn a_server_configured_at_weight_0_counts_nothing_toward_the_quorum() {
    let c = config(
        "quorum = { min_weight = 1, below = \"withdraw\" }",
        &[(A, 0), (B, 1)],
    );
    let d = with_down(&c, &[B]);
    assert_eq!(d.services[0].healthy_weight, 0);
    assert_eq!(d.services[0].state, ServiceState::Withdrawn);
}

/// One server checked every 2 s (rise 2, fall 3, no jitter), its results
/// given by `alive(t)`, `t` in whole seconds since start; gives its weight
/// in the desired table after each check, as (second, weight).
fn simulate(alive: impl Fn(u64) -> bool, seconds: u64) -> Vec<(u64, u32)> {
    let c = config("", &[(A, 10)]);
    let key = c.services[0].service.key;
    let check = c.services[0].servers[0].check.clone().unwrap();
    let mut health = ServerHealth::for_check(&check);
    let mut schedule = Schedule::for_check(&check, 1);
    let t0 = Instant::now();
    let mut due = Timetable::new();
    due.insert(schedule.first(t0), (key, ip(A)));
    let mut states: HashMap<IpAddr, Health> = HashMap::new();
    let mut out = Vec::new();
    for second in 0..=seconds {
        let now = t0 + Duration::from_secs(second);
        while let Some((at, id)) = due.pop_due(now) {
            let outcome = if alive(second) {
                Outcome::Pass
            } else {
                Outcome::Fail(Failure::Refused)
            };
            health.record(&outcome);
            states.insert(id.1, health.health());
            due.insert(schedule.next(at), id);
            let table = desired(&c, |_, s| {
                states
                    .get(&s.destination.addr)
                    .copied()
                    .unwrap_or(Health::Up)
            })
            .table;
            let w = table
                .get(&key)
                .unwrap()
                .destination(&ip(A), 80)
                .unwrap()
                .destination
                .weight;
            out.push((second, w));
        }
    }
    out
}

#[test]
fn weight_goes_to_0_at_the_fall_th_failed_check_and_back_at_the_rise_th_success() {
    // Dies at 5 s: checks at 6, 8, 10 fail; the third (10 s) sets weight 0.
    // Back at 13 s: checks at 14 and 16 pass; the second (16 s) restores 10.
    let w = simulate(|t| !(5..13).contains(&t), 20);
    assert_eq!(
        w,
        [
            (0, 10),
            (2, 10),
            (4, 10),
            (6, 10),
            (8, 10),
            (10, 0),
            (12, 0),
            (14, 0),
            (16, 10),
            (18, 10),
            (20, 10)
        ]
    );
}

#[test]
fn a_server_flapping_within_its_hysteresis_never_changes_the_table() {
    // Fails two checks in three (never three in a row): stays at 10.
    let w = simulate(|t| t < 2 || (t / 2) % 3 == 0, 60);
    assert!(w.iter().all(|&(_, weight)| weight == 10), "{w:?}");
    // Failing from the start (provisional up): out at the first check.
    let w = simulate(|_| false, 4);
    assert_eq!(w, [(0, 0), (2, 0), (4, 0)]);
}
