//! A safe client for Linux IPVS (IP Virtual Server), the kernel's layer-4
//! load balancer, over its generic-netlink family — no libnl, no ipvsadm.
//!
//! - [`Client`]: one socket per client, every kernel operation as a typed
//!   method, any network namespace ([`Client::in_namespace`], or from an
//!   open descriptor, [`Client::in_namespace_fd`]), pipelined batches of
//!   [`Request`]s ([`Client::apply`]). With feature `tokio`, `AsyncClient`:
//!   the same methods as futures; [`Operations`], a trait both implement,
//!   for code written once for either.
//! - The model: [`Service`] keyed by [`ServiceKey`] (protocol + address +
//!   port, or fwmark + family; read from the text it prints, `TCP
//!   10.0.0.1:80` or `fwmark 5 (IPv4)`), [`Destination`] with its
//!   [`Forward`]ing method (tunnel parameters only on [`Forward::Tunnel`]),
//!   any [`Scheduler`] by name, 64-bit [`Stats`], [`Timeouts`], [`Info`],
//!   [`SyncDaemon`]. Each checks what the kernel would refuse before it is
//!   sent, the fault named in an [`InvalidValue`].
//! - One [`Error`] that says what is known: refused by the kernel (with its
//!   errno), outcome unknown (sent, never answered), not sent, timed out,
//!   socket failure, bad input (refused before anything is sent), a reply
//!   that could not be read; the failed request named as a [`Target`].
//! - The protocol core, [`proto`]: pure state machines (no socket), which
//!   the blocking [`Client`] drives; another driver can too.
//!
//! - Listings as one row type, [`ServiceEntry`] (service, counters,
//!   destinations), with constructors for test fixtures; every enum and
//!   flag set prints in ipvsadm's words ([`std::fmt::Display`]). A
//!   listing is whole: every service that existed for the whole call is
//!   in it, although the kernel's dump can skip services while any
//!   namespace changes its table (see [`Client::table`] for how, and the
//!   one case, IPv6 services, where a miss stays possible).
//! - Feature `serde`: Serialize/Deserialize for the model types and for
//!   [`sync::Table`] (flags as lists of names, unknown values as numbers).
//!
//! The wire format lives in the sans-IO crate `ipvsnl_wire`.
//!
//! ```no_run
//! use ipvsnl::{Client, Destination, Forward, Scheduler, Service, ServiceKey};
//!
//! let mut ipvs = Client::new()?;
//! let key = ServiceKey::tcp("192.0.2.10".parse().unwrap(), 443);
//! ipvs.add_service(&Service::new(key).with_scheduler(Scheduler::Maglev))?;
//! for (i, ip) in ["198.51.100.1", "198.51.100.2"].iter().enumerate() {
//!     let dest = Destination::new(ip.parse().unwrap(), 443)
//!         .with_forward(Forward::Route)
//!         .with_weight(i as u32 + 1);
//!     ipvs.add_destination(&key, &dest)?;
//! }
//! for row in ipvs.table()? {
//!     println!("{}: {} destinations", row.key(), row.destinations.len());
//! }
//! # Ok::<(), ipvsnl::Error>(())
//! ```

#![warn(missing_docs)]

// Netlink sockets, setns(2) and the IPVS family exist only on Linux.
#[cfg(not(target_os = "linux"))]
compile_error!(
    "ipvsnl builds only for target_os = \"linux\": it drives the Linux kernel's IPVS over \
     netlink sockets and setns(2); the sans-IO wire format (ipvsnl-wire) builds anywhere"
);

#[cfg(feature = "tokio")]
mod async_client;
mod block_on;
mod client;
mod conn;
pub mod connections;
mod decode;
mod decode_error;
mod drive;
mod error;
mod failures;
mod fixed_attrs;
mod listing;
mod model;
mod operations;
mod options;
mod pipeline;
pub mod proto;
mod reason;
mod request;
pub mod rules;
pub mod sync;
mod target;
mod transport;
#[cfg(feature = "tokio")]
pub mod watch;

#[cfg(feature = "tokio")]
pub use async_client::AsyncClient;
pub use client::Client;
pub use decode_error::DecodeError;
pub use error::Error;
pub use model::config::{Info, Timeouts, TIMEOUT_MAX};
pub use model::daemon::{DaemonRole, SyncDaemon, IFNAME_MAX, SYNC_ID_MAX};
pub use model::destination::{
    Destination, Forward, Tunnel, TunnelFlags, TunnelKind, THRESHOLD_MAX, WEIGHT_MAX,
};
pub use model::entry::{DestinationEntry, ServiceEntry};
pub use model::family::{AddressFamily, Protocol};
pub use model::invalid::InvalidValue;
pub use model::key_text::ParseKeyError;
pub use model::scheduler::{Scheduler, SCHED_NAME_MAX};
pub use model::service::{Netmask, Service, ServiceFlags, ServiceKey, PE_NAME_MAX};
pub use model::stats::Stats;
pub use model::unknown::{UnknownForward, UnknownProtocol, UnknownScheduler, UnknownTunnelKind};
pub use operations::Operations;
pub use options::ClientOptions;
pub use pipeline::ApplyOptions;
pub use request::{Request, RequestKind};
pub use target::{Object, Target};

/// The sans-IO wire crate this client is built on.
pub use ipvsnl_wire as wire;

/// The crate README's examples, compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
