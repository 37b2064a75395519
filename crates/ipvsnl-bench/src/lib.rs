//! The kernel benchmarks of ipvsnl (not published): the plain netlink
//! client every contestant is measured against, and the workloads.
//!
//! Binaries:
//!
//! * `bulk-compare`: the side-by-side comparison of the bulk-sync engine,
//!   a plain client and ipvsadm in one VM boot (run by `scripts/measure/bench`);
//! * `plain-client`: the plain client as a process of its own, for the
//!   whole-process rows (`plain-client restore` / `plain-client save`);
//! * `decode-cost`: the listing's decode work per service, counted under
//!   valgrind by `scripts/measure/decode-cost`.

pub mod daemon;
pub mod plain;

// The workloads and fresh namespaces are the test-support crate's
// (`ipvsnl_test_support::{workload, netns}`), shared with the root
// package's benches and the kernel tests.
