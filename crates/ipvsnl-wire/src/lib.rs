//! Sans-IO encoding and decoding of the Linux IPVS generic-netlink family.
//!
//! This crate turns IPVS messages into bytes and bytes into messages; it
//! opens no socket and knows nothing of a kernel beyond its ABI. Every
//! attribute enum keeps what it does not recognise in an `Other` variant, so
//! a message from a newer kernel still parses, and every decoding error
//! names the attribute that was wrong.
//!
//! Byte order is decided per attribute in one place (`bytes.rs`): ports,
//! addresses and the IPv4 netmask are network order; everything else,
//! including the IPv6 "netmask" (a prefix length) and the sync daemon's
//! multicast port, is host order.
//!
//! Two ways to read: the owned attribute enums ([`IpvsMessage`] holds a
//! `Vec` of them per nest), and one-pass values ([`ServiceValues`],
//! [`DestValues`], [`StatsValues`]) that decode a whole nest in one walk,
//! without allocating, for listings of thousands of objects ([`find_attr`]
//! finds a nest in a message's attributes). Both take their attribute
//! numbers (the `IPVS_*_ATTR_*` constants) and payload readers from the
//! same place. Requests can be written without building a
//! message first with the [`write`](mod@write) functions.
//!
//! The older socket-option interface's structs (the one consistent
//! snapshot of a namespace's IPv4 services) are read by [`sockopt`].
//!
//! The typed model (services, destinations, schedulers) lives in the
//! `ipvsnl` crate, which builds these messages.
//!
//! ```
//! use ipvsnl_wire::{IpvsAttr, IpvsCommand, IpvsMessage, ServiceAttr};
//! use netlink_packet_core::{NetlinkMessage, NLM_F_ACK, NLM_F_REQUEST};
//! use netlink_packet_generic::GenlMessage;
//!
//! let payload = IpvsMessage::new(
//!     IpvsCommand::DelService,
//!     vec![IpvsAttr::Service(vec![
//!         ServiceAttr::AddressFamily(2),
//!         ServiceAttr::Fwmark(5),
//!     ])],
//! );
//! let mut genl = GenlMessage::from_payload(payload);
//! genl.set_resolved_family_id(0x23);
//! let mut msg = NetlinkMessage::from(genl);
//! msg.header.flags = NLM_F_REQUEST | NLM_F_ACK;
//! msg.finalize();
//! let mut buf = vec![0; msg.buffer_len()];
//! msg.serialize(&mut buf);
//! assert_eq!(buf.len(), 16 + 4 + 4 + 8 + 8);
//! ```

#![warn(missing_docs)]
// Pure byte handling: no syscall, so no reason for unsafe code.
#![forbid(unsafe_code)]

mod attr;
mod bytes;
mod command;
mod consts;
mod daemon;
mod dest;
mod message;
mod nest;
mod service;
pub mod sockopt;
mod stats;
mod values;
mod walk;
pub mod write;

pub use attr::IpvsAttr;
pub use command::IpvsCommand;
pub use consts::*;
pub use daemon::DaemonAttr;
pub use dest::DestAttr;
pub use message::{IpvsMessage, IPVS_GENL_NAME, IPVS_GENL_VERSION};
pub use service::{FlagsMask, ServiceAttr};
pub use stats::{StatsAttr, StatsField};
pub use values::{DestValue, DestValues, ServiceValues, StatsValues};
pub use walk::find_attr;

/// Re-exported so users need not name the matching versions themselves.
pub use netlink_packet_core;
/// Re-exported so users need not name the matching versions themselves.
pub use netlink_packet_generic;

/// The crate README's example, compiled as a doctest so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
