//! The workspace's tools against the real kernel: the ipvsadm drop-in
//! against Debian's ipvsadm, ipvs-doctor, the exporter.
//!
//! Kernel tests need root and a kernel with IPVS: they are `#[ignore]`d and
//! run in the VM by `.ci/kernel-tests` (see `tests/common/mod.rs`). One
//! binary per group of topics, a module per topic: a test's full name
//! (`module::test`) is what a filter selects, e.g.
//! `.ci/kernel-tests -- smoke::`.

#[macro_use]
#[path = "../common/mod.rs"]
mod common;

mod agent_flap;
mod agent_health;
mod agent_ipv6;
mod agent_kill;
mod agent_owned;
mod agent_reload;
mod agent_startup;
mod agent_support;
mod crosscheck;
mod doctor;
mod exporter;
mod keepalived_side;
mod keepalived_side_samples;
mod keepalived_side_support;
