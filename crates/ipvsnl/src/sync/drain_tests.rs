//! The planner's drain: persistence templates hold a destination of a
//! persistent service, and a drain counts only while the weight is 0.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use super::*;
use crate::{Destination, Scheduler, Service, ServiceKey};

fn key() -> ServiceKey {
    ServiceKey::tcp(IpAddr::from([10, 0, 0, 1]), 80)
}

fn dest(i: u8) -> Destination {
    Destination::new(IpAddr::from([172, 16, 0, i]), 80)
}

/// A kernel table: the service with destination 1 (weight `weight`,
/// `conns` connections, `templates` templates) and destination 2.
fn found(service: &Service, weight: u32, conns: u64, templates: u64) -> Table {
    let mut t = Table::new();
    t.insert(service.clone(), [dest(1).with_weight(weight), dest(2)]);
    let e = t.get_mut(&service.key).unwrap();
    e.destinations[0].connections = conns;
    e.destinations[0].templates = templates;
    t
}

/// Destination 1 leaves.
fn wanted(service: &Service) -> Table {
    let mut t = Table::new();
    t.insert(service.clone(), [dest(2)]);
    t
}

fn opts() -> PlanOptions {
    PlanOptions::default().with_drain(Drain::new(Duration::from_secs(60)))
}

#[test]
fn a_persistent_services_destination_drains_until_its_templates_are_gone() {
    let svc = Service::new(key())
        .with_scheduler(Scheduler::RoundRobin)
        .with_persistence(30);
    let start = Instant::now();
    let id = (key(), dest(1).addr, 80);
    // No connection left, a template alive: weight 0, kept.
    let p = plan(
        &found(&svc, 1, 0, 1),
        &wanted(&svc),
        &opts(),
        &DrainLedger::new(),
        start,
    );
    assert_eq!(p.to_rules(), "-e -t 10.0.0.1:80 -r 172.16.0.1:80 -m -w 0\n");
    assert_eq!(p.draining().since(&id), Some(start));
    // Later, the template still there: nothing to do, still draining.
    let later = start + Duration::from_secs(20);
    let p2 = plan(
        &found(&svc, 0, 0, 1),
        &wanted(&svc),
        &opts(),
        p.draining(),
        later,
    );
    assert!(p2.is_empty(), "{}", p2.to_rules());
    assert_eq!(p2.draining().since(&id), Some(start));
    // The template expired: deleted.
    let p3 = plan(
        &found(&svc, 0, 0, 0),
        &wanted(&svc),
        &opts(),
        p2.draining(),
        later,
    );
    assert_eq!(p3.to_rules(), "-d -t 10.0.0.1:80 -r 172.16.0.1:80\n");
    // Past the drain's maximum, templates or not: deleted.
    let p4 = plan(
        &found(&svc, 0, 3, 1),
        &wanted(&svc),
        &opts(),
        p2.draining(),
        start + Duration::from_secs(60),
    );
    assert_eq!(p4.to_rules(), "-d -t 10.0.0.1:80 -r 172.16.0.1:80\n");
}

#[test]
fn templates_do_not_hold_a_destination_of_a_service_no_longer_persistent() {
    let plain = Service::new(key()).with_scheduler(Scheduler::RoundRobin);
    // Templates left from when it was persistent send no one anywhere.
    let p = plan(
        &found(&plain, 1, 0, 2),
        &wanted(&plain),
        &opts(),
        &DrainLedger::new(),
        Instant::now(),
    );
    assert_eq!(p.to_rules(), "-d -t 10.0.0.1:80 -r 172.16.0.1:80\n");
}

#[test]
fn a_drain_counts_only_while_the_destination_is_at_weight_0() {
    let svc = Service::new(key()).with_scheduler(Scheduler::RoundRobin);
    let start = Instant::now();
    let id = (key(), dest(1).addr, 80);
    let ledger: DrainLedger = [(id, start)].into_iter().collect();
    let later = start + Duration::from_secs(90);
    // Recorded as draining since long ago, found at weight 1 and busy (its
    // weight-0 edit never went through, or someone set it back): the drain
    // begins now, it is not over.
    let p = plan(
        &found(&svc, 1, 4, 0),
        &wanted(&svc),
        &opts(),
        &ledger,
        later,
    );
    assert_eq!(p.to_rules(), "-e -t 10.0.0.1:80 -r 172.16.0.1:80 -m -w 0\n");
    assert_eq!(p.draining().since(&id), Some(later));
    // Found at weight 0 all that time: over.
    let p = plan(
        &found(&svc, 0, 4, 0),
        &wanted(&svc),
        &opts(),
        &ledger,
        later,
    );
    assert_eq!(p.to_rules(), "-d -t 10.0.0.1:80 -r 172.16.0.1:80\n");
}

#[test]
fn new_options_keep_the_drains_in_scope_and_drop_the_view_when_the_scope_changes_kind() {
    use crate::block_on::block_on;
    use crate::emulator::Kernel;
    use crate::sync::emulated::{connect, put};
    let svc = Service::new(key()).with_scheduler(Scheduler::RoundRobin);
    let kernel = Kernel::new();
    put(&kernel, svc.clone(), &[(dest(1), 3), (dest(2), 0)]);
    let mut core = connect(&kernel, true);
    let mine = PlanOptions::new(Scope::keys([key()]));
    let mut syncer = Syncer::new(mine.clone().with_drain(Drain::new(Duration::from_secs(60))));
    let report = block_on(syncer.sync_in(&mut core, &wanted(&svc))).unwrap();
    assert!(report.is_complete(), "{report}");
    let id = (key(), dest(1).addr, 80);
    let began = syncer.draining().since(&id).expect("destination 1 drains");
    assert!(syncer.cached().is_some());

    // Another drain maximum, the same scope: the drain and the view stay.
    syncer.set_options(mine.with_drain(Drain::new(Duration::from_secs(5))));
    assert_eq!(syncer.draining().since(&id), Some(began));
    assert!(syncer.cached().is_some());
    assert_eq!(
        syncer.options().drain.map(|d| d.max),
        Some(Duration::from_secs(5))
    );

    // A wider scope, of a key the kernel does not have: the drain and the
    // view stay.
    let other = ServiceKey::tcp(IpAddr::from([10, 0, 0, 2]), 80);
    syncer.set_options(PlanOptions::new(Scope::keys([key(), other])));
    assert_eq!(syncer.draining().since(&id), Some(began));
    assert!(syncer.cached().is_some());

    // A scope of another kind: the drain stays, the view goes (the next
    // sync lists).
    syncer.set_options(PlanOptions::new(Scope::All));
    assert_eq!(syncer.draining().since(&id), Some(began));
    assert!(syncer.cached().is_none());

    // The service out of scope: its drain is forgotten.
    syncer.set_options(PlanOptions::new(Scope::keys([other])));
    assert!(syncer.draining().is_empty());
}
