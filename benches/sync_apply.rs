//! Apply benches: they need IPVS (root, the ip_vs module), so they run in
//! the VM and skip cleanly anywhere else. Each iteration gets a fresh
//! network namespace. The side-by-side comparison with ipvsadm is
//! the bulk comparison (`crates/ipvsnl-bench`, `scripts/measure/bench`).

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use ipvsnl::sync::{PlanOptions, Syncer};
use ipvsnl::Client;

use ipvsnl_test_support::netns;
use ipvsnl_test_support::workload::{churned, desired, Layout};

const SERVICES: u32 = 1_000;
const DESTS: u32 = 4;

fn apply(c: &mut Criterion) {
    if !netns::ipvs_available() {
        eprintln!("sync_apply: IPVS not available here (needs root and ip_vs): skipped");
        return;
    }
    let want = desired(Layout::Spread, SERVICES, DESTS);
    let churn = churned(Layout::Spread, SERVICES, DESTS, 1);
    let mut g = c.benchmark_group("apply 1000x4");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(100));
    g.bench_function("cold create", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                netns::enter_fresh_netns().expect("new netns");
                let mut client = Client::new().expect("client");
                let mut s = Syncer::new(PlanOptions::default());
                let t = Instant::now();
                let r = s.sync(&mut client, &want).expect("sync");
                total += t.elapsed();
                assert!(r.is_complete(), "{r}");
            }
            total
        })
    });
    netns::enter_fresh_netns().expect("new netns");
    let mut client = Client::new().expect("client");
    let mut s = Syncer::new(PlanOptions::default());
    assert!(s.sync(&mut client, &want).expect("sync").is_complete());
    g.bench_function("full listing", |b| b.iter(|| client.table().expect("list")));
    g.bench_function("no-op resync (listed)", |b| {
        b.iter(|| s.sync(&mut client, &want).expect("sync"))
    });
    g.bench_function("no-op resync (cached)", |b| {
        b.iter(|| s.sync_cached(&mut client, &want).expect("sync"))
    });
    // 1 % churn there and back, from the cached view.
    g.bench_function("1 % churn resync (cached), there and back", |b| {
        b.iter(|| {
            let there = s.sync_cached(&mut client, &churn).expect("sync");
            (there, s.sync_cached(&mut client, &want).expect("sync"))
        })
    });
    g.finish();
}

criterion_group!(benches, apply);
criterion_main!(benches);
