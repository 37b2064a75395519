//! Kernel replies to the typed model: the one place that turns what the
//! wire crate reads into services, destinations and the rest. Pure, and
//! never panics on what the kernel sends: a reply that cannot be read is a
//! [`DecodeError`](crate::DecodeError) naming what was bad.
//!
//! - [`netlink`]: the attributes of IPVS generic-netlink messages;
//! - [`proc_text`]: the text of `/proc/net/ip_vs_stats`.

mod netlink;
mod proc_text;

#[cfg(test)]
pub(crate) use netlink::destination_reply;
pub(crate) use netlink::{
    empty_service, fill_service, info, push_destination, service_reply, sync_daemon, timeouts,
};
pub(crate) use proc_text::proc_stats;

/// Why a reply could not be turned into the model.
pub(crate) type DecodeResult<T> = Result<T, crate::DecodeError>;

/// How much of a listed service or destination to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detail {
    /// Everything, counters included.
    Full,
    /// Settings and connection counts, not the traffic counters (left at
    /// zero): what the sync engine plans with.
    Settings,
}

#[cfg(test)]
mod bad_bytes;
#[cfg(test)]
mod tests;
