//! The protocol state of one netlink socket, kept between calls: the IPVS
//! family id, the sequence numbers, the receive wait, and a dump left
//! unfinished (to be read to its end before the socket can dump again).

use std::time::Duration;

use crate::proto::apply::{Apply, Limits};
use crate::proto::call::{Call, CallKind, Replies};
use crate::proto::family::FamilyLookup;
use crate::proto::frame::{self, Reply};
use crate::proto::seq::next_seq;
use crate::proto::{Encode, Outcomes};

/// The protocol state of one client socket. Machines borrow it for the
/// length of one call ([`Session::call`], [`Session::apply`],
/// [`Session::resolve_family`]); a machine dropped before it finished
/// leaves the session consistent (a dump it started is read to its end by
/// the next call), so a driver may abandon any call at any point.
///
/// ```
/// use std::time::Duration;
/// use ipvsnl::proto::Session;
/// let s = Session::new(Duration::from_secs(5));
/// assert_eq!(s.family(), None);
/// assert_eq!(s.timeout(), Duration::from_secs(5));
/// assert_eq!(s.unfinished_dump(), None);
/// ```
#[derive(Debug)]
pub struct Session {
    pub(crate) family: Option<u16>,
    seq: u32,
    timeout: Duration,
    pub(crate) unfinished_dump: Option<u32>,
    /// The send buffer, lent to the running machine.
    pub(crate) tx: Vec<u8>,
}

impl Session {
    /// A session that waits up to `timeout` for each reply.
    pub fn new(timeout: Duration) -> Self {
        Session {
            family: None,
            seq: 0,
            timeout,
            unfinished_dump: None,
            tx: Vec::new(),
        }
    }

    /// The IPVS family id, once looked up.
    pub fn family(&self) -> Option<u16> {
        self.family
    }

    /// Forgets the family id: the next call looks it up again.
    pub fn forget_family(&mut self) {
        self.family = None;
    }

    /// How long a receive waits for the kernel.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The sequence number of a dump started and not read to its end, if
    /// any: the next call reads it out first.
    pub fn unfinished_dump(&self) -> Option<u32> {
        self.unfinished_dump
    }

    /// The last sequence number handed out.
    pub fn last_seq(&self) -> u32 {
        self.seq
    }

    /// Starts numbering after `seq` (for tests and drivers that share a
    /// socket's numbers with other code).
    pub fn set_last_seq(&mut self, seq: u32) {
        self.seq = seq;
    }

    /// Reads datagram `d` for the end (its `NLMSG_DONE`, or an error) of
    /// the dump left open on the socket: every machine shows the session
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

    /// The next sequence number.
    pub(crate) fn next_seq(&mut self) -> u32 {
        self.seq = next_seq(self.seq);
        self.seq
    }

    /// A machine that looks the family id up (again).
    pub fn resolve_family(&mut self) -> FamilyLookup<'_> {
        FamilyLookup::new(self)
    }

    /// A machine for one request answered by data: a get (one reply, then
    /// an ACK) or a dump (parts, then `NLMSG_DONE`). `write` appends the
    /// request given the family id, sequence number and flags; `replies`
    /// takes each IPVS message of the answer.
    #[must_use = "a machine sends nothing until driven"]
    pub fn call<W, S>(&mut self, kind: CallKind, write: W, replies: S) -> Call<'_, W, S>
    where
        W: Fn(&mut Vec<u8>, u16, u32, u16),
        S: Replies,
    {
        Call::new(self, kind, write, replies)
    }

    /// A machine that applies `requests` pipelined, those with `skip[i]`
    /// set left out, reporting every other one's outcome to `outcomes`.
    #[must_use = "a machine sends nothing until driven"]
    pub fn apply<'r, R, O>(
        &mut self,
        requests: &'r [R],
        skip: &'r [bool],
        limits: Limits,
        outcomes: O,
    ) -> Apply<'_, 'r, R, O>
    where
        R: Encode,
        O: Outcomes,
    {
        Apply::new(self, requests, skip, limits, outcomes)
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
