//! Kernel replies to the typed model: the one place that turns what the
//! wire crate reads into services, destinations and the rest. Pure, and
//! never panics on what the kernel sends: a reply that cannot be read is a
//! [`DecodeError`](crate::DecodeError) naming what was bad.
//!
//! - `detail`: how much of an entry to decode;
//! - `netlink`: the attributes of IPVS generic-netlink messages;
//! - `proc_text`: the text of `/proc/net/ip_vs_stats`.

mod detail;
mod netlink;
mod proc_text;

#[cfg(test)]
pub(crate) use netlink::destination_reply;
pub(crate) use netlink::{
    empty_service, fill_service, info, push_destination, service_reply, sync_daemon, timeouts,
};
pub(crate) use proc_text::proc_stats;

pub(crate) use detail::{DecodeResult, Detail};

#[cfg(test)]
mod bad_bytes;
#[cfg(test)]
mod tests;
