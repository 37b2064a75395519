//! Fleet mode (issue 26): one desired state in etcd, followed by every
//! director, and one leader among them holding the VIPs.
//!
//! A mechanism a folder, each below the ones it uses (no two import each
//! other; `.ci/import-cycles` checks it):
//!
//! - [`store`]: how a configuration is kept in etcd: the keys under a
//!   prefix, each value's text, the `current` record naming the complete
//!   generation, the values parsed back, a generation read verified, the
//!   etcd connection;
//! - [`publish`]: `ipvs-agent publish`: a file parsed (only the services
//!   its cache does not know), what changed since the stored generation,
//!   its entries, transactions within etcd's limits, the generation
//!   written so that no reader sees half of it;
//! - [`follow`]: a running agent's configurations: the watch of the
//!   prefix ([`Source`]), each new generation handed to the agent as a
//!   reload;
//! - [`vip`]: the leader's addresses on an interface, announced (ARP,
//!   neighbour advertisement), recorded on disk;
//! - [`peers`]: what the directors tell each other on the peer link (the
//!   datagram) and what their reports allow;
//! - [`leader`]: who leads: the state machine, its driver on etcd's
//!   election and a lease, the peer link, and the leader's actions (the
//!   VIPs, the kernel's sync daemon as master or backup);
//! - [`errors`]: [`FleetError`], naming what failed (every mechanism's).
//!
//! Fleet mode reads no flag and does not import the daemon: the command
//! layer (`crate::cli`) fills its options and gives it the daemon's
//! handle.

pub mod errors;
pub mod follow;
pub mod leader;
pub mod peers;
pub mod publish;
pub mod store;
pub mod vip;

pub use errors::FleetError;
pub use follow::watch::Source;
