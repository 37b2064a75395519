//! The fleet figures of benches/AGENT.md, against a local single-member etcd (wall
//! time on the host that runs them; not a test of speed: run by hand with
//! `cargo test --release -p ipvs-agent --features fleet --test figures
//! fleet_figures -- --ignored --nocapture`).

use std::time::{Duration, Instant};

use ipvs_agent::fleet::publish::write::{publish, PublishOptions};
use ipvs_agent::fleet::store::etcd::Etcd;
use ipvs_agent::fleet::store::layout::{verify, Layout};
use ipvs_agent::fleet::store::read::{read_current, read_entries};
use ipvs_agent::fleet::Source;

use crate::fleet_etcd::{config_of, EtcdServer};

#[tokio::test]
#[ignore = "figures for benches/AGENT.md, run by hand"]
async fn publish_and_watch_times() {
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    for n in [1_000, 10_000] {
        let layout = Layout::new(&format!("/figures-{n}"));
        let c = config_of(n, 80);
        let t = Instant::now();
        let e = ipvs_agent::fleet::store::layout::entries(&c);
        let encoded = t.elapsed();
        let _ = ipvs_agent::fleet::store::layout::record(1, &e);
        println!(
            "{n} services: {} ms to encode, {} ms more for the digest",
            encoded.as_millis(),
            (t.elapsed() - encoded).as_millis()
        );
        for round in 1..=3 {
            let t = Instant::now();
            let p = publish(&etcd, &layout, &c, PublishOptions::default())
                .await
                .unwrap();
            println!(
                "publish {n} services (round {round}): {} ms, {} transactions, {} bytes",
                t.elapsed().as_millis(),
                p.transactions,
                p.bytes
            );
        }
    }
    // One service changed in 10,000: from the publish's start to the
    // watcher's complete configuration.
    let layout = Layout::new("/figures-watch");
    let mut c = config_of(10_000, 80);
    publish(&etcd, &layout, &c, PublishOptions::default())
        .await
        .unwrap();
    let mut source = Source::new(etcd.clone(), "/figures-watch");
    let t = Instant::now();
    source.next().await.unwrap();
    println!(
        "first read of 10,000 services: {} ms",
        t.elapsed().as_millis()
    );
    // Where a read's time goes: etcd (the pages) and the check and parse.
    let t = Instant::now();
    let (current, at) = read_current(&etcd, &layout, None).await.unwrap();
    let current = current.unwrap().0;
    let entries = read_entries(&etcd, &layout, at).await.unwrap();
    let fetched = t.elapsed();
    verify(&layout, &current, &entries).unwrap();
    println!(
        "read of 10,000 services: {} ms from etcd, {} ms digest and parse",
        fetched.as_millis(),
        (t.elapsed() - fetched).as_millis()
    );
    let r = tokio::time::timeout(Duration::from_millis(500), source.next()).await;
    assert!(r.is_err());
    for round in 1..=5u32 {
        c.services[1234].servers[0].destination.weight = round + 1;
        let start = Instant::now();
        let (got, published) = tokio::join!(source.next(), async {
            let p = publish(&etcd, &layout, &c, PublishOptions::default())
                .await
                .unwrap();
            (p, start.elapsed())
        });
        let took = start.elapsed();
        let s = got.unwrap();
        assert_eq!(s.config, c);
        println!(
            "one service changed in 10,000 (round {round}): publish {} ms, watcher complete at {} ms",
            published.1.as_millis(),
            took.as_millis()
        );
    }
}
