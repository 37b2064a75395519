//! Listings that stay whole while other namespaces churn their tables:
//! the netlink dumps made whole, and the socket-option listing.
//!
//! A binary of their own: their churners change tables as fast as they can,
//! which would shift the dumps of the reference ipvsadm run by tests of
//! other binaries (see `common::ipvsadm_listing`). Kernel tests need root
//! and a kernel with IPVS: they are `#[ignore]`d and run in the VM by
//! `.ci/kernel-tests` (see `tests/common/mod.rs`).

#[macro_use]
#[path = "../common/mod.rs"]
mod common;

mod sockopt;
mod whole;
