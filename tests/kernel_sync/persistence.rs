//! Kernel test of a drain that follows persistence (kubernetes#81591): a
//! destination of a persistent service leaving the desired table stays at
//! weight 0 while a persistence template names it, after its connections
//! are gone, since the template would send its client back to it; it is
//! deleted once the template expired.
//!
//! Timeline: the client connects (the template's timer starts: the
//! service's persistence, 20 s), and resets its connection at once (IPVS
//! keeps the entry in CLOSE for 10 s). From about 10 s to 20 s only the
//! template holds the destination.

use crate::common;

use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use common::*;
use ipvsnl::sync::{Drain, PlanOptions, Scope, Syncer, Table};
use ipvsnl::{Client, Destination, Request, Scheduler, Service, ServiceKey};
use ipvsnl_test_support::oracle::kernel_table;

/// The service's persistence, seconds.
const PERSISTENCE: u32 = 20;

/// A destination's (active + inactive connections, templates).
fn counts(c: &mut Client, k: &ServiceKey, addr: IpAddr) -> Option<(u32, u32)> {
    c.destinations(k)
        .unwrap()
        .iter()
        .find(|d| d.destination.addr == addr)
        .map(|d| (d.active_conns + d.inactive_conns, d.persistent_conns))
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn a_drain_waits_for_the_persistence_templates_of_its_destination() {
    fresh_netns();
    for a in ["10.98.0.1/32", "10.98.0.2/32", "10.98.0.10/32"] {
        assert_ok("ip addr add", run("ip", &["addr", "add", a, "dev", "lo"]));
    }
    let vip: IpAddr = "10.98.0.10".parse().unwrap();
    let r1: IpAddr = "10.98.0.1".parse().unwrap();
    let r2: IpAddr = "10.98.0.2".parse().unwrap();
    let listener = TcpListener::bind("0.0.0.0:80").unwrap();
    let k = ServiceKey::tcp(vip, 80);
    let svc = Service::new(k)
        .with_scheduler(Scheduler::RoundRobin)
        .with_persistence(PERSISTENCE);
    let mut c = Client::new().unwrap();
    // The drain's bound is well past the template's life.
    let max = Duration::from_secs(120);
    let mut s = Syncer::new(PlanOptions::new(Scope::keys([k])).with_drain(Drain::new(max)));
    let mut want = Table::new();
    want.insert(svc.clone(), [Destination::new(r1, 80)]);
    assert!(s.sync(&mut c, &want).unwrap().is_complete());

    // One connection through the service: scheduled to r1, with a
    // template; the kernel counts the template as r1's "persistent
    // connection".
    let mut client = TcpStream::connect((vip, 80)).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    client.write_all(b"ping").unwrap();
    let mut buf = [0u8; 4];
    server.read_exact(&mut buf).unwrap();
    assert_eq!(
        counts(&mut c, &k, r1),
        Some((1, 1)),
        "one connection, one template"
    );

    // r1 leaves: weight 0, kept.
    let mut want = Table::new();
    want.insert(svc.clone(), [Destination::new(r2, 80)]);
    let r = s.sync_cached(&mut c, &want).unwrap();
    assert!(r.is_complete(), "{r}");
    assert!(
        r.requests()
            .iter()
            .any(|q| matches!(q, Request::EditDestination(_, d) if d.addr == r1 && d.weight == 0)),
        "{r}"
    );
    let started = Instant::now();
    ipvsnl_test_support::client::reset_on_close(&client);
    drop(client);
    drop(server);

    // Sync again and again: r1 must outlive its connection while its
    // template lives, and go once the template is gone.
    let mut kept_for_template = 0;
    let mut last_template_seen = None;
    loop {
        let before = counts(&mut c, &k, r1).expect("r1 is there until a sync deletes it");
        if before.1 > 0 {
            last_template_seen = Some(started.elapsed());
        }
        let r = s.sync_cached(&mut c, &want).unwrap();
        assert!(r.is_complete(), "{r}");
        let deleted = r
            .requests()
            .iter()
            .any(|q| matches!(q, Request::DeleteDestination(_, a, _) if *a == r1));
        if deleted {
            eprintln!(
                "r1 deleted {:?} after the reset; kept {kept_for_template} syncs for its \
                 template alone; template last seen at {last_template_seen:?}",
                started.elapsed()
            );
            break;
        }
        assert_eq!(
            c.destinations(&k)
                .unwrap()
                .iter()
                .find(|d| d.destination.addr == r1)
                .map(|d| d.destination.weight),
            Some(0)
        );
        if before == (0, 1) {
            kept_for_template += 1;
        }
        assert!(
            started.elapsed() < Duration::from_secs(u64::from(PERSISTENCE) + 40),
            "r1 never drained: {before:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(
        kept_for_template > 0,
        "r1 was deleted as soon as its connection was gone, its template alive"
    );
    assert!(s.draining().is_empty());
    assert!(kernel_table(&mut c).same_settings(&want));
}
