//! The server's limits: how long a client may take over a request's
//! headers, may stay idle between requests, may take to read a response,
//! how many connections are open at once and how many listings responses
//! may hold. Each is a flag (`--web.header-timeout` ...); the defaults are
//! [`Limits::default`].

use std::time::Duration;

/// The default `--web.max-connections`.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// The default `--web.header-timeout`.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The default `--web.idle-timeout`.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// The default `--web.response-timeout`.
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default `--web.max-listings`.
pub const DEFAULT_MAX_LISTINGS: usize = 2;
/// Descriptors kept free below the open-files limit for everything but the
/// connections (the listener, the netlink sockets, stdio, /proc reads).
pub const RESERVED_DESCRIPTORS: usize = 64;

/// What the server grants each client, and all of them together.
///
/// ```
/// use std::time::Duration;
/// use ipvsnl_exporter::Limits;
/// let limits = Limits::default().with_max_connections(64);
/// assert_eq!(limits.max_connections, 64);
/// assert_eq!(limits.header_timeout, Duration::from_secs(10));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Connections open at once. A new one beyond it closes the
    /// connection that has waited longest for a request (idle, or sending
    /// its headers); when every connection is busy answering, the new one
    /// is answered 503 and closed.
    pub max_connections: usize,
    /// From a connection's accept, or from the first byte of a request on
    /// a kept-alive one, until its headers are in: past it, the
    /// connection is closed.
    pub header_timeout: Duration,
    /// From the end of a response until the next request's first byte:
    /// past it, the kept-alive connection is closed.
    pub idle_timeout: Duration,
    /// From a request's headers until its whole response is handed to the
    /// socket: past it, the connection is closed and what the response
    /// held is freed.
    pub response_timeout: Duration,
    /// Listings of the table held by responses still being sent (requests
    /// that arrive while a listing is taken share it). A new listing
    /// beyond it closes the connections still sending the oldest one.
    pub max_listings: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
            max_listings: DEFAULT_MAX_LISTINGS,
        }
    }
}

impl Limits {
    /// The same limits with `max_connections` (at least 1).
    #[must_use]
    pub fn with_max_connections(mut self, max_connections: usize) -> Self {
        self.max_connections = max_connections.max(1);
        self
    }

    /// The same limits with `header_timeout`.
    #[must_use]
    pub fn with_header_timeout(mut self, header_timeout: Duration) -> Self {
        self.header_timeout = header_timeout;
        self
    }

    /// The same limits with `idle_timeout`.
    #[must_use]
    pub fn with_idle_timeout(mut self, idle_timeout: Duration) -> Self {
        self.idle_timeout = idle_timeout;
        self
    }

    /// The same limits with `response_timeout`.
    #[must_use]
    pub fn with_response_timeout(mut self, response_timeout: Duration) -> Self {
        self.response_timeout = response_timeout;
        self
    }

    /// The same limits with `max_listings` (at least 1).
    #[must_use]
    pub fn with_max_listings(mut self, max_listings: usize) -> Self {
        self.max_listings = max_listings.max(1);
        self
    }

    /// The limits the process can keep: `max_connections` lowered to the
    /// soft open-files limit less [`RESERVED_DESCRIPTORS`] when that is
    /// lower, and the sentence to log when it was. An unknown limit
    /// changes nothing.
    pub fn fit_open_files(self, soft_limit: Option<u64>) -> (Limits, Option<String>) {
        let Some(soft) = soft_limit else {
            return (self, None);
        };
        let room = usize::try_from(soft)
            .unwrap_or(usize::MAX)
            .saturating_sub(RESERVED_DESCRIPTORS)
            .max(1);
        if self.max_connections <= room {
            return (self, None);
        }
        let why = format!(
            "--web.max-connections={} lowered to {room}: the open-files limit is {soft} \
             ({RESERVED_DESCRIPTORS} kept for the rest)",
            self.max_connections
        );
        (self.with_max_connections(room), Some(why))
    }
}

/// The soft open-files limit of this process (`Max open files` in
/// `/proc/self/limits`); `None` when unlimited or unreadable.
pub fn open_files_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_cap_fits_the_open_files_limit() {
        let limits = Limits::default();
        assert_eq!(limits.fit_open_files(None), (limits, None));
        assert_eq!(limits.fit_open_files(Some(1 << 20)), (limits, None));
        let (fitted, why) = limits.fit_open_files(Some(256));
        assert_eq!(fitted.max_connections, 256 - RESERVED_DESCRIPTORS);
        assert!(why.unwrap().contains("open-files limit is 256"));
        assert_eq!(limits.fit_open_files(Some(10)).0.max_connections, 1);
        assert!(open_files_limit().is_some_and(|n| n > 0));
    }
}
