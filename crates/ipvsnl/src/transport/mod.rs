//! The I/O layer: a netlink socket (the framing is the protocol core's,
//! [`crate::proto::frame`]) and the two ways of waiting on it: blocking
//! system calls ([`blocking::Blocking`]) and tokio's readiness
//! ([`tokio::Tokio`], with the `tokio` feature). The one driver loop
//! ([`crate::drive`]) runs over either through [`Transport`]. Beside it,
//! the older interface's socket ([`sockopt`]), whose calls never wait.

use std::future::Future;
use std::io;

use crate::proto::Wait;

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
}
