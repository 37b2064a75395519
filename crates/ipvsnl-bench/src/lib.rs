//! The kernel benchmarks of ipvsnl (not published): the plain netlink
//! client every contestant is measured against, and the workloads.
//!
//! Binaries:
//!
//! * `bulk-compare`: the side-by-side comparison of the bulk-sync engine,
//!   a plain client and ipvsadm in one VM boot (run by `.ci/bench`);
//! * `plain-client`: the plain client as a process of its own, for the
//!   whole-process rows (`plain-client restore` / `plain-client save`);
//! * `decode-cost`: the listing's decode work per service, counted under
//!   valgrind by `.ci/decode-cost`.

pub mod plain;

/// The tables of the benches (shared with the root package's criterion
/// benches, which include the same file).
#[path = "../../../benches/support/workload.rs"]
pub mod workload;

/// Fresh network namespaces (shared with the root package's benches).
#[path = "../../../benches/support/netns.rs"]
pub mod netns;
