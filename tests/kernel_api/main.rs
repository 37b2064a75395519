//! The library's operations against the real kernel: both clients,
//! services, destinations, listings, faults, namespaces.
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

mod async_client;
mod capture;
mod client_smoke;
mod destinations;
mod faults;
mod listing_facts;
mod misc;
mod namespace_fd;
mod operations;
mod services;
mod smoke;
