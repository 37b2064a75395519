//! Kernel tests of the cached sync planning only what changed
//! (`Syncer::sync_cached` over a table that descends from the one last
//! synced): the requests are exactly the change, the kernel ends equal to
//! the desired table, and what a sync left unsettled is planned again by
//! the next one even when the desired table did not change.

use crate::common;

use common::*;
use ipvsnl::sync::{PlanOptions, Syncer, Table};
use ipvsnl::{Client, Destination, Request, Scheduler, Service, ServiceKey};
use ipvsnl_test_support::keys::Numbered;
use ipvsnl_test_support::oracle::assert_converged;

/// Services 10.1.x.y, real servers 172.17.x.y, four apart.
const NUMBERS: Numbered = Numbered::new(1, 4);

fn key(i: u32) -> ServiceKey {
    NUMBERS.key(i)
}

fn dest(i: u32) -> Destination {
    NUMBERS.dest(i)
}

fn service(s: u32) -> Service {
    Service::new(key(s)).with_scheduler(Scheduler::WeightedRoundRobin)
}

fn desired(n: u32, d: u32) -> Table {
    NUMBERS.desired(n, d, Scheduler::WeightedRoundRobin)
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn a_changed_table_is_synced_from_the_cache_by_its_changes_alone() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let mut want = desired(1000, 4);
    let mut s = Syncer::new(PlanOptions::default());
    let r = s.sync(&mut c, &want).unwrap();
    assert!(r.is_complete(), "{r}");
    assert_eq!(r.done(), 5000);

    // In place: ten destinations reweighted over ten services, one service
    // dropped, one added with two destinations.
    for n in 0..10u32 {
        let sv = 1 + n * 97;
        let mut ds: Vec<Destination> = (0..4).map(|j| dest(sv * 4 + j)).collect();
        ds[(n % 4) as usize] = ds[(n % 4) as usize].with_weight(7);
        want.insert(service(sv), ds);
    }
    assert!(want.remove(&key(500)).is_some());
    want.insert(service(1001), [dest(9001), dest(9002)]);
    let r = s.sync_cached(&mut c, &want).unwrap();
    assert!(r.is_complete() && !r.listed(), "{r}");
    let edits = r
        .requests()
        .iter()
        .filter(|q| matches!(q, Request::EditDestination(_, d) if d.weight == 7))
        .count();
    assert_eq!(edits, 10, "{r}");
    assert_eq!(r.requests().len(), 10 + 1 + 3, "{r}");
    assert_converged(&mut c, &want);

    // A clone changed is a descendant too; the original stays as it was.
    let mut next = want.clone();
    next.insert(service(2), [dest(8)]);
    let r = s.sync_cached(&mut c, &next).unwrap();
    assert!(r.is_complete(), "{r}");
    assert_eq!(r.requests().len(), 3, "three destinations deleted: {r}");
    assert_converged(&mut c, &next);

    // Nothing changed: nothing sent.
    let r = s.sync_cached(&mut c, &next).unwrap();
    assert!(r.requests().is_empty(), "{r}");

    // A table built anew (no shared history) is planned whole, to the
    // same requests.
    let rebuilt: Table = next
        .iter()
        .map(|t| {
            (
                t.service.clone(),
                t.destinations.iter().map(|d| d.destination).collect(),
            )
        })
        .collect();
    let mut rebuilt = rebuilt;
    rebuilt.insert(service(3), [dest(12)]);
    let r = s.sync_cached(&mut c, &rebuilt).unwrap();
    assert!(r.is_complete(), "{r}");
    assert_eq!(r.requests().len(), 3, "{r}");
    assert_converged(&mut c, &rebuilt);
    c.flush().unwrap();
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn a_service_left_unsettled_is_planned_again_without_a_change() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let mut want = desired(50, 2);
    let mut s = Syncer::new(PlanOptions::default());
    assert!(s.sync(&mut c, &want).unwrap().is_complete());

    // Someone deletes a service behind the syncer's back, then the caller
    // changes it: the edit fails (no such service) and the service is read
    // back (gone).
    c.delete_service(&key(7)).unwrap();
    want.insert(service(7), [dest(28).with_weight(3), dest(29)]);
    let r = s.sync_cached(&mut c, &want).unwrap();
    assert!(!r.is_complete(), "the service was gone: {r}");
    assert!(r.failed() >= 1, "{r}");
    for (q, e) in r.failures() {
        assert!(
            e.errno().is_some(),
            "{q}: a kernel refusal keeps its errno: {e}"
        );
    }
    // Unchanged desired table: the next cached sync adds it back.
    let r = s.sync_cached(&mut c, &want).unwrap();
    assert!(r.is_complete(), "{r}");
    assert!(
        matches!(r.requests().first(), Some(Request::AddService(sv)) if sv.key == key(7)),
        "{r}"
    );
    assert_eq!(r.requests().len(), 3, "{r}");
    assert_converged(&mut c, &want);
    // And once settled, nothing more.
    assert!(s.sync_cached(&mut c, &want).unwrap().requests().is_empty());
    c.flush().unwrap();
}
