//! Unit tests of the plan's compact form: it refers to the desired table
//! instead of copying it, and reads back as the same requests.

use std::mem::size_of;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use super::planned::Plan;
use super::*;
use crate::{Destination, Request, Scheduler, Service, ServiceKey};

fn key(i: u32) -> ServiceKey {
    ServiceKey::tcp(IpAddr::from([10, 0, (i >> 8) as u8, i as u8]), 80)
}

fn dest(i: u32) -> Destination {
    Destination::new(IpAddr::from([172, 16, (i >> 8) as u8, i as u8]), 80)
}

fn table(services: u32, dests: u32, weight: u32) -> Table {
    let mut t = Table::new();
    for s in 1..=services {
        t.insert(
            Service::new(key(s)).with_scheduler(Scheduler::RoundRobin),
            (0..dests).map(|d| dest(s * 16 + d).with_weight(weight)),
        );
    }
    t
}

fn run(cur: &Table, want: &Table) -> Plan {
    plan(
        cur,
        want,
        &PlanOptions::default(),
        &DrainLedger::new(),
        Instant::now(),
    )
}

#[test]
fn a_plan_from_empty_shares_the_desired_entries() {
    let want = table(1000, 10, 1);
    let p = run(&Table::new(), &want);
    assert_eq!(p.len(), 11_000);
    // Each entry: the table's, and the plan's two steps (its add, its
    // destinations' adds).
    assert!(want.entries().all(|e| Arc::strong_count(e) == 3));
    // The plan's own heap, requests written out aside: under 4 bytes a
    // destination (written out, the requests alone are 72 each).
    let own = p.heap_bytes();
    assert!(own <= 4 * 10_000, "{own} bytes for 10000 destinations");
    assert!(size_of::<Request>() * 10_000 > 10 * own);
    drop(p);
    assert!(want.entries().all(|e| Arc::strong_count(e) == 1));
}

#[test]
fn the_steps_read_back_as_the_requests_in_order() {
    // Services 1-20 found; 11-30 wanted: 1-10 deleted, 11-20 changed
    // (new weights, one destination replaced), 21-30 added.
    let mut found = table(20, 3, 1);
    let mut want = table(30, 3, 2);
    for s in 1..=10 {
        want.remove(&key(s));
    }
    want.insert(
        Service::new(key(15)).with_scheduler(Scheduler::WeightedRoundRobin),
        [dest(999)],
    );
    found.remove(&key(25));
    let p = run(&found, &want);
    let all: Vec<Request> = p.iter().collect();
    assert_eq!(all.as_slice(), p.requests());
    assert_eq!(p.len(), all.len());
    // Exact length at every point.
    let mut it = p.iter();
    for left in (0..=all.len()).rev() {
        assert_eq!(it.len(), left);
        it.next();
    }
    assert_eq!(it.next(), None);
    // Phase one: 10 deletes, 1 edit (service 15), 10 adds (21-30).
    let phase = p.service_phase();
    assert_eq!(phase, 21);
    assert!(all[..phase].iter().all(|r| matches!(
        r,
        Request::DeleteService(_) | Request::EditService(_) | Request::AddService(_)
    )));
    assert!(all[phase..].iter().all(|r| matches!(
        r,
        Request::AddDestination(..) | Request::EditDestination(..) | Request::DeleteDestination(..)
    )));
    // Phase two in service order: each service's requests together.
    let keys: Vec<ServiceKey> = all[phase..]
        .iter()
        .filter_map(Request::service_key)
        .collect();
    assert!(keys.windows(2).all(|w| w[0] <= w[1]), "{keys:?}");
    // Applied to what was found, the plan gives the desired table.
    let mut replay = found.clone();
    for r in &all {
        apply_request(&mut replay, r);
    }
    assert!(replay.same_settings(&want));
}

fn apply_request(t: &mut Table, r: &Request) {
    match r {
        Request::AddService(s) | Request::EditService(s) => {
            let dests: Vec<Destination> = t
                .get(&s.key)
                .map(|e| e.destinations.iter().map(|d| d.destination).collect())
                .unwrap_or_default();
            t.insert((**s).clone(), dests);
        }
        Request::DeleteService(k) => {
            t.remove(k);
        }
        Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
            t.get_mut(k)
                .unwrap()
                .upsert(table::TableDestination::new(*d));
        }
        Request::DeleteDestination(k, a, p) => t.get_mut(k).unwrap().remove(a, *p),
        other => panic!("not a planner's request: {other}"),
    }
}
