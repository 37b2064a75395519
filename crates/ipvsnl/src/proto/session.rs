//! The protocol state of one netlink socket, kept between calls: the IPVS
//! family id, the sequence numbers, the receive wait, and a dump left
//! unfinished (to be read to its end before the socket can dump again).

use std::time::Duration;

use crate::proto::apply::{Apply, Limits};
use crate::proto::call::{Call, CallKind, Replies};
use crate::proto::family::FamilyLookup;
use crate::proto::state::State;
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
    /// What the machines share and change (the tests set it directly).
    pub(crate) state: State,
}

impl Session {
    /// A session that waits up to `timeout` for each reply.
    pub fn new(timeout: Duration) -> Self {
        Session {
            state: State::new(timeout),
        }
    }

    /// The IPVS family id, once looked up.
    pub fn family(&self) -> Option<u16> {
        self.state.family
    }

    /// Forgets the family id: the next call looks it up again.
    pub fn forget_family(&mut self) {
        self.state.family = None;
    }

    /// How long a receive waits for the kernel.
    pub fn timeout(&self) -> Duration {
        self.state.timeout()
    }

    /// The sequence number of a dump started and not read to its end, if
    /// any: the next call reads it out first.
    pub fn unfinished_dump(&self) -> Option<u32> {
        self.state.unfinished_dump
    }

    /// The last sequence number handed out.
    pub fn last_seq(&self) -> u32 {
        self.state.last_seq()
    }

    /// Starts numbering after `seq` (for tests and drivers that share a
    /// socket's numbers with other code).
    pub fn set_last_seq(&mut self, seq: u32) {
        self.state.set_last_seq(seq);
    }

    /// Whether a wait for the kernel ran out on this session's socket
    /// since the driver last moved it to a fresh one: then the driver
    /// should make the next call on a fresh socket (and say so with
    /// [`Session::moved_to_fresh_socket`]).
    ///
    /// A kernel that stops answering may do so on one socket for good
    /// (a handler stuck holding it), and replies to what was sent may
    /// still come, late: a fresh socket has its own port id, so no late
    /// reply to the old one can reach it, whatever its number. A driver
    /// that keeps the socket is not wrong, only slower to recover: the
    /// machines pass over replies to numbers they no longer wait for,
    /// and read a dump left open to its end.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ipvsnl::proto::{Input, Machine, Poll, Session};
    /// let mut s = Session::new(Duration::from_secs(1));
    /// let mut lookup = s.resolve_family();
    /// assert!(matches!(lookup.poll(), Poll::Transmit(_)));
    /// lookup.handle(Input::Sent);
    /// lookup.handle(Input::TimedOut); // the wait ran out
    /// drop(lookup);
    /// assert!(s.wants_fresh_socket());
    /// // The driver opens a fresh socket and says so.
    /// s.moved_to_fresh_socket();
    /// assert!(!s.wants_fresh_socket());
    /// ```
    pub fn wants_fresh_socket(&self) -> bool {
        self.state.fresh_socket_due
    }

    /// The driver moved the session to a fresh socket: what was bound to
    /// the old one (a dump left open on it) is forgotten. The family id
    /// (the kernel's, not the socket's) and the sequence numbers stay.
    pub fn moved_to_fresh_socket(&mut self) {
        self.state.fresh_socket();
    }

    /// A machine that looks the family id up (again).
    pub fn resolve_family(&mut self) -> FamilyLookup<'_> {
        FamilyLookup::new(&mut self.state)
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
        Call::new(&mut self.state, kind, write, replies)
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
        Apply::new(&mut self.state, requests, skip, limits, outcomes)
    }
}
