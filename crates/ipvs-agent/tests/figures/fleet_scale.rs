//! One service changed in a 10,000-service configuration, on the host:
//! where the time goes, from `ipvs-agent publish`'s start to the kernel
//! (an agent on the emulated kernel), against a local single-member etcd.
//! Wall time on the host that runs it, so figures, not a test of speed:
//! `cargo test --release -p ipvs-agent --features fleet --test figures
//! fleet_scale_figures -- --ignored --nocapture`. The configuration is the
//! one the VM proof publishes ([`scale_text`], `fleet_vm_scale.rs`).

use std::net::IpAddr;
use std::time::{Duration, Instant};

use ipvs_agent::config;
use ipvs_agent::daemon::AgentOptions;
use ipvs_agent::fleet::publish::write::{publish, PublishOptions};
use ipvs_agent::fleet::store::etcd::Etcd;
use ipvs_agent::fleet::store::layout::Layout;
use ipvs_agent::fleet::Source;
use ipvsnl::emulator::Kernel;

use crate::daemon_support::{start, write_file, Scripted};
use crate::fleet_etcd::EtcdServer;
use crate::fleet_scale_services::{scale_text, service_key, CHANGED, SERVICES};

/// The weight of service `i`'s server `server` in the emulated kernel.
fn weight(kernel: &Kernel, i: usize, server: IpAddr) -> Option<u32> {
    let s = kernel.init_netns().service(&service_key(i))?;
    s.destinations
        .iter()
        .find(|d| d.destination.addr == server)
        .map(|d| d.destination.weight)
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

#[tokio::test]
#[ignore = "figures for benches/AGENT.md, run by hand"]
async fn fleet_scale_figures() {
    let servers: Vec<IpAddr> = vec!["10.0.0.11".parse().unwrap(), "10.0.0.12".parse().unwrap()];
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let layout = Layout::new("/scale");
    let file = write_file("scale.toml", &scale_text(SERVICES, &servers, 1));
    let first = config::load(&file).unwrap();
    let t = Instant::now();
    let p = publish(&etcd, &layout, &first, PublishOptions::default())
        .await
        .unwrap();
    println!(
        "SCALE first publish of {SERVICES} services: {} ms, {} transactions, {} bytes",
        ms(t.elapsed()),
        p.transactions,
        p.bytes
    );
    let mut source = Source::new(etcd.clone(), "/scale");
    let t = Instant::now();
    let s = source.next().await.unwrap();
    println!("SCALE first read: {} ms", ms(t.elapsed()));
    let kernel = Kernel::new();
    let agent = start(
        &kernel,
        s.config,
        &Scripted::default(),
        AgentOptions::default(),
    );
    let t = Instant::now();
    while weight(&kernel, SERVICES - 1, servers[1]).is_none() {
        assert!(t.elapsed() < Duration::from_secs(120), "first sync");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    println!(
        "SCALE first sync to the emulated kernel: {} ms",
        ms(t.elapsed())
    );

    for round in 2..=6u32 {
        // The operator's change: one weight, in the file.
        std::fs::write(&file, scale_text(SERVICES, &servers, round)).unwrap();
        let t0 = Instant::now();
        // publish: the file read and validated, then written.
        let c = config::load(&file).unwrap();
        let loaded = t0.elapsed();
        let t = Instant::now();
        let encoded = ipvs_agent::fleet::store::layout::entries(&c);
        let _ = ipvs_agent::fleet::store::layout::record(1, &encoded);
        let encode = t.elapsed();
        let t = Instant::now();
        let p = publish(&etcd, &layout, &c, PublishOptions::default())
            .await
            .unwrap();
        let published = t.elapsed();
        // watch: the watcher's complete configuration.
        let t = Instant::now();
        let s = source.next().await.unwrap();
        let watched = t.elapsed();
        assert_eq!(s.config, c);
        // apply: the agent's diff to the kernel.
        let t = Instant::now();
        assert!(agent.handle.apply(s.config).await);
        while weight(&kernel, CHANGED, servers[0]) != Some(round) {
            assert!(t.elapsed() < Duration::from_secs(30), "the change applied");
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        let applied = t.elapsed();
        println!(
            "SCALE one weight changed in {SERVICES} (round {round}): total {} ms = publish command {} \
             (load+validate {}, publish call {}: of it encode+digest alone {}) + watcher {} + agent to kernel {}; \
             {} transactions, {} bytes",
            ms(t0.elapsed()),
            ms(loaded + published),
            ms(loaded),
            ms(published),
            ms(encode),
            ms(watched),
            ms(applied),
            p.transactions,
            p.bytes
        );
    }
    agent.stop(false).await;
}
