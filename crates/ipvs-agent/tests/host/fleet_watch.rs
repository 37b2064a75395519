//! A [`Source`] against a real etcd (fleet_etcd): it gets the current
//! generation, then each new one; it waits while nothing is published;
//! after etcd restarts it resumes its watch without reading again; after a
//! compaction took its revision away it reads the whole state again.

use std::time::{Duration, Instant};

use etcd_client::CompactionOptions;
use ipvs_agent::config::Config;
use ipvs_agent::fleet::publish::write::{publish, PublishOptions, Published};
use ipvs_agent::fleet::store::etcd::Etcd;
use ipvs_agent::fleet::store::layout::Layout;
use ipvs_agent::fleet::{FleetError, Source};

use crate::fleet_etcd::{config_of, EtcdServer};

#[tokio::test]
async fn a_watcher_gets_the_current_generation_then_the_next_publish() {
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let layout = Layout::new("/w");
    let (first, second) = (config_of(3, 80), config_of(5, 81));
    publish(&etcd, &layout, &first, PublishOptions::default())
        .await
        .unwrap();
    let mut source = Source::new(etcd.clone(), "/w");
    let s = source.next().await.unwrap();
    assert_eq!((s.generation, &s.config), (1, &first));
    // The watcher waits; the publish comes while it does.
    let (got, published) = tokio::join!(source.next(), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        publish(&etcd, &layout, &second, PublishOptions::default())
            .await
            .unwrap()
    });
    let s = got.unwrap();
    assert_eq!((s.generation, &s.config), (2, &second));
    assert_eq!(s.current_revision, published.revision);
    let stats = source.stats();
    assert_eq!(
        (stats.full_reads, stats.generations_read, stats.watches),
        (1, 2, 1)
    );
}

#[tokio::test]
async fn a_watcher_started_before_any_publish_waits_for_the_first() {
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let mut source = Source::connect(&server.endpoints(), "/empty")
        .await
        .unwrap();
    let c = config_of(2, 80);
    let (got, _) = tokio::join!(source.next(), async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        publish(&etcd, &Layout::new("/empty"), &c, PublishOptions::default())
            .await
            .unwrap()
    });
    let s = got.unwrap();
    assert_eq!((s.generation, s.config), (1, c));
    assert_eq!(source.stats().full_reads, 1);
}

/// Publishes `c`, trying again while the client reconnects to an etcd
/// that restarted (its first request after a lost connection fails).
async fn publish_again(etcd: &Etcd, layout: &Layout, c: &Config) -> Published {
    for _ in 0..50 {
        match publish(etcd, layout, c, PublishOptions::default()).await {
            Ok(p) => return p,
            Err(e) if e.is_transient() => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(e) => panic!("{e}"),
        }
    }
    panic!("etcd did not come back");
}

/// The watch created (the first `next` returns before it is).
async fn watching(source: &mut Source) {
    let r = tokio::time::timeout(Duration::from_millis(500), source.next()).await;
    assert!(r.is_err(), "nothing to deliver: {r:?}");
    assert_eq!(source.stats().watches, 1);
}

/// Calls `next` until the source has resumed its watch (errors while etcd
/// comes back are allowed; a configuration is not: nothing changed).
async fn until_resumed(source: &mut Source) {
    let until = Instant::now() + Duration::from_secs(30);
    while source.stats().resumes == 0 {
        assert!(Instant::now() < until, "no resume: {:?}", source.stats());
        match tokio::time::timeout(Duration::from_millis(500), source.next()).await {
            Err(_) => {}
            Ok(Err(e)) => assert!(e.is_transient(), "{e}"),
            Ok(Ok(s)) => panic!("generation {} delivered, nothing changed", s.generation),
        }
    }
}

#[tokio::test]
async fn after_etcd_restarts_the_watcher_resumes_from_its_revision_without_reading_again() {
    let mut server = EtcdServer::start();
    let layout = Layout::new("/r");
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    publish(&etcd, &layout, &config_of(3, 80), PublishOptions::default())
        .await
        .unwrap();
    let mut source = Source::new(etcd.clone(), "/r");
    assert_eq!(source.next().await.unwrap().generation, 1);
    watching(&mut source).await;
    let revision = source.revision();
    server.restart();
    until_resumed(&mut source).await;
    let stats = source.stats();
    assert_eq!(
        (stats.full_reads, stats.generations_read),
        (1, 1),
        "{stats:?}"
    );
    assert_eq!(source.revision(), revision);
    // A publish after the restart comes through the resumed watch.
    let c = config_of(4, 81);
    publish(&etcd, &layout, &c, PublishOptions::default())
        .await
        .unwrap();
    let s = source.next().await.unwrap();
    assert_eq!((s.generation, s.config), (2, c));
    let stats = source.stats();
    assert_eq!(
        (stats.full_reads, stats.generations_read, stats.compactions),
        (1, 2, 0)
    );
}

#[tokio::test]
async fn after_a_compaction_the_watcher_reads_the_whole_state_again() {
    let mut server = EtcdServer::start();
    let layout = Layout::new("/c");
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    publish(&etcd, &layout, &config_of(3, 80), PublishOptions::default())
        .await
        .unwrap();
    let mut source = Source::new(etcd.clone(), "/c");
    assert_eq!(source.next().await.unwrap().generation, 1);
    watching(&mut source).await;
    // While the watcher is cut off, two publishes and a compaction past
    // its revision.
    server.restart();
    publish_again(&etcd, &layout, &config_of(4, 81)).await;
    let c = config_of(5, 82);
    let p = publish_again(&etcd, &layout, &c).await;
    etcd.client()
        .compact(p.revision, Some(CompactionOptions::new().with_physical()))
        .await
        .unwrap();
    let s = loop {
        match source.next().await {
            Ok(s) => break s,
            Err(e) => assert!(e.is_transient(), "{e}"),
        }
    };
    assert_eq!((s.generation, s.config), (3, c));
    let stats = source.stats();
    assert_eq!((stats.compactions, stats.full_reads), (1, 2), "{stats:?}");
    // A read at the compacted revision is its own error.
    match ipvs_agent::fleet::store::read::read(&etcd, &layout, Some(p.revision - 1)).await {
        Err(FleetError::Compacted { revision }) => assert_eq!(revision, p.revision - 1),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_agent_following_etcd_applies_each_generation_as_a_reload() {
    use crate::daemon_support::{changes, config, start, text, weight, Scripted};
    use ipvs_agent::daemon::AgentOptions;
    use ipvsnl::emulator::Kernel;

    let server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let layout = Layout::new("/follow");
    publish(
        &etcd,
        &layout,
        &config(&text("1h", 20, "")),
        PublishOptions::default(),
    )
    .await
    .unwrap();
    let mut source = Source::new(etcd.clone(), "/follow");
    let first = ipvs_agent::fleet::follow::reload::first(&mut source).await;
    let kernel = Kernel::new();
    let agent = start(
        &kernel,
        first,
        &Scripted::default(),
        AgentOptions::default(),
    );
    tokio::spawn(ipvs_agent::fleet::follow::reload::follow(
        source,
        agent.handle.clone(),
    ));
    let key = crate::daemon_support::key(80);
    let until = Instant::now() + Duration::from_secs(20);
    while weight(&kernel, &key, crate::daemon_support::B) != "20" {
        assert!(Instant::now() < until, "first sync");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    kernel.clear_requests();
    publish(
        &etcd,
        &layout,
        &config(&text("1h", 30, "")),
        PublishOptions::default(),
    )
    .await
    .unwrap();
    while weight(&kernel, &key, crate::daemon_support::B) != "30" {
        assert!(Instant::now() < until, "the second generation");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(changes(&kernel).len(), 1, "{:?}", changes(&kernel));
    agent.stop(false).await;
}

#[tokio::test]
async fn a_change_of_one_service_comes_from_the_watch_alone() {
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let layout = Layout::new("/one");
    let mut c = config_of(50, 80);
    publish(&etcd, &layout, &c, PublishOptions::default())
        .await
        .unwrap();
    let mut source = Source::new(etcd.clone(), "/one");
    assert_eq!(source.next().await.unwrap().config, c);
    for round in 2..=4u32 {
        c.services[17].servers[1].destination.weight = round;
        let p = publish(&etcd, &layout, &c, PublishOptions::default())
            .await
            .unwrap();
        assert_eq!((p.puts, p.deletes), (1, 1));
        let s = source.next().await.unwrap();
        assert_eq!((s.generation, &s.config), (u64::from(round), &c));
        assert_eq!(s.current_revision, p.revision);
    }
    // A service removed and one added: the same way.
    c.services.pop();
    let p = publish(&etcd, &layout, &c, PublishOptions::default())
        .await
        .unwrap();
    assert_eq!((p.puts, p.deletes), (0, 1));
    assert_eq!(source.next().await.unwrap().config, c);
    let stats = source.stats();
    assert_eq!(
        (stats.full_reads, stats.from_watch, stats.read_whole),
        (1, 4, 0),
        "{stats:?}"
    );
}

#[tokio::test]
async fn a_watcher_started_in_the_middle_of_a_publish_gets_each_generation_whole() {
    use ipvs_agent::fleet::publish::transactions::Limits;
    use std::sync::{Arc, Mutex};

    let server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let layout = Layout::new("/mid");
    let (first, second) = (config_of(10, 80), config_of(12, 81));
    publish(&etcd, &layout, &first, PublishOptions::default())
        .await
        .unwrap();
    // After the second publish's first transaction of entries, a watcher
    // starts: half of the change is stored.
    let slot = Arc::new(Mutex::new(None));
    let (e, f, s) = (etcd.clone(), first.clone(), Arc::clone(&slot));
    let pause = Box::new(move |i: usize, _n: usize| {
        let (e, f, s) = (e.clone(), f.clone(), Arc::clone(&s));
        Box::pin(async move {
            if i == 0 {
                let mut source = Source::new(e, "/mid");
                let snapshot = source.next().await.unwrap();
                assert_eq!((snapshot.generation, snapshot.config), (1, f));
                *s.lock().unwrap() = Some(source);
            }
        }) as ipvs_agent::fleet::publish::write::PauseFuture
    });
    let options = PublishOptions::default()
        .with_limits(Limits::new(6, 1 << 20))
        .with_in_flight(1)
        .with_pause(pause);
    publish(&etcd, &layout, &second, options).await.unwrap();
    let mut source = slot.lock().unwrap().take().expect("the watcher started");
    // It read generation 1 at `current`'s revision and watched from there:
    // the rest of the change and the flip come on the watch, and add up.
    let s = source.next().await.unwrap();
    assert_eq!((s.generation, s.config), (2, second));
    let stats = source.stats();
    assert_eq!(
        (stats.full_reads, stats.from_watch, stats.read_whole),
        (1, 1, 0),
        "{stats:?}"
    );
}
