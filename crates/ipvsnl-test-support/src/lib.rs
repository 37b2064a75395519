//! What the tests and benches of ipvsnl share, written once (never
//! published).
//!
//! The root package's kernel tests (`tests/`, through `tests/common`), its
//! criterion benches (`benches/`) and the bench crate's binaries (the soak,
//! bulk-compare, listing-cost, scrape-cost) use it; it is also a model for
//! users who test their own IPVS code against a real kernel: a namespace a
//! test, then an oracle that does not trust the code under test.
//!
//! * [`netns`]: a fresh network namespace (an empty IPVS table) for the
//!   calling thread, and a namespace held by a thread ([`netns::Netns`]);
//! * [`commands`]: `ip` and other programs run in the thread's namespace;
//! * [`lab`]: hosts in namespaces joined by veth pairs: the forwarding lab
//!   (client, director, two real servers) and the failover lab (two
//!   directors, a client, a real server);
//! * [`real_server`]: real servers behind one veth pair from the director;
//! * [`echo`]: one echo server, with the answer each test needs;
//! * [`client`]: the client's side of that traffic;
//! * [`digest`]: the forwarding tests' requests and digest answers over
//!   TCP, UDP and SCTP;
//! * [`oracle`]: the kernel's table, read through one listing or from
//!   `/proc/net/ip_vs`, and what it takes to reach a desired one;
//! * [`table_diff`]: two tables compared field by field, each difference
//!   named;
//! * [`keys`]: numbered services, destinations and desired tables;
//! * [`workload`]: the benches' tables and their churn;
//! * [`errno`]: errno names for counts and messages.
//!
//! ```no_run
//! use ipvsnl::sync::{PlanOptions, Syncer};
//! use ipvsnl::Scheduler;
//! use ipvsnl_test_support::{keys::Numbered, netns, oracle, table_diff};
//!
//! netns::fresh_netns();
//! let mut c = ipvsnl::Client::new().unwrap();
//! let want = Numbered::new(0, 8).desired(10, 2, Scheduler::RoundRobin);
//! Syncer::new(PlanOptions::default()).sync(&mut c, &want).unwrap();
//! table_diff::assert_tables_equal("after a sync", &oracle::kernel_table(&mut c), &want);
//! ```

#![warn(missing_docs)]

pub mod client;
pub mod commands;
pub mod digest;
pub mod digest_servers;
pub mod echo;
pub mod errno;
pub mod keys;
pub mod lab;
pub mod netns;
pub mod oracle;
mod poll;
pub mod real_server;
pub mod table_diff;
pub mod workload;
