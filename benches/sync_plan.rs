//! Planning benches (pure, no kernel): 10,000 services x 5 destinations
//! from empty and with 0 %, 1 % and 10 % churn; plus the dry-run printer.

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ipvsnl::sync::{plan, DrainLedger, PlanOptions, Table};

use ipvsnl_test_support::workload::{churned, desired, Layout};

const SERVICES: u32 = 10_000;
const DESTS: u32 = 5;

fn planning(c: &mut Criterion) {
    let base = desired(Layout::Spread, SERVICES, DESTS);
    let opts = PlanOptions::default();
    let ledger = DrainLedger::new();
    let mut g = c.benchmark_group("plan 10000x5");
    g.sample_size(20);
    let empty = Table::new();
    g.bench_function("from empty", |b| {
        b.iter(|| {
            plan(
                black_box(&empty),
                black_box(&base),
                &opts,
                &ledger,
                Instant::now(),
            )
        })
    });
    for percent in [0u32, 1, 10] {
        let want = churned(Layout::Spread, SERVICES, DESTS, percent);
        g.bench_function(format!("{percent} % churn"), |b| {
            b.iter(|| {
                plan(
                    black_box(&base),
                    black_box(&want),
                    &opts,
                    &ledger,
                    Instant::now(),
                )
            })
        });
    }
    g.bench_function("desired state build", |b| {
        b.iter(|| desired(Layout::Spread, black_box(SERVICES), DESTS))
    });
    let full = plan(&empty, &base, &opts, &ledger, Instant::now());
    g.bench_function("dry run rules (from empty)", |b| {
        b.iter(|| black_box(&full).to_rules())
    });
    g.bench_function("plan from empty, owned inputs", |b| {
        b.iter_batched(
            || base.clone(),
            |want| plan(&empty, &want, &opts, &ledger, Instant::now()),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, planning);
criterion_main!(benches);
