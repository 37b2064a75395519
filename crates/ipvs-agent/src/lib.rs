//! ipvs-agent: a director daemon for the Linux IPVS load balancer, on the
//! ipvsnl library's public API.
//!
//! This crate's library is the daemon's pure parts, tested on the host:
//!
//! - [`config`]: the TOML file of virtual services and real servers with
//!   their health checks, every error at its line and column;
//! - [`check`]: a server's health from its check results (rise/fall
//!   hysteresis) and when its checks run (interval and jitter against a
//!   clock the caller passes in);
//! - [`desired`]: from the configuration and every server's health, the
//!   table the kernel should hold ([`ipvsnl::sync::Table`]) and the
//!   syncer's options;
//! - [`probe`]: the checkers' I/O, one check of one server bounded by its
//!   timeout ([`probe::NetProber`]: TCP, HTTP, HTTPS, DNS, a command);
//! - [`daemon`]: the daemon loop ([`daemon::Agent`]: checks through a
//!   [`probe::Prober`], coalesced syncs through the library's `Syncer`,
//!   resync, reload as a diff, stop), driven by a [`daemon::Handle`], its
//!   kernel reached through a [`daemon::Connector`] (a test's: an emulated
//!   kernel); its HTTP endpoint, logs, systemd notifications and signals;
//! - `fleet` (feature `fleet`): the desired state in etcd, its publisher
//!   and followers, the election, the VIPs, the peer link;
//! - [`cli`]: the commands (`check`, `publish`, `run`): their flags read
//!   into the engines' options, the engines (`daemon`, `fleet`, which
//!   never import each other) composed.

pub mod check;
pub mod cli;
pub mod config;
pub mod daemon;
pub mod desired;
#[cfg(feature = "fleet")]
pub mod fleet;
pub mod import;
pub mod probe;
pub mod render;
