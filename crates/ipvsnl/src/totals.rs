//! The totals of a namespace (every service's counters summed), which
//! netlink has no command for: read from `/proc/net/ip_vs_stats` in the
//! client's namespace.

use crate::decode;
use crate::transport::netns::NetnsHandle;
use crate::{Error, Object, RequestKind, Stats, Target};

/// The totals of namespace `netns` from its `/proc/net/ip_vs_stats`
/// (netlink has no command for them), read from a short-lived thread
/// inside the namespace when the caller is elsewhere.
pub(crate) fn read_totals(netns: Option<&NetnsHandle>) -> Result<Stats, Error> {
    let target = || Target::new(RequestKind::Totals, Object::Table);
    let netns = netns.ok_or_else(|| {
        Error::io(
            target(),
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the client's namespace is unknown (/proc was not mounted)",
            ),
        )
    })?;
    let text = netns
        .read_proc_net("ip_vs_stats")
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => Error::Unavailable,
            _ => Error::io(target(), source),
        })?;
    decode::proc_stats(&text).map_err(|detail| Error::decode(target(), detail))
}
