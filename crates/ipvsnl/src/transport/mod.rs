//! The I/O layer: a netlink socket (the framing is the protocol core's,
//! [`crate::proto::frame`]) and the two ways of waiting on it: blocking
//! system calls ([`blocking::Blocking`]) and tokio's readiness
//! ([`tokio::Tokio`], with the `tokio` feature). The one driver loop
//! ([`crate::drive`]) runs over either through [`Transport`]. Beside it,
//! the older interface's socket ([`sockopt`]), whose calls never wait.

use std::future::Future;
use std::io;
use std::time::Duration;

use crate::proto::Wait;
use netns::NetnsHandle;

pub(crate) mod blocking;
pub(crate) mod choice;
pub(crate) mod netns;
pub(crate) mod socket;
pub(crate) mod sockopt;
#[cfg(feature = "tokio")]
pub(crate) mod tokio;

pub(crate) use socket::Received;

/// Sends and receives datagrams on a client's socket.
///
/// Both methods are cancel-safe at their await points: a datagram is
/// either sent (received) and reported, or not touched. A future dropped
/// while it waits did nothing to the socket.
pub(crate) trait Transport {
    /// Sends one datagram whole.
    fn send(&mut self, datagram: &[u8]) -> impl Future<Output = io::Result<()>> + Send;

    /// Receives up to `got.len()` datagrams, the i-th into the i-th
    /// `segment` bytes of `rx`, waiting as `wait` says for the first.
    /// Nothing within the wait is an `EAGAIN` error.
    fn receive(
        &mut self,
        rx: &mut [u8],
        segment: usize,
        got: &mut [Received],
        wait: Wait,
    ) -> impl Future<Output = io::Result<usize>> + Send;

    /// A point where a run of calls that never wait (the socket-option
    /// calls beside this socket, each answered within the call) lets the
    /// caller's other tasks run: a unit of tokio's budget for the tokio
    /// transport, nothing (this default) for the others.
    fn cooperate(&mut self) -> impl Future<Output = ()> + Send {
        std::future::ready(())
    }

    /// Moves to a fresh socket made as `fresh` says, closing this one
    /// (and dropping what was queued on it: no late reply to it can be
    /// read after). On an error the transport keeps the socket it had.
    /// This default cannot: `Unsupported`.
    fn reopen(&mut self, fresh: &Fresh<'_>) -> impl Future<Output = io::Result<()>> + Send {
        let _ = fresh;
        std::future::ready(Err(io::ErrorKind::Unsupported.into()))
    }
}

/// How a client's fresh socket is made ([`Transport::reopen`]): in its
/// namespace (the calling thread's when it has no handle on one), with
/// its receive buffer and time-out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fresh<'a> {
    /// The client's namespace.
    pub(crate) netns: Option<&'a NetnsHandle>,
    /// The receive buffer to ask for, if the socket had one asked for.
    pub(crate) buffer: Option<usize>,
    /// The receive time-out.
    pub(crate) timeout: Duration,
}
