//! The state a session keeps between calls (the IPVS family id, the
//! sequence numbers, the receive wait, a dump left unfinished, the send
//! buffer), and the operations on it the machines share. The public
//! [`Session`](crate::proto::Session) owns one and lends it to each machine
//! it makes; this file knows no machine and no session, so the machines
//! and the session do not import each other.

use std::time::Duration;

use crate::proto::frame::{self, Reply};
use crate::proto::seq::next_seq;

/// What lives between calls on one socket. Machines borrow it for the
/// length of one call.
#[derive(Debug)]
pub(crate) struct State {
    /// The IPVS family id, once looked up.
    pub(crate) family: Option<u16>,
    /// The last sequence number handed out.
    seq: u32,
    /// How long a receive waits for the kernel.
    timeout: Duration,
    /// The sequence number of a dump started and not read to its end.
    pub(crate) unfinished_dump: Option<u32>,
    /// The send buffer, lent to the running machine.
    pub(crate) tx: Vec<u8>,
    /// A wait for the kernel ran out on this socket since it was last
    /// replaced ([`State::timed_out`]).
    pub(crate) fresh_socket_due: bool,
}

impl State {
    /// A state that waits up to `timeout` for each reply.
    pub(crate) fn new(timeout: Duration) -> Self {
        State {
            family: None,
            seq: 0,
            timeout,
            unfinished_dump: None,
            tx: Vec::new(),
            fresh_socket_due: false,
        }
    }

    /// How long a receive waits for the kernel.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The last sequence number handed out.
    pub(crate) fn last_seq(&self) -> u32 {
        self.seq
    }

    /// Starts numbering after `seq`.
    pub(crate) fn set_last_seq(&mut self, seq: u32) {
        self.seq = seq;
    }

    /// The next sequence number.
    pub(crate) fn next_seq(&mut self) -> u32 {
        self.seq = next_seq(self.seq);
        self.seq
    }

    /// A wait for the kernel ran out (not a read of what is queued): the
    /// socket may be one the kernel no longer answers on, and replies to
    /// what was sent may still come on it, late. Every machine calls this
    /// where a [`Wait::Up`](crate::proto::Wait) ends in
    /// [`Input::TimedOut`](crate::proto::Input).
    pub(crate) fn timed_out(&mut self) -> Duration {
        self.fresh_socket_due = true;
        self.timeout
    }

    /// The driver replaced the socket: a dump left open on the old one
    /// went with it. The family id (the kernel's, not the socket's) and
    /// the numbering stay.
    pub(crate) fn fresh_socket(&mut self) {
        self.unfinished_dump = None;
        self.fresh_socket_due = false;
    }

    /// Reads datagram `d` for the end (its `NLMSG_DONE`, or an error) of
    /// the dump left open on the socket: every machine shows the state
    /// each datagram it reads that is not its own answer, so whichever
    /// call reads a dump's end (the dump's own call after it stopped
    /// early, or a later apply or lookup that read past it), the session
    /// knows the socket is free and no call waits for an end already read.
    pub(crate) fn observe(&mut self, d: &[u8]) {
        if let Some(seq) = self.unfinished_dump {
            if ends_dump(seq, d) {
                self.unfinished_dump = None;
            }
        }
    }
}

/// Whether datagram `d` ends dump `seq` (its `NLMSG_DONE`, or an error
/// answering it). A malformed message ends the scan: what follows it
/// cannot be framed.
fn ends_dump(seq: u32, d: &[u8]) -> bool {
    frame::frames(d, 0).any(|f| {
        matches!(f, Ok(f) if f.seq == seq && matches!(f.reply, Reply::Done(_) | Reply::Error(_)))
    })
}
