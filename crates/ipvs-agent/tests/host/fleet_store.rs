//! Publishing to and reading from a real etcd (fleet_etcd): the file's
//! configuration read back equal, a change writes only what changed,
//! readers between a publish's transactions see the previous generation
//! whole, two publishers do not interleave, a file with an error writes
//! nothing.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ipvs_agent::cli::parse_publish;
use ipvs_agent::config::{self, LoadError};
use ipvs_agent::fleet::publish::file::publish_file;
use ipvs_agent::fleet::publish::transactions::Limits;
use ipvs_agent::fleet::publish::write::{publish, PublishOptions};
use ipvs_agent::fleet::store::etcd::Etcd;
use ipvs_agent::fleet::store::layout::Layout;
use ipvs_agent::fleet::store::read::read;
use ipvs_agent::fleet::FleetError;

use crate::fleet_etcd::{config_of, keys_under, EtcdServer};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/agent.toml");

#[tokio::test]
async fn a_published_file_reads_back_equal_and_a_change_writes_only_what_changed() {
    let server = EtcdServer::start();
    let endpoint = server.endpoint();
    let args = parse_publish(&[EXAMPLE, "--etcd", &endpoint, "--prefix", "/t"]).unwrap();
    let p = publish_file(&args, PublishOptions::default())
        .await
        .unwrap();
    assert_eq!((p.generation, p.services, p.transactions), (1, 4, 3));
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let layout = Layout::new("/t");
    let s = read(&etcd, &layout, None).await.unwrap();
    let file = config::load(std::path::Path::new(EXAMPLE)).unwrap();
    assert_eq!(s.generation, 1);
    assert_eq!(s.config, file);
    assert_eq!(s.current_revision, p.revision);
    // 4 services (the example's settings are the defaults: no key) and `current`.
    assert_eq!(keys_under(&etcd, "/t/").await, 5);

    for n in 2..=4 {
        let c = config_of(3, 80 + n as u16);
        let p = publish(&etcd, &layout, &c, PublishOptions::default())
            .await
            .unwrap();
        assert_eq!(p.generation, n);
        let s = read(&etcd, &layout, None).await.unwrap();
        assert_eq!((s.generation, &s.config), (n, &c));
    }
    // 3 services and the settings, and `current`; no claim left.
    assert_eq!(keys_under(&etcd, &layout.entries()).await, 4);
    assert_eq!(keys_under(&etcd, "/t/").await, 5);
    assert_eq!(keys_under(&etcd, &layout.publishing()).await, 0);
    // One weight changed: one entry deleted, one put, in one transaction.
    let mut c = config_of(3, 84);
    c.services[1].servers[0].destination.weight = 5;
    let one = publish(&etcd, &layout, &c, PublishOptions::default())
        .await
        .unwrap();
    assert_eq!(
        (one.generation, one.puts, one.deletes, one.transactions),
        (5, 1, 1, 3)
    );
    assert_eq!(read(&etcd, &layout, None).await.unwrap().config, c);
    // The same again: nothing but the claim and the flip.
    let same = publish(&etcd, &layout, &c, PublishOptions::default())
        .await
        .unwrap();
    assert_eq!(
        (same.generation, same.puts, same.deletes, same.transactions),
        (6, 0, 0, 2)
    );
    // A reader at an older revision still gets the generation then in force.
    let old = read(&etcd, &layout, Some(p.revision)).await.unwrap();
    assert_eq!(old.generation, 1);
}

#[tokio::test]
async fn readers_between_the_transactions_of_a_publish_see_the_previous_generation_whole() {
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let layout = Layout::new("/torn");
    let first = config_of(20, 80);
    publish(&etcd, &layout, &first, PublishOptions::default())
        .await
        .unwrap();
    // 8 operations a transaction: the 20 services deleted, then the 30 new
    // ones put (the settings are the same), in 7.
    let limits = Limits::new(10, 1 << 20);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (e, l, f, s) = (
        etcd.clone(),
        layout.clone(),
        first.clone(),
        Arc::clone(&seen),
    );
    let pause = Box::new(move |i: usize, n: usize| {
        let (e, l, f, s) = (e.clone(), l.clone(), f.clone(), Arc::clone(&s));
        Box::pin(async move {
            let snapshot = read(&e, &l, None).await.unwrap();
            let written = keys_under(&e, &l.entries()).await;
            s.lock()
                .unwrap()
                .push((i, n, snapshot.generation, snapshot.config == f, written));
        }) as ipvs_agent::fleet::publish::write::PauseFuture
    });
    let second = config_of(30, 81);
    let options = PublishOptions::default()
        .with_limits(limits)
        .with_pause(pause)
        .with_in_flight(1);
    let p = publish(&etcd, &layout, &second, options).await.unwrap();
    assert_eq!(p.transactions, 9);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            (0, 7, 1, true, 13),
            (1, 7, 1, true, 5),
            (2, 7, 1, true, 5),
            (3, 7, 1, true, 13),
            (4, 7, 1, true, 21),
            (5, 7, 1, true, 29),
            (6, 7, 1, true, 31),
        ],
        "(transaction, of, generation read, equal to the first, entries stored)"
    );
    let s = read(&etcd, &layout, None).await.unwrap();
    assert_eq!((s.generation, &s.config), (2, &second));

    // Two transactions in flight at once: a reader between two windows
    // still reads the previous generation whole.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (e, l, f, s) = (
        etcd.clone(),
        layout.clone(),
        second.clone(),
        Arc::clone(&seen),
    );
    let pause = Box::new(move |i: usize, n: usize| {
        let (e, l, f, s) = (e.clone(), l.clone(), f.clone(), Arc::clone(&s));
        Box::pin(async move {
            let snapshot = read(&e, &l, None).await.unwrap();
            let written = keys_under(&e, &l.entries()).await;
            s.lock()
                .unwrap()
                .push((i, n, snapshot.generation, snapshot.config == f, written));
        }) as ipvs_agent::fleet::publish::write::PauseFuture
    });
    let third = config_of(30, 82);
    let options = PublishOptions::default()
        .with_limits(limits)
        .with_pause(pause)
        .with_in_flight(2);
    publish(&etcd, &layout, &third, options).await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            (0, 8, 2, true, 15),
            (1, 8, 2, true, 15),
            (2, 8, 2, true, 3),
            (3, 8, 2, true, 3),
            (4, 8, 2, true, 19),
            (5, 8, 2, true, 19),
            (6, 8, 2, true, 31),
            (7, 8, 2, true, 31),
        ]
    );
    assert_eq!(read(&etcd, &layout, None).await.unwrap().config, third);
}

#[tokio::test]
async fn of_two_concurrent_publishers_the_second_gets_a_conflict_and_writes_nothing() {
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let layout = Layout::new("/two");
    let base = config_of(2, 80);
    publish(&etcd, &layout, &base, PublishOptions::default())
        .await
        .unwrap();
    let (a, b) = (config_of(20, 81), config_of(20, 82));
    let outcome = Arc::new(Mutex::new(None));
    let (e, l, o) = (etcd.clone(), layout.clone(), Arc::clone(&outcome));
    // A pauses after its first transaction; B publishes meanwhile.
    let pause = Box::new(move |i: usize, _n: usize| {
        let (e, l, o, b) = (e.clone(), l.clone(), Arc::clone(&o), b.clone());
        Box::pin(async move {
            if i == 0 {
                let r = publish(&e, &l, &b, PublishOptions::default()).await;
                *o.lock().unwrap() = Some(r);
            }
        }) as ipvs_agent::fleet::publish::write::PauseFuture
    });
    let options = PublishOptions::default()
        .with_limits(Limits::new(10, 1 << 20))
        .with_pause(pause);
    let won = publish(&etcd, &layout, &a, options).await.unwrap();
    assert_eq!(won.generation, 2);
    match outcome.lock().unwrap().take() {
        Some(Err(FleetError::Conflict { prefix, reason })) => {
            assert_eq!(prefix, "/two");
            assert!(
                reason.contains("`/two/publishing` is held by another: generation 2 by"),
                "{reason}"
            );
        }
        other => panic!("B: {other:?}"),
    }
    let s = read(&etcd, &layout, None).await.unwrap();
    assert_eq!((s.generation, s.config), (2, a));
    assert_eq!(keys_under(&etcd, &layout.entries()).await, 21);
}

#[tokio::test]
async fn a_publisher_whose_current_changed_meanwhile_gets_a_conflict() {
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let layout = Layout::new("/flip");
    publish(&etcd, &layout, &config_of(2, 80), PublishOptions::default())
        .await
        .unwrap();
    let a = config_of(20, 81);
    let (e, l) = (etcd.clone(), layout.clone());
    // Between A's transactions its claim is taken away and `current` rewritten
    // (an operator's hand, a publisher of an older version).
    let pause = Box::new(move |i: usize, _n: usize| {
        let (e, l) = (e.clone(), l.clone());
        Box::pin(async move {
            if i == 1 {
                let mut c = e.client();
                let now = c.get(l.current(), None).await.unwrap();
                let text = now.kvs()[0].value().to_vec();
                c.put(l.current(), text, None).await.unwrap();
            }
        }) as ipvs_agent::fleet::publish::write::PauseFuture
    });
    let options = PublishOptions::default()
        .with_limits(Limits::new(10, 1 << 20))
        .with_pause(pause);
    match publish(&etcd, &layout, &a, options).await {
        Err(FleetError::Conflict { reason, .. }) => {
            assert!(
                reason.contains("`/flip/current` changed since it was read"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
    // `current` rewritten by hand after A's entries: what is stored at its
    // revision is half of A's change, and readers refuse it.
    match read(&etcd, &layout, None).await {
        Err(FleetError::Incomplete { generation, .. }) => assert_eq!(generation, 1),
        other => panic!("{other:?}"),
    }
    // The claim went with its lease: the next publish goes through, and
    // replaces what the failed one left.
    let b = config_of(5, 82);
    let p = publish(&etcd, &layout, &b, PublishOptions::default())
        .await
        .unwrap();
    assert_eq!(p.generation, 2);
    assert_eq!(keys_under(&etcd, &layout.entries()).await, 6);
    assert_eq!(read(&etcd, &layout, None).await.unwrap().config, b);
}

#[tokio::test]
async fn a_file_with_an_error_writes_nothing() {
    let server = EtcdServer::start();
    let dir = std::env::temp_dir().join(format!("ipvs-agent-fleet-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file: PathBuf = dir.join("bad.toml");
    std::fs::write(
        &file,
        "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
         [[service.server]]\naddress = \"10.0.0.2\"\nweight = -1\n",
    )
    .unwrap();
    let endpoint = server.endpoint();
    let args = parse_publish(&[file.to_str().unwrap(), "--etcd", &endpoint]).unwrap();
    let r = publish_file(&args, PublishOptions::default()).await;
    std::fs::remove_dir_all(&dir).unwrap();
    match r {
        Err(FleetError::File(LoadError::Invalid(e))) => {
            assert_eq!(e.errors[0].line, 7);
            assert!(e.errors[0].message.contains("`weight`"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    assert_eq!(keys_under(&etcd, "/").await, 0, "nothing written");
    match read(&etcd, &Layout::new("/ipvs-agent"), None).await {
        Err(FleetError::NothingPublished { prefix }) => assert_eq!(prefix, "/ipvs-agent"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_etcd_that_does_not_answer_is_named() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let args = parse_publish(&[EXAMPLE, "--etcd", &endpoint]).unwrap();
    match publish_file(&args, PublishOptions::default()).await {
        Err(e @ FleetError::Unreachable { .. }) => {
            let text = e.to_string();
            assert!(
                text.starts_with(&format!("etcd at {endpoint} unreachable (read `current`)")),
                "{text}"
            );
            assert!(e.is_transient());
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_publisher_that_dies_holds_its_claim_until_its_lease_expires() {
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let layout = Layout::new("/dead");
    publish(&etcd, &layout, &config_of(2, 80), PublishOptions::default())
        .await
        .unwrap();
    // A writes part of generation 2 and "dies": its publish is dropped
    // while it waits between transactions (its lease is not revoked).
    let pause = Box::new(|_: usize, _: usize| {
        Box::pin(std::future::pending()) as ipvs_agent::fleet::publish::write::PauseFuture
    });
    let options = PublishOptions::default()
        .with_limits(Limits::new(10, 1 << 20))
        .with_in_flight(1)
        .with_pause(pause)
        .with_claim_ttl(2);
    let dead = tokio::time::timeout(
        std::time::Duration::from_secs(1),
        publish(&etcd, &layout, &config_of(20, 81), options),
    )
    .await;
    assert!(dead.is_err(), "the first publish never ends");
    // Its first transaction: the 2 services deleted, 6 of its 20 put.
    assert_eq!(keys_under(&etcd, &layout.entries()).await, 7);
    // Readers still get generation 1 whole (at `current`'s revision).
    let s = read(&etcd, &layout, None).await.unwrap();
    assert_eq!((s.generation, s.config), (1, config_of(2, 80)));
    let b = config_of(3, 82);
    match publish(&etcd, &layout, &b, PublishOptions::default()).await {
        Err(FleetError::Conflict { reason, .. }) => {
            assert!(reason.contains("is held by another"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    // Once the lease expired, B goes through and replaces A's leftovers.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let p = loop {
        match publish(&etcd, &layout, &b, PublishOptions::default()).await {
            Ok(p) => break p,
            Err(FleetError::Conflict { .. }) if std::time::Instant::now() < until => {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!((p.generation, p.deletes, p.puts), (2, 6, 3));
    assert_eq!(keys_under(&etcd, &layout.entries()).await, 4);
    assert_eq!(read(&etcd, &layout, None).await.unwrap().config, b);
}
