//! What a driver and a protocol machine say to each other: the machine asks
//! for an action ([`Poll`]), the driver does it and tells what happened
//! ([`Input`]).

use std::io;
use std::time::Duration;

/// What a machine wants done next.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Poll<'a> {
    /// Send these bytes as one datagram, then report [`Input::Sent`] or
    /// [`Input::SendFailed`].
    Transmit(&'a [u8]),
    /// Receive a datagram, then report what came (or did not).
    Receive(Wait),
    /// Nothing more: the machine's result is ready.
    Finished,
}

/// How long a receive may wait for its first datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Wait {
    /// Only what is queued already: report [`Input::TimedOut`] at once if
    /// nothing is (a non-blocking read).
    Queued,
    /// Up to this long.
    Up(Duration),
}

/// What the driver saw.
#[derive(Debug)]
#[non_exhaustive]
pub enum Input<'a> {
    /// The datagram of the last [`Poll::Transmit`] was sent whole.
    Sent,
    /// Sending it failed: the kernel did not take it.
    SendFailed(io::Error),
    /// A datagram came (all of it).
    Datagram(&'a [u8]),
    /// A datagram came that was larger than the receive buffer: what it
    /// said is lost.
    Truncated {
        /// Its real length.
        len: usize,
    },
    /// The kernel dropped replies to this socket (`ENOBUFS`: its receive
    /// buffer overflowed). What is still queued can be read.
    Overrun,
    /// Nothing came within the [`Wait`].
    TimedOut,
    /// Receiving failed otherwise.
    ReceiveFailed(io::Error),
}

/// A protocol state machine: pure code, driven by someone else's I/O.
///
/// A driver loops: [`Machine::poll`], do what it says, [`Machine::handle`]
/// what happened, until [`Poll::Finished`]. Every machine finishes after a
/// bounded number of inputs, whatever they are: a driver that feeds it
/// time-outs forever still ends.
///
/// ```
/// use ipvsnl::proto::{Input, Machine, Poll, Session, Wait};
/// // A driver with no kernel: every receive times out.
/// fn drive(m: &mut impl Machine) {
///     loop {
///         match m.poll() {
///             Poll::Transmit(_) => m.handle(Input::Sent),
///             Poll::Receive(_) => m.handle(Input::TimedOut),
///             Poll::Finished => return,
///             _ => unreachable!(),
///         }
///     }
/// }
/// let mut session = Session::new(std::time::Duration::from_secs(1));
/// let mut lookup = session.resolve_family();
/// drive(&mut lookup);
/// assert!(lookup.result().unwrap().unwrap_err().is_timeout());
/// ```
pub trait Machine {
    /// What to do next.
    fn poll(&mut self) -> Poll<'_>;
    /// What happened.
    fn handle(&mut self, input: Input<'_>);
}
