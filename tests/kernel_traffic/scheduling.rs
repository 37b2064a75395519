//! Schedulers, persistence and drain on the wire: real TCP connections
//! through a NAT service configured with the library, each reaching a real
//! server that says who it is (tests/common/servers.rs).
//!
//! The director is the test thread's fresh namespace: the virtual address
//! 10.10.10.10 and the clients' subnet 10.20.0.0/24 are on its `lo`, and
//! the real servers 10.9.0.2, .3, .4 share one namespace behind a veth
//! pair. Connections are made one after another, so the kernel's counters
//! have moved for each before the next is scheduled.

use crate::common;

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::thread;
use std::time::{Duration, Instant};

use common::fresh_netns;
use ipvsnl::sync::{Drain, PlanOptions, Scope, Syncer, Table};
use ipvsnl::{Client, Destination, DestinationEntry, Request, Scheduler, Service, ServiceKey};
use ipvsnl_test_support::client::{reached, Conn};
use ipvsnl_test_support::commands::sh;
use ipvsnl_test_support::echo::Answer;
use ipvsnl_test_support::real_server::RealServers;

const VIP: Ipv4Addr = Ipv4Addr::new(10, 10, 10, 10);
const VPORT: u16 = 80;
const RPORT: u16 = 8080;

fn vip() -> SocketAddr {
    SocketAddr::new(IpAddr::V4(VIP), VPORT)
}

fn key() -> ServiceKey {
    ServiceKey::tcp(IpAddr::V4(VIP), VPORT)
}

fn service(scheduler: Scheduler) -> Service {
    Service::new(key()).with_scheduler(scheduler)
}

/// Client source address `i` (from 0): 10.20.0.1, 10.20.0.2, ...
fn source(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 20, 0, u8::try_from(i + 1).unwrap()))
}

/// How many of `hits` went to each of `n` servers.
fn counts(hits: &[usize], n: usize) -> Vec<usize> {
    (0..n)
        .map(|i| hits.iter().filter(|&&h| h == i).count())
        .collect()
}

/// A director with real servers and the service, all in fresh namespaces.
struct Lab {
    servers: RealServers,
    ipvs: Client,
}

impl Lab {
    /// `count` real servers and `service`, with no destination yet.
    fn new(service: &Service, count: usize) -> Lab {
        fresh_netns();
        let servers = RealServers::start(RPORT, count, Answer::GreetThenEcho);
        sh("ip", &["addr", "add", &format!("{VIP}/32"), "dev", "lo"]);
        // A /24 on lo makes every address of it local: bindable sources.
        sh("ip", &["addr", "add", "10.20.0.1/24", "dev", "lo"]);
        let mut ipvs = Client::new().expect("a netlink client");
        ipvs.add_service(service).expect("add the service");
        Lab { servers, ipvs }
    }

    /// One real server a weight, each a destination of `service`.
    fn with(service: &Service, weights: &[u32]) -> Lab {
        let mut lab = Lab::new(service, weights.len());
        for (i, &w) in weights.iter().enumerate() {
            lab.add(i, w);
        }
        lab
    }

    fn dest(&self, i: usize, weight: u32) -> Destination {
        Destination::new(self.servers.addrs()[i], RPORT).with_weight(weight)
    }

    fn add(&mut self, i: usize, weight: u32) {
        let d = self.dest(i, weight);
        self.ipvs
            .add_destination(&key(), &d)
            .unwrap_or_else(|e| panic!("add {d:?}: {e}"));
    }

    fn set_weight(&mut self, i: usize, weight: u32) {
        let d = self.dest(i, weight);
        self.ipvs
            .edit_destination(&key(), &d)
            .unwrap_or_else(|e| panic!("edit {d:?}: {e}"));
    }

    /// The server one new (at once closed) connection from `from` reaches.
    fn hit(&self, from: Option<IpAddr>) -> usize {
        self.servers.index(reached(vip(), from))
    }

    /// A new connection, held, and the server it reached.
    fn open(&self) -> (Conn, usize) {
        let c = Conn::open(vip(), None);
        let i = self.servers.index(c.server());
        (c, i)
    }

    /// The kernel's entry of each real server (None: not a destination).
    fn entries(&mut self) -> Vec<Option<DestinationEntry>> {
        let listed = self.ipvs.destinations(&key()).expect("list destinations");
        self.servers
            .addrs()
            .iter()
            .map(|a| listed.iter().find(|d| d.destination.addr == *a).cloned())
            .collect()
    }

    /// `f` of each server's entry (0 for a server that is no destination).
    fn per_server(&mut self, f: impl Fn(&DestinationEntry) -> u32) -> Vec<u32> {
        let e = self.entries();
        e.iter().map(|d| d.as_ref().map_or(0, &f)).collect()
    }

    /// Asserts the kernel counted, per destination, the connections the
    /// clients saw reach it (active plus inactive: closed ones linger).
    fn assert_kernel_counted(&mut self, seen: &[usize]) {
        let kernel = self.per_server(|d| d.active_conns + d.inactive_conns);
        let seen: Vec<u32> = seen.iter().map(|&n| u32::try_from(n).unwrap()).collect();
        assert_eq!(
            kernel, seen,
            "kernel's connection counts against the clients'"
        );
    }

    /// Waits (up to 5 s) until the kernel's active counts are `want`.
    fn wait_active(&mut self, want: &[u32]) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let got = self.per_server(|d| d.active_conns);
            if got == want {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "active connections {got:?}, held {want:?}"
            );
            thread::sleep(Duration::from_millis(100));
        }
    }
}

/// `rounds` rounds of connections, one round being as many connections
/// as the weights add up to: each server gets its weight's share exactly,
/// in the same order every round. Returns one round.
fn rounds_by_weight(scheduler: Scheduler, weights: &[u32], rounds: usize) -> Vec<usize> {
    let mut lab = Lab::with(&service(scheduler.clone()), weights);
    let round = weights.iter().sum::<u32>() as usize;
    let seq: Vec<usize> = (0..round * rounds).map(|_| lab.hit(None)).collect();
    let n = counts(&seq, weights.len());
    let want: Vec<usize> = weights.iter().map(|&w| w as usize * rounds).collect();
    assert_eq!(n, want, "{scheduler:?} weights {weights:?}: {seq:?}");
    assert!(
        seq.windows(round + 1).all(|w| w[0] == w[round]),
        "{scheduler:?}: not the same order every round: {seq:?}"
    );
    lab.assert_kernel_counted(&n);
    seq[..round].to_vec()
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scheduling_rr_spreads_exactly() {
    // 30 connections: 10 each, in turn.
    let round = rounds_by_weight(Scheduler::RoundRobin, &[1, 1, 1], 10);
    eprintln!("rr, one round: {round:?}");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scheduling_wrr_by_weight() {
    // 60 connections: 30, 20 and 10.
    let round = rounds_by_weight(Scheduler::WeightedRoundRobin, &[3, 2, 1], 10);
    eprintln!("wrr 3:2:1, one round: {round:?}");
}

/// The server each source reaches, asserting that `rounds` connections
/// from it all reach the same one.
fn sticky_map(lab: &Lab, sources: &[IpAddr], rounds: usize) -> Vec<usize> {
    let first: Vec<usize> = sources.iter().map(|s| lab.hit(Some(*s))).collect();
    for round in 1..rounds {
        for (s, want) in sources.iter().zip(&first) {
            let got = lab.hit(Some(*s));
            assert_eq!(got, *want, "source {s} moved in round {round}");
        }
    }
    first
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scheduling_sh_sticky_by_source() {
    let lab = Lab::with(&service(Scheduler::SourceHashing), &[1, 1, 1]);
    let sources: Vec<IpAddr> = (0..12).map(source).collect();
    let map = sticky_map(&lab, &sources, 3);
    let spread = counts(&map, 3);
    eprintln!("sh: 12 sources over 3 servers {spread:?}: {map:?}");
    assert!(
        spread.iter().all(|&n| n > 0),
        "12 sources left a server unused: {map:?}"
    );
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scheduling_mh_consistent() {
    let mut lab = Lab::with(&service(Scheduler::Maglev), &[1, 1, 1]);
    let sources: Vec<IpAddr> = (0..24).map(source).collect();
    let before = sticky_map(&lab, &sources, 2);
    let spread = counts(&before, 3);
    eprintln!("mh: 24 sources over 3 servers {spread:?}: {before:?}");
    let gone = 2;
    assert!(spread[gone] > 0, "no source on the server to remove");
    let addr = lab.servers.addrs()[gone];
    lab.ipvs
        .delete_destination(&key(), addr, RPORT)
        .expect("delete a destination");
    // Maglev promises little disruption, not none; ip_vs_mh's hash keys
    // are constants, so the outcome for these sources is fixed, and for
    // them (6.1 and 6.12 alike) only the removed server's sources move.
    let after = sticky_map(&lab, &sources, 2);
    eprintln!("mh: without server {gone}: {after:?}");
    for (s, (b, a)) in sources.iter().zip(before.iter().zip(&after)) {
        if *b == gone {
            assert_ne!(*a, gone, "{s} still reaches the removed server");
        } else {
            assert_eq!(a, b, "{s} moved off a server that stayed");
        }
    }
}

/// How a least-loaded scheduler weighs a destination.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Load {
    /// lc: fewest active connections (weights ignored; the kernel's
    /// 256 * active + inactive, and every connection here is held).
    Least,
    /// sed: smallest (active + 1) / weight.
    ExpectedDelay,
    /// nq: an idle server if there is one, else as sed.
    NeverQueue,
}

/// The servers the scheduler may pick when `held` connections are held
/// on them: all the least loaded. (The kernel takes the first of a tie in
/// its list, where the newest destination comes first.)
fn least_loaded(load: Load, held: &[u32], weights: &[u32]) -> Vec<usize> {
    let live: Vec<usize> = (0..held.len()).filter(|&i| weights[i] > 0).collect();
    if load == Load::NeverQueue && live.iter().any(|&i| held[i] == 0) {
        return live.into_iter().filter(|&i| held[i] == 0).collect();
    }
    // Each cost as a fraction (numerator, denominator).
    let cost = |i: usize| match load {
        Load::Least => (u64::from(held[i]), 1),
        _ => (u64::from(held[i]) + 1, u64::from(weights[i])),
    };
    let best = live
        .iter()
        .map(|&i| cost(i))
        .min_by(|a, b| (a.0 * b.1).cmp(&(b.0 * a.1)))
        .expect("a live destination");
    live.into_iter()
        .filter(|&i| cost(i).0 * best.1 == best.0 * cost(i).1)
        .collect()
}

/// Holds `preload` connections on server 0 while it is the only
/// destination, adds the others, then holds `more` new connections, each
/// of which must reach one of the least loaded servers at that moment.
fn holds_toward_least_loaded(
    scheduler: Scheduler,
    load: Load,
    weights: &[u32],
) -> (Vec<u32>, Vec<usize>) {
    const PRELOAD: usize = 3;
    const MORE: usize = 6;
    let mut lab = Lab::new(&service(scheduler.clone()), weights.len());
    lab.add(0, weights[0]);
    let mut held = vec![0u32; weights.len()];
    let mut conns = Vec::new();
    for _ in 0..PRELOAD {
        let (c, i) = lab.open();
        assert_eq!(i, 0, "the only destination");
        held[i] += 1;
        conns.push(c);
    }
    for (i, &w) in weights.iter().enumerate().skip(1) {
        lab.add(i, w);
    }
    lab.wait_active(&held);
    let mut picks = Vec::new();
    for step in 0..MORE {
        let want = least_loaded(load, &held, weights);
        let (c, got) = lab.open();
        assert!(
            want.contains(&got),
            "{scheduler:?}, weights {weights:?}, held {held:?}: connection {step} went to \
             {got}, the least loaded are {want:?} (picks so far {picks:?})"
        );
        held[got] += 1;
        picks.push(got);
        conns.push(c);
        lab.wait_active(&held);
    }
    eprintln!("{scheduler:?} weights {weights:?}: picks {picks:?}, held {held:?}");
    // Every held connection still talks to its server.
    for c in &mut conns {
        assert_eq!(c.echo(b"still here").expect("echo"), b"still here");
    }
    (held, picks)
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scheduling_lc_toward_least_connections() {
    // lc ignores weights: with 3 held on server 0, the next 6 go 3 and 3
    // to the two others, the heavy weight of server 1 notwithstanding.
    let (held, _) = holds_toward_least_loaded(Scheduler::LeastConnection, Load::Least, &[1, 5, 1]);
    assert_eq!(held, [3, 3, 3]);
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scheduling_sed_toward_shortest_expected_delay() {
    // Server 0 has weight 5: with 3 held on it, its (3+1)/5 is below the
    // idle others' (0+1)/1, so sed sends the next one there too.
    let (held, picks) = holds_toward_least_loaded(
        Scheduler::ShortestExpectedDelay,
        Load::ExpectedDelay,
        &[5, 1, 1],
    );
    assert_eq!(picks[0], 0, "{picks:?}");
    assert_eq!(held.iter().sum::<u32>(), 9);
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scheduling_nq_idle_first() {
    // The weights of the sed test, but nq gives each idle server one
    // first; then the 4 others go to server 0 ((3+1+k)/5 below 2/1).
    let (held, picks) =
        holds_toward_least_loaded(Scheduler::NeverQueue, Load::NeverQueue, &[5, 1, 1]);
    assert_ne!(picks[0], 0, "{picks:?}");
    assert_eq!(held, [7, 1, 1]);
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scheduling_persistence_keeps_a_client_on_one_server() {
    let svc = service(Scheduler::RoundRobin).with_persistence(30);
    let mut lab = Lab::with(&svc, &[1, 1, 1]);
    let sources: Vec<IpAddr> = (0..3).map(source).collect();
    // Interleaved: without persistence rr would move each client on.
    let map = sticky_map(&lab, &sources, 4);
    let distinct: BTreeSet<usize> = map.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        3,
        "rr gives each new client's template the next server: {map:?}"
    );
    // One persistence template per client, each on its server.
    assert_eq!(lab.per_server(|d| d.persistent_conns), [1, 1, 1]);
    lab.assert_kernel_counted(&counts(&map, 3).iter().map(|n| n * 4).collect::<Vec<_>>());
}

/// Sets `net.ipv4.vs.<name>` (/proc/sys/net follows the namespace of the
/// thread that opens it: the calling thread's).
fn set_vs_sysctl(name: &str, value: &str) {
    let path = format!("/proc/sys/net/ipv4/vs/{name}");
    std::fs::write(&path, value).unwrap_or_else(|e| panic!("write {path}: {e}"));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scheduling_persistence_outlives_weight_zero() {
    let svc = service(Scheduler::RoundRobin).with_persistence(30);
    let mut lab = Lab::with(&svc, &[1, 1, 1]);
    let client = source(0);
    let home = lab.hit(Some(client));
    lab.set_weight(home, 0);
    // The client's template still points at its server: weight 0 stops
    // new clients only.
    for round in 0..3 {
        assert_eq!(lab.hit(Some(client)), home, "round {round}");
    }
    let newcomer = lab.hit(Some(source(1)));
    assert_ne!(newcomer, home, "a new client reached the weight-0 server");
    // With expire_quiescent_template the kernel drops a template whose
    // server is at weight 0, and the client is scheduled anew.
    set_vs_sysctl("expire_quiescent_template", "1");
    let moved = lab.hit(Some(client));
    assert_ne!(moved, home, "the template to a weight-0 server survived");
    assert_eq!(lab.hit(Some(client)), moved, "the new template holds");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scheduling_weight_zero_takes_no_new_connections() {
    let mut lab = Lab::with(&service(Scheduler::RoundRobin), &[1, 1, 1]);
    let (mut old, quiet) = lab.open();
    lab.set_weight(quiet, 0);
    let seq: Vec<usize> = (0..12).map(|_| lab.hit(None)).collect();
    let n = counts(&seq, 3);
    let want: Vec<usize> = (0..3).map(|i| if i == quiet { 0 } else { 6 }).collect();
    assert_eq!(n, want, "server {quiet} at weight 0: {seq:?}");
    assert_eq!(old.echo(b"established").expect("echo"), b"established");
    let e = lab.entries();
    let q = e[quiet].as_ref().expect("still a destination");
    assert_eq!((q.destination.weight, q.active_conns), (0, 1));
    // Back at weight 1, it is scheduled again.
    lab.set_weight(quiet, 1);
    let seq: Vec<usize> = (0..3).map(|_| lab.hit(None)).collect();
    assert!(seq.contains(&quiet), "{seq:?}");
    assert_eq!(old.echo(b"still").expect("echo"), b"still");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn scheduling_drain_removes_only_after_close() {
    let svc = service(Scheduler::RoundRobin);
    let mut lab = Lab::new(&svc, 3);
    let dests: Vec<Destination> = (0..3).map(|i| lab.dest(i, 1)).collect();
    let table = |keep: &[usize]| {
        let mut t = Table::new();
        t.insert(svc.clone(), keep.iter().map(|&i| dests[i]));
        t
    };
    let mut syncer = Syncer::new(
        PlanOptions::new(Scope::keys([key()])).with_drain(Drain::new(Duration::from_secs(60))),
    );
    let r = syncer.sync(&mut lab.ipvs, &table(&[0, 1, 2])).unwrap();
    assert!(r.is_complete(), "{r}");

    let (mut old, leaving) = lab.open();
    let addr = dests[leaving].addr;
    let stay: Vec<usize> = (0..3).filter(|&i| i != leaving).collect();
    let want = table(&stay);
    // The destination holds a connection: weight 0, not deleted.
    let r = syncer.sync(&mut lab.ipvs, &want).unwrap();
    assert!(r.is_complete(), "{r}");
    assert!(
        matches!(r.requests(), [Request::EditDestination(_, d)] if d.addr == addr && d.weight == 0),
        "{:?}",
        r.requests()
    );
    assert!(syncer.draining().is_draining(&(key(), addr, RPORT)));
    let q = lab.entries()[leaving].clone().expect("still a destination");
    assert_eq!((q.destination.weight, q.active_conns), (0, 1));
    // Drained: new connections go to the others only, the old one works.
    let seq: Vec<usize> = (0..6).map(|_| lab.hit(None)).collect();
    assert!(!seq.contains(&leaving), "{seq:?}");
    assert_eq!(old.echo(b"draining").expect("echo"), b"draining");
    let r = syncer.sync(&mut lab.ipvs, &want).unwrap();
    assert!(r.requests().is_empty(), "still busy: {:?}", r.requests());

    // Closed: a later sync deletes it, once the kernel forgets the entry.
    old.reset();
    let closed = Instant::now();
    loop {
        let r = syncer.sync(&mut lab.ipvs, &want).unwrap();
        match r.requests() {
            [] => {}
            [Request::DeleteDestination(_, a, RPORT)] if *a == addr => {
                assert!(r.is_complete(), "{r}");
                break;
            }
            other => panic!("unexpected requests while draining: {other:?}"),
        }
        assert!(
            closed.elapsed() < Duration::from_secs(30),
            "never deleted after the reset: {:?}",
            lab.entries()[leaving]
        );
        thread::sleep(Duration::from_millis(250));
    }
    eprintln!(
        "drain: deleted {:.1} s after the reset",
        closed.elapsed().as_secs_f64()
    );
    assert!(syncer.draining().is_empty());
    let e = lab.entries();
    assert!(e[leaving].is_none(), "{e:?}");
    assert!(stay.iter().all(|&i| e[i].is_some()), "{e:?}");
    let n = counts(&(0..4).map(|_| lab.hit(None)).collect::<Vec<_>>(), 3);
    assert_eq!(n[leaving], 0, "{n:?}");
}
