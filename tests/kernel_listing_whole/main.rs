//! Listings that stay whole while other namespaces churn their tables
//! (the netlink dumps made whole).
//!
//! A binary of its own: its churners change other namespaces' tables as
//! fast as they can, which shifts every dump made meanwhile (see
//! `common::ipvsadm_listing`); the two listing binaries' churners together
//! make the first listing of a new client miss IPv6 services more often
//! than the library promises to avoid (see `Operations::table`). Kernel
//! tests need root and a kernel with IPVS: they are `#[ignore]`d and run in
//! the VM by `.ci/kernel-tests` (see `tests/common/mod.rs`).

#[macro_use]
#[path = "../common/mod.rs"]
mod common;

mod whole;
