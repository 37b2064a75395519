//! The public options: how a client talks to the kernel (its receive
//! timeout, socket buffer, batch size and receive buffer, the same for the
//! blocking and the async client), and the tuning of one apply.

use std::time::Duration;

#[cfg(doc)]
use crate::Client;

/// How a client talks to the kernel.
///
/// ```
/// use std::time::Duration;
/// let opts = ipvsnl::ClientOptions::default().with_timeout(Duration::from_secs(5));
/// assert_eq!(opts.timeout(), Duration::from_secs(5));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    pub(crate) timeout: Duration,
    pub(crate) socket_buffer: usize,
    pub(crate) batch_bytes: usize,
    pub(crate) recv_buffer: usize,
    pub(crate) sockopt_listing: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            timeout: Duration::from_secs(30),
            socket_buffer: 4 << 20,
            batch_bytes: 64 << 10,
            recv_buffer: default_recv_buffer(),
            sockopt_listing: true,
        }
    }
}

/// The kernel sizes dump messages from the reader's buffer: a page-sized
/// buffer keeps its allocations small (measured faster than 1 MiB), and no
/// reply the kernel sends to this client is larger than a page.
///
/// 32 KiB (the kernel's cap) was measured too, `scripts/measure/listing-cost --kernel
/// 6.1 --before main` (icount, one boot, 10,000 x 5, medians of 8): the
/// service dump 0.094 -> 0.059 s (fewer parts, each resuming its walk from
/// the start), `table_settings` 0.159 -> 0.118 s, the no-op sync 0.193 ->
/// 0.152 s, but `table` (a destination dump per service) 0.650 -> 1.134 s:
/// the buffer size sticks to the socket, and every small dump then gets a
/// 32 KiB message. So a page stays here, and service dumps take a socket
/// of their own read with 32 KiB (`service_dumps.rs`, with its A/B).
fn default_recv_buffer() -> usize {
    // SAFETY: sysconf has no preconditions; it only reads a constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).unwrap_or(4096).clamp(4096, 65536)
}

impl ClientOptions {
    /// How long one receive may wait for the kernel (default 30 s; at
    /// least 1 ms: a zero socket timeout would mean "wait forever").
    ///
    /// When a wait runs out, the call reports what is not known (a
    /// change: [`Error::Unknown`](crate::Error::Unknown); a read:
    /// [`Error::Timeout`](crate::Error::Timeout)), and the client's next
    /// call on that socket goes out on a fresh one (always: there is no
    /// option to keep the old one). A kernel that stops answering may do
    /// so on one socket for good, and the old socket's late replies must
    /// never be read as the new calls' answers; a fresh socket has its
    /// own port id, so neither can happen, for the price of a `socket`
    /// and a `bind` after a wait that took the whole timeout.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The receive timeout in force.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The socket receive buffer (`SO_RCVBUF`, default 4 MiB). It bounds
    /// how many replies a batch may queue; batches are sized to fit it.
    #[must_use]
    pub fn with_socket_buffer(mut self, bytes: usize) -> Self {
        self.socket_buffer = bytes.max(4096);
        self
    }

    /// The most request bytes sent in one `sendmsg` (default 64 KiB).
    #[must_use]
    pub fn with_batch_bytes(mut self, bytes: usize) -> Self {
        self.batch_bytes = bytes.max(256);
        self
    }

    /// The user-space buffer one receive reads into (default: a page).
    /// Service dumps are read with 32 KiB on a socket of their own,
    /// whatever this says: see [`Client::services`].
    #[must_use]
    pub fn with_recv_buffer(mut self, bytes: usize) -> Self {
        self.recv_buffer = bytes.clamp(4096, 1 << 20);
        self
    }

    /// Whether settings listings ([`Client::table_settings`], the sync
    /// engine's) may read destinations through the older socket-option
    /// interface where it gives every field netlink would (default: yes;
    /// 14 times cheaper for the kernel than a netlink dump). `false` lists
    /// by netlink alone, as listings with counters always do: to compare
    /// the two, or on a kernel whose older interface is not trusted.
    ///
    /// ```
    /// let opts = ipvsnl::ClientOptions::default().with_socket_option_listing(false);
    /// assert!(!opts.socket_option_listing());
    /// ```
    ///
    /// [`Client::table_settings`]: crate::Client::table_settings
    #[must_use]
    pub fn with_socket_option_listing(mut self, on: bool) -> Self {
        self.sockopt_listing = on;
        self
    }

    /// Whether settings listings may use the socket-option interface.
    pub fn socket_option_listing(&self) -> bool {
        self.sockopt_listing
    }
}

/// Tuning of one [`Client::apply_with`] call.
///
/// ```
/// let opts = ipvsnl::ApplyOptions::default().with_max_batch_requests(64);
/// assert_eq!(opts.max_batch_requests(), Some(64));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApplyOptions {
    max_batch_requests: Option<usize>,
}

impl ApplyOptions {
    /// At most this many requests per `sendmsg`, overriding the bound the
    /// client derives from its socket buffer. A bound above what the
    /// buffer holds lets a batch full of failures overflow it: useful only
    /// to exercise the `ENOBUFS` recovery, or to measure.
    #[must_use]
    pub fn with_max_batch_requests(mut self, n: usize) -> Self {
        self.max_batch_requests = Some(n.max(1));
        self
    }

    /// The override in force, if any.
    pub fn max_batch_requests(&self) -> Option<usize> {
        self.max_batch_requests
    }
}
