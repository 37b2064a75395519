//! Real traffic through services the library configures: forwarding
//! methods, schedulers, chaos.
//!
//! Kernel tests need root and a kernel with IPVS: they are `#[ignore]`d and
//! run in the VM by `.ci/kernel-tests` (see `tests/common/mod.rs`). One
//! binary per group of topics, a module per topic: a test's full name
//! (`module::test`) is what a filter selects, e.g.
//! `.ci/kernel-tests -- smoke::`.

#[macro_use]
#[path = "../common/mod.rs"]
mod common;

mod chaos;
mod forwarding;
mod scheduling;
