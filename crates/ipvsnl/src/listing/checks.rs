//! What a client keeps to make its listings whole ([`super::whole`]): the
//! socket-option socket of its namespace, and the services its last
//! listing found that no snapshot can vouch for.

use std::collections::HashSet;
use std::io;

use crate::transport::sockopt::{ServiceSnapshot, SockoptSocket};
use crate::{AddressFamily, Error, ServiceKey};

/// A client's means to make its listings whole.
pub(crate) struct Checks {
    /// The socket-option socket (or why it could not be opened).
    pub(super) sockopt: io::Result<SockoptSocket>,
    /// A listing of this client found an IPv6 service.
    pub(super) ipv6_seen: bool,
    /// The services of the last whole listing that the IPv4 snapshot
    /// cannot vouch for: the IPv6 ones (every one, without the socket).
    pub(super) remembered: HashSet<ServiceKey>,
    /// The last socket-option call that failed (that listing did without).
    pub(super) last_failure: Option<Error>,
    /// The IPv4 snapshot the check of the listing under way took, for its
    /// copy of the destinations to count with ([`super::by_sockopt`]):
    /// one `IP_VS_SO_GET_SERVICES` a settings listing rather than two.
    /// Taken by that copy, and dropped when the listing ends; kept only
    /// while `keep_snapshot` says a copy will follow.
    pub(super) snapshot: Option<ServiceSnapshot>,
    /// The listing under way copies destinations (a settings listing).
    pub(super) keep_snapshot: bool,
    /// The buffer of those copies (`IP_VS_SO_GET_DESTS`), one for them all,
    /// freed when the listing ends.
    pub(super) dests_buffer: Vec<u8>,
}

impl std::fmt::Debug for Checks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Checks");
        match &self.sockopt {
            Ok(_) => d.field("ipv4_snapshot", &"socket open"),
            Err(e) => d.field("ipv4_snapshot", &format_args!("no socket: {e}")),
        };
        d.field("ipv6_seen", &self.ipv6_seen)
            .field("remembered", &self.remembered.len())
            .field(
                "last_failure",
                &self.last_failure.as_ref().map(|e| e.to_string()),
            )
            .finish()
    }
}

impl Checks {
    /// The checks of a client with this socket-option socket (or none).
    pub(crate) fn new(sockopt: io::Result<SockoptSocket>) -> Self {
        Checks {
            sockopt,
            ipv6_seen: false,
            remembered: HashSet::new(),
            last_failure: None,
            snapshot: None,
            keep_snapshot: false,
            dests_buffer: Vec::new(),
        }
    }

    /// A dump listed these services.
    pub(super) fn listed<'a>(&mut self, mut keys: impl Iterator<Item = &'a ServiceKey>) {
        if !self.ipv6_seen {
            self.ipv6_seen = keys.any(|k| k.family() == AddressFamily::Inet6);
        }
    }

    /// A dump listed an IPv6 service.
    pub(super) fn ipv6_listed(&mut self) {
        self.ipv6_seen = true;
    }

    /// Whether a service of `key` is remembered from listing to listing:
    /// when the IPv4 snapshot cannot vouch for it.
    fn needs_remembering(&self, key: &ServiceKey) -> bool {
        self.sockopt.is_err() || key.family() == AddressFamily::Inet6
    }

    /// A listing whole as far as it could be found these services: they
    /// are the ones remembered now.
    pub(super) fn whole<'a>(&mut self, keys: impl Iterator<Item = &'a ServiceKey>) {
        if !self.ipv6_seen && self.sockopt.is_ok() {
            // Nothing to remember (and nothing was).
            return;
        }
        let remembered: HashSet<ServiceKey> = keys
            .filter(|k| self.needs_remembering(k))
            .copied()
            .collect();
        self.remembered = remembered;
    }
}
