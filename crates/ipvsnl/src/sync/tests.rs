//! Unit tests of the pure planner.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use super::*;
use crate::{
    Destination, Forward, Request, Scheduler, Service, ServiceFlags, ServiceKey, Tunnel,
    TunnelFlags,
};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn key(i: u32) -> ServiceKey {
    ServiceKey::tcp(IpAddr::from([10, 0, (i >> 8) as u8, i as u8]), 80)
}

fn dest(i: u32) -> Destination {
    Destination::new(IpAddr::from([172, 16, (i >> 8) as u8, i as u8]), 80)
}

fn table(services: u32, dests: u32) -> Table {
    let mut t = Table::new();
    for s in 1..=services {
        t.insert(
            Service::new(key(s)).with_scheduler(Scheduler::RoundRobin),
            (0..dests).map(|d| dest(s * 10 + d)),
        );
    }
    t
}

fn run(cur: &Table, want: &Table, opts: &PlanOptions) -> Plan {
    plan(cur, want, opts, &DrainLedger::new(), Instant::now())
}

fn with_conns(t: &mut Table, k: &ServiceKey, addr: IpAddr, conns: u64) {
    let s = t.get_mut(k).unwrap();
    let i = s.position(&addr, 80).unwrap();
    s.destinations[i].connections = conns;
}

#[test]
fn from_empty_adds_services_first_then_destinations() {
    let want = table(3, 2);
    let p = run(&Table::new(), &want, &PlanOptions::default());
    assert_eq!(p.len(), 9);
    assert_eq!(p.service_phase(), 3);
    assert!(p.requests()[..3]
        .iter()
        .all(|r| matches!(r, Request::AddService(_))));
    assert!(p.requests()[3..]
        .iter()
        .all(|r| matches!(r, Request::AddDestination(..))));
    // Deterministic: same inputs, same plan.
    let again = run(&Table::new(), &want, &PlanOptions::default());
    assert_eq!(p.requests(), again.requests());
}

#[test]
fn nothing_to_do_when_everything_matches() {
    let want = table(5, 3);
    let mut cur = want.clone();
    // The kernel reports HASHED on every service it holds; not a setting.
    for k in want.keys() {
        cur.get_mut(k).unwrap().service.flags |= ServiceFlags::HASHED;
    }
    let p = run(&cur, &want, &PlanOptions::default());
    assert!(p.is_empty(), "{}", p.to_rules());
    assert_eq!(p.unchanged(), 5);
    assert_eq!(p.to_rules(), "");
}

#[test]
fn edits_in_place_what_the_kernel_can_edit() {
    let cur = table(2, 2);
    let mut want = cur.clone();
    // Service 1: scheduler and persistence change. Service 2: a weight,
    // the thresholds, and the forwarding method of another destination.
    let s1 = want.get_mut(&key(1)).unwrap();
    s1.service = s1
        .service
        .clone()
        .with_scheduler(Scheduler::WeightedLeastConnection)
        .with_persistence(300);
    let s2 = want.get_mut(&key(2)).unwrap();
    s2.destinations[0].destination = s2.destinations[0]
        .destination
        .with_weight(7)
        .with_thresholds(100, 10);
    s2.destinations[1].destination = s2.destinations[1].destination.with_forward(Forward::Tunnel(
        Tunnel::gue(6080).with_flags(TunnelFlags::CSUM),
    ));
    let p = run(&cur, &want, &PlanOptions::default());
    assert_eq!(p.len(), 3, "{}", p.to_rules());
    // Thresholds are not part of an ipvsadm rule (`-S` leaves them out).
    assert_eq!(
        p.to_rules(),
        "-E -t 10.0.0.1:80 -s wlc -p 300\n\
         -e -t 10.0.0.2:80 -r 172.16.0.20:80 -m -w 7\n\
         -e -t 10.0.0.2:80 -r 172.16.0.21:80 -i -w 1 --tun-type gue --tun-port 6080 --tun-csum\n"
    );
}

#[test]
fn deletes_what_is_no_longer_wanted_within_scope_only() {
    let mut cur = table(3, 2);
    // A co-tenant's service, outside our scope.
    let foreign = ServiceKey::udp(ip("192.0.2.1"), 53);
    cur.insert(
        Service::new(foreign),
        [Destination::new(ip("192.0.2.9"), 53)],
    );
    let mut want = table(2, 2);
    want.get_mut(&key(2)).unwrap().destinations.pop();
    let scope = Scope::predicate(|k: &ServiceKey| match k {
        ServiceKey::Inet { addr, .. } => addr.to_string().starts_with("10."),
        _ => false,
    });
    let p = run(&cur, &want, &PlanOptions::new(scope.clone()));
    assert_eq!(
        p.to_rules(),
        "-D -t 10.0.0.3:80\n-d -t 10.0.0.2:80 -r 172.16.0.21:80\n"
    );
    assert_eq!(p.service_phase(), 1);
    // The co-tenant is left alone with Scope::Keys too.
    let keys = Scope::keys([key(1), key(2), key(3)]);
    let p2 = run(&cur, &want, &PlanOptions::new(keys));
    assert_eq!(p.requests(), p2.requests());
    // With everything in scope, the foreign service goes.
    let p3 = run(&cur, &want, &PlanOptions::default());
    assert!(p3.requests().contains(&Request::DeleteService(foreign)));
    // A wanted service outside the scope is refused, not created.
    let mut want2 = want.clone();
    let other = ServiceKey::tcp(ip("198.51.100.1"), 443);
    want2.insert(Service::new(other), []);
    let p4 = run(&cur, &want2, &PlanOptions::new(scope));
    assert_eq!(p4.conflicts(), &[other]);
    assert!(!p4.to_rules().contains("198.51.100.1"));
}

#[test]
fn graceful_removal_drains_then_deletes() {
    let start = Instant::now();
    let drain = Drain::new(Duration::from_secs(60));
    let opts = PlanOptions::default().with_drain(drain);
    let mut cur = table(1, 3);
    let gone = dest(11).addr;
    let idle = dest(12).addr;
    with_conns(&mut cur, &key(1), gone, 4);
    let mut want = cur.clone();
    let s = want.get_mut(&key(1)).unwrap();
    s.remove(&gone, 80);
    s.remove(&idle, 80);
    // First sync: the busy one goes to weight 0, the idle one is deleted.
    let p = plan(&cur, &want, &opts, &DrainLedger::new(), start);
    assert_eq!(
        p.to_rules(),
        "-d -t 10.0.0.1:80 -r 172.16.0.12:80\n-e -t 10.0.0.1:80 -r 172.16.0.11:80 -m -w 0\n"
    );
    let id = (key(1), gone, 80);
    assert_eq!(p.draining().since(&id), Some(start));
    // Next sync, still busy, weight already 0: nothing to send, still draining.
    let mut cur2 = cur.clone();
    cur2.get_mut(&key(1)).unwrap().remove(&idle, 80);
    let s = cur2.get_mut(&key(1)).unwrap();
    let i = s.position(&gone, 80).unwrap();
    s.destinations[i].destination.weight = 0;
    let later = start + Duration::from_secs(10);
    let p2 = plan(&cur2, &want, &opts, p.draining(), later);
    assert!(p2.is_empty(), "{}", p2.to_rules());
    assert_eq!(p2.draining().since(&id), Some(start));
    // The drain bound passed: deleted although still busy.
    let p3 = plan(
        &cur2,
        &want,
        &opts,
        p2.draining(),
        start + Duration::from_secs(61),
    );
    assert_eq!(p3.to_rules(), "-d -t 10.0.0.1:80 -r 172.16.0.11:80\n");
    assert!(p3.draining().is_empty());
    // Connections gone: deleted.
    with_conns(&mut cur2, &key(1), gone, 0);
    let p4 = plan(&cur2, &want, &opts, p2.draining(), later);
    assert_eq!(p4.to_rules(), "-d -t 10.0.0.1:80 -r 172.16.0.11:80\n");
    // Wanted again while draining: its weight comes back, drain forgotten.
    with_conns(&mut cur2, &key(1), gone, 3);
    let p5 = plan(&cur2, &cur, &opts, p2.draining(), later);
    assert_eq!(
        p5.to_rules(),
        "-e -t 10.0.0.1:80 -r 172.16.0.11:80 -m -w 1\n-a -t 10.0.0.1:80 -r 172.16.0.12:80 -m -w 1\n"
    );
    assert!(p5.draining().is_empty());
}

#[test]
fn datagram_services_skip_the_drain_unless_asked() {
    let k = ServiceKey::udp(ip("10.0.0.1"), 53);
    let mut cur = Table::new();
    cur.insert(Service::new(k), [Destination::new(ip("172.16.0.1"), 53)]);
    cur.get_mut(&k).unwrap().destinations[0].connections = 9;
    let mut want = Table::new();
    want.insert(Service::new(k), []);
    let now = Instant::now();
    let opts = PlanOptions::default().with_drain(Drain::new(Duration::from_secs(60)));
    let p = plan(&cur, &want, &opts, &DrainLedger::new(), now);
    assert_eq!(p.to_rules(), "-d -u 10.0.0.1:53 -r 172.16.0.1:53\n");
    let opts =
        PlanOptions::default().with_drain(Drain::new(Duration::from_secs(60)).with_datagrams(true));
    let p = plan(&cur, &want, &opts, &DrainLedger::new(), now);
    assert_eq!(p.to_rules(), "-e -u 10.0.0.1:53 -r 172.16.0.1:53 -m -w 0\n");
}

#[test]
fn a_local_destination_matches_whatever_forwarding_was_asked() {
    // The kernel forces Local on a destination address of the director.
    let mut cur = table(1, 1);
    cur.get_mut(&key(1)).unwrap().destinations[0]
        .destination
        .forward = Forward::Local;
    let want = table(1, 1);
    assert!(run(&cur, &want, &PlanOptions::default()).is_empty());
    // The other way round is a real change.
    assert_eq!(run(&want, &cur, &PlanOptions::default()).len(), 1);
}

#[test]
fn duplicates_in_the_desired_state_keep_the_last() {
    let mut t = Table::new();
    t.insert(Service::new(key(1)), [dest(1), dest(1).with_weight(5)]);
    assert_eq!(t.destination_count(), 1);
    assert_eq!(
        t.get(&key(1)).unwrap().destinations[0].destination.weight,
        5
    );
}

#[test]
fn same_settings_ignores_connections_and_hashed() {
    let a = table(3, 2);
    let mut b = a.clone();
    b.get_mut(&key(2)).unwrap().destinations[1].connections = 7;
    b.get_mut(&key(3)).unwrap().service.flags |= ServiceFlags::HASHED;
    assert!(a.same_settings(&b));
    b.get_mut(&key(3)).unwrap().destinations[0]
        .destination
        .weight = 9;
    assert!(!a.same_settings(&b));
}

/// Two tables whose only difference is a service key (same settings, same
/// destinations) are not the same, whichever side is asked.
#[test]
fn same_settings_compares_the_service_keys() {
    let a = table(2, 2);
    let mut b = Table::new();
    for s in a.iter() {
        let mut svc = s.service.clone();
        if svc.key == key(2) {
            svc.key = key(3);
        }
        b.insert(svc, s.destinations.iter().map(|d| d.destination));
    }
    assert_eq!(a.len(), b.len());
    assert_eq!(a.destination_count(), b.destination_count());
    assert!(!a.same_settings(&b));
    assert!(!b.same_settings(&a));
    // A key of another protocol, same address and port, differs too.
    let mut c = Table::new();
    for s in a.iter() {
        let mut svc = s.service.clone();
        if svc.key == key(1) {
            svc.key = ServiceKey::udp(IpAddr::from([10, 0, 0, 1]), 80);
        }
        c.insert(svc, s.destinations.iter().map(|d| d.destination));
    }
    assert!(!a.same_settings(&c));
    assert!(a.same_settings(&a.clone()));
}

/// Added and changed services interleaved in key order: the destination
/// phase follows the service order, each service's requests together, and
/// replaying the plan on the current table gives the desired one.
#[test]
fn mixed_adds_and_changes_replay_to_the_desired_table() {
    // Current: odd services 1..=39. Desired: every service 1..=40, the
    // odd ones with a weight changed, a destination dropped and one added.
    let mut cur = Table::new();
    let mut want = Table::new();
    for s in 1..=40u32 {
        let dests: Vec<Destination> = (0..3).map(|d| dest(s * 10 + d)).collect();
        let svc = Service::new(key(s)).with_scheduler(Scheduler::RoundRobin);
        if s % 2 == 1 {
            cur.insert(svc.clone(), dests.clone());
            let mut changed = vec![dests[0].with_weight(7), dests[1], dest(s * 10 + 5)];
            changed.reverse();
            want.insert(svc, changed);
        } else {
            want.insert(svc, dests);
        }
    }
    let p = run(&cur, &want, &PlanOptions::default());
    assert_eq!(p.service_phase(), 20);
    let mut order = Vec::new();
    let mut replayed = cur.clone();
    for r in p.requests() {
        match r {
            Request::AddService(s) => replayed.insert((**s).clone(), []),
            Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
                let e = replayed.get_mut(k).unwrap();
                e.upsert(crate::sync::table::TableDestination::new(*d));
            }
            Request::DeleteDestination(k, a, port) => replayed.get_mut(k).unwrap().remove(a, *port),
            other => panic!("unexpected {other:?}"),
        }
        if let Request::AddDestination(k, _)
        | Request::EditDestination(k, _)
        | Request::DeleteDestination(k, _, _) = r
        {
            if order.last() != Some(k) {
                order.push(*k);
            }
        }
    }
    let keys: Vec<ServiceKey> = want.keys().copied().collect();
    assert_eq!(order, keys, "one run per service, in service order");
    assert!(replayed.same_settings(&want));
    // 20 adds + 60 destinations; 20 x (edit, delete, add).
    assert_eq!(p.len(), 20 + 60 + 60);
}

/// A scheduler, protocol, forwarding method or tunnel kind given by name
/// or number is its named value, so a converged table plans nothing.
///
/// Before `Other` held an opaque type, these were `Scheduler::Other("rr")`,
/// `Protocol::Other(6)`, `Forward::Other(3)` and `TunnelKind::Other(1)`,
/// and the plan was an `-E` on every sync, a delete and re-add of the live
/// TCP service, and two `-e`. Those values cannot be built any more (see
/// the `compile_fail` examples of `OtherScheduler` and the others); the
/// makers left are the normalising ones used here.
#[test]
fn aliases_plan_nothing() {
    use crate::{Protocol, TunnelKind};
    let mut cur = Table::new();
    let tcp = ServiceKey::tcp(ip("10.0.0.1"), 80);
    let gue = Tunnel::gue(6080);
    cur.insert(
        Service::new(tcp).with_scheduler(Scheduler::RoundRobin),
        [
            dest(1).with_forward(Forward::Route),
            dest(2).with_forward(Forward::Tunnel(gue)),
        ],
    );
    let rr: Scheduler = "rr".parse().unwrap();
    let by_number = ServiceKey::Inet {
        protocol: Protocol::from_raw(6),
        addr: ip("10.0.0.1"),
        port: 80,
    };
    let gue_by_number = Tunnel {
        kind: TunnelKind::from_raw(1),
        ..gue
    };
    let route_by_number = Forward::from_raw(3).unwrap();
    let wants = [
        (tcp, rr.clone(), Forward::Route, gue),
        (by_number, Scheduler::RoundRobin, Forward::Route, gue),
        (tcp, Scheduler::RoundRobin, route_by_number, gue_by_number),
        (by_number, rr, route_by_number, gue_by_number),
    ];
    for (key, scheduler, forward, tunnel) in wants {
        let mut want = Table::new();
        want.insert(
            Service::new(key).with_scheduler(scheduler),
            [
                dest(1).with_forward(forward),
                dest(2).with_forward(Forward::Tunnel(tunnel)),
            ],
        );
        let p = run(&cur, &want, &PlanOptions::default());
        assert!(p.is_empty(), "{p}");
        assert!(want.same_settings(&cur));
    }
}
