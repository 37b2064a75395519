//! Figures for benches/AGENT.md, not tests: each `#[ignore]`d, run by
//! hand with `cargo test --release -p ipvs-agent --features fleet --test
//! figures NAME -- --ignored --nocapture`, NAME one of `fleet_figures`
//! (check and publish times), `fleet_publish_cost` (callgrind; needs
//! valgrind), `fleet_scale_figures` (one change in 10,000 services). They
//! need etcd. A test binary rather than examples: they use the test
//! support in tests/common/ and `CARGO_BIN_EXE_ipvs-agent`, which only
//! integration tests get.

#[allow(dead_code)] // the agent's host tests use the rest
#[path = "../common/daemon_support.rs"]
mod daemon_support;
#[allow(dead_code)] // the host tests use the rest
#[path = "../common/fleet_etcd.rs"]
mod fleet_etcd;
mod fleet_figures;
mod fleet_publish_cost;
mod fleet_scale;
#[path = "../common/fleet_scale_services.rs"]
mod fleet_scale_services;
