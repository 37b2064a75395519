//! Listings are whole while another namespace changes its table (issue 21,
//! item 2). The kernel resumes a service dump by a position counted over
//! every namespace's services, so a client of another namespace adding and
//! deleting services made listings of an unchanged namespace skip some
//! that existed throughout (25 of 483 listings of 300 services), and a
//! watcher report them removed. Here such a writer churns while every
//! kind of listing of an unchanged namespace is checked, a hundred times.

use crate::common;

use std::collections::HashSet;
use std::net::IpAddr;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::churn::Churn;
use common::*;
use ipvsnl::watch::{Change, Lister, Watcher};
use ipvsnl::{AsyncClient, Client, Destination, Request, Service, ServiceEntry, ServiceKey};

/// The tests here churn the kernel's service tables: one at a time.
static CHURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The listings each test checks. Before listings were whole, 450 of 450
/// (6.1) and 449 of 450 (6.12) listings of the first test came back short,
/// and the watcher's first listing already was: 120 listings and 50 ticks
/// catch that again, in a quarter of the VM time 450 took (104 s of the
/// main boot's budget; the CI's VM budget is shared with every binary).
const LISTINGS: usize = 120;

/// Creates `v4` IPv4 and `v6` IPv6 TCP services of one destination each
/// in the caller's namespace; returns their keys.
fn fill(v4: u16, v6: u16) -> HashSet<ServiceKey> {
    let mut c = Client::new().unwrap();
    let mut requests = Vec::new();
    let mut keys = HashSet::new();
    let v4_keys = (0..v4).map(|i| {
        let k = ServiceKey::tcp(IpAddr::from([10, 1, (i >> 8) as u8, i as u8]), 80);
        (
            k,
            Destination::new(IpAddr::from([10, 2, (i >> 8) as u8, i as u8]), 80),
        )
    });
    let v6_keys = (0..v6).map(|i| {
        let k = ServiceKey::tcp(format!("fd00::1:{i:x}").parse().unwrap(), 80);
        (
            k,
            Destination::new(format!("fd00::2:{i:x}").parse().unwrap(), 80),
        )
    });
    for (k, d) in v4_keys.chain(v6_keys) {
        requests.push(Request::add_service(Service::new(k)));
        requests.push(Request::AddDestination(k, d));
        keys.insert(k);
    }
    assert!(c.apply(&requests).iter().all(Result::is_ok), "fill");
    keys
}

/// The keys each of `listings` listings of the blocking client listed, in
/// turns `Client::services`, `Client::table` and
/// `Client::for_each_service` (the turn is the listing's number modulo 3).
/// Panics on a listing that repeats a service, lists one that is not in
/// `want`, or a table whose service lacks its destination.
fn list_while_churning(want: &HashSet<ServiceKey>, listings: usize) -> Vec<HashSet<ServiceKey>> {
    let mut c = Client::new().unwrap();
    let mut listed = Vec::new();
    for i in 0..listings {
        let keys: Vec<ServiceKey> = match i % 3 {
            0 => c.services().unwrap().iter().map(|e| *e.key()).collect(),
            1 => {
                let table = c.table().unwrap();
                for e in &table {
                    assert_eq!(e.destinations.len(), 1, "{}: its destination", e.key());
                }
                table.iter().map(|e| *e.key()).collect()
            }
            _ => {
                let mut keys = Vec::new();
                c.for_each_service(|e: &ServiceEntry| {
                    keys.push(*e.key());
                    ControlFlow::Continue(())
                })
                .unwrap();
                keys
            }
        };
        let got: HashSet<ServiceKey> = keys.iter().copied().collect();
        assert_eq!(got.len(), keys.len(), "listing {i} repeated a service");
        assert!(
            got.is_subset(want),
            "listing {i} has a service that is not ours"
        );
        listed.push(got);
    }
    listed
}

/// The listings (their numbers) that lacked a service of `want` for
/// which `counts` holds, with the first few they lacked.
fn short_of(
    want: &HashSet<ServiceKey>,
    listed: &[HashSet<ServiceKey>],
    counts: impl Fn(&ServiceKey) -> bool,
) -> Vec<(usize, Vec<ServiceKey>)> {
    let mut short = Vec::new();
    for (i, got) in listed.iter().enumerate() {
        let mut lacked: Vec<ServiceKey> = want
            .difference(got)
            .filter(|k| counts(k))
            .copied()
            .collect();
        if !lacked.is_empty() {
            lacked.sort();
            lacked.truncate(3);
            short.push((i, lacked));
        }
    }
    short
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn listings_of_an_unchanged_namespace_are_whole_while_another_churns() {
    fresh_netns();
    let _one = serial(&CHURN);
    let want = fill(300, 0);
    let churn = Churn::start();
    let listed = list_while_churning(&want, LISTINGS);
    let rounds = churn.stop();
    Client::new().unwrap().flush().unwrap();
    println!(
        "{LISTINGS} listings of 300 services, {rounds} rounds of 40 adds and deletes elsewhere"
    );
    let short = short_of(&want, &listed, |_| true);
    assert!(
        short.is_empty(),
        "{} of {LISTINGS} listings lacked services that existed throughout (listing, 3 of those lacked; listing % 3 = 0: services, 1: table, 2: for_each_service): {:?}",
        short.len(),
        &short[..short.len().min(10)]
    );
}

/// IPv6 services have no snapshot to check against. A listing holds every
/// one an earlier listing of the same client held (it is got alone when
/// the dumps skipped it), and finds those no listing has seen yet by
/// dumping again, which makes a miss rare, not impossible. A listing short
/// of an IPv4 service is never allowed.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn listings_with_ipv6_services_keep_every_service_listed_before() {
    fresh_netns();
    let _one = serial(&CHURN);
    let want = fill(200, 100);
    let churn = Churn::start();
    let listed = list_while_churning(&want, LISTINGS);
    let rounds = churn.stop();
    Client::new().unwrap().flush().unwrap();
    let ipv4 = |k: &ServiceKey| k.family() == ipvsnl::AddressFamily::Inet;
    let short = short_of(&want, &listed, |_| true);
    println!(
        "{LISTINGS} listings of 200 + 100 services, {rounds} churn rounds; short of a service never listed before: {short:?}"
    );
    let v4_short = short_of(&want, &listed, ipv4);
    assert!(v4_short.is_empty(), "IPv4 services missed: {v4_short:?}");
    let mut ever: HashSet<ServiceKey> = HashSet::new();
    for (i, got) in listed.iter().enumerate() {
        let mut lost: Vec<&ServiceKey> = ever.difference(got).collect();
        lost.sort();
        assert!(
            lost.is_empty(),
            "listing {i} lacked {} services an earlier listing held: {:?}",
            lost.len(),
            &lost[..lost.len().min(5)]
        );
        ever.extend(got);
    }
    assert_eq!(
        listed.last().map(HashSet::len),
        Some(want.len()),
        "the last listing"
    );
}

/// The async client's table, counted.
struct Counted {
    client: AsyncClient,
    listings: Arc<AtomicUsize>,
}

impl Lister for Counted {
    async fn list(&mut self) -> Result<Vec<ServiceEntry>, ipvsnl::Error> {
        self.listings.fetch_add(1, Ordering::Relaxed);
        self.client.table().await
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn a_watcher_of_an_unchanged_namespace_sees_no_change_while_another_churns() {
    fresh_netns();
    let _one = serial(&CHURN);
    let want = fill(300, 0);
    let churn = Churn::start();
    let ticks = 50;
    let listings = Arc::new(AtomicUsize::new(0));
    let changes: Vec<Change> = ops::runtime().block_on(async {
        let lister = Counted {
            client: AsyncClient::new().unwrap(),
            listings: Arc::clone(&listings),
        };
        let mut w = Watcher::new(lister, Duration::from_millis(10));
        let limit = Duration::from_secs(60);
        let first = tokio::time::timeout(limit, w.next())
            .await
            .unwrap()
            .unwrap();
        assert!(first.first);
        assert_eq!(first.changes.len(), want.len(), "the first listing");
        // Nothing changes here: whatever a tick yields is a false change.
        let mut seen = Vec::new();
        while listings.load(Ordering::Relaxed) < ticks {
            if let Ok(found) = tokio::time::timeout(Duration::from_millis(200), w.next()).await {
                seen.extend(found.unwrap().changes);
            }
        }
        seen
    });
    let rounds = churn.stop();
    Client::new().unwrap().flush().unwrap();
    let removed = changes
        .iter()
        .filter(|c| matches!(c, Change::ServiceRemoved(_)))
        .count();
    println!(
        "watcher: {} changes over {} listings, {rounds} churn rounds",
        changes.len(),
        listings.load(Ordering::Relaxed)
    );
    assert_eq!(
        removed, 0,
        "services reported removed that never left: {changes:?}"
    );
    assert!(
        changes.is_empty(),
        "changes that never happened: {changes:?}"
    );
}
