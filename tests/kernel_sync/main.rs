//! The sync engine and the kernel's connection-sync daemon against the real
//! kernel.
//!
//! Kernel tests need root and a kernel with IPVS: they are `#[ignore]`d and
//! run in the VM by `.ci/kernel-tests` (see `tests/common/mod.rs`). One
//! binary per group of topics, a module per topic: a test's full name
//! (`module::test`) is what a filter selects, e.g.
//! `.ci/kernel-tests -- smoke::`.

#[macro_use]
#[path = "../common/mod.rs"]
mod common;
#[path = "../rawnl/mod.rs"]
mod rawnl;

mod cached;
mod daemon;
mod daemon_churn;
mod engine;
mod persistence;
mod trust;
