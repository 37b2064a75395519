//! What the protocol knows at the end: per request of a pipelined apply, an
//! [`Outcome`]; for a call (a get, a dump, a lookup), success or a
//! [`Failure`]. Both say only what was seen: a reply never seen is
//! [`Outcome::Unknown`], never a refusal.

use std::fmt;
use std::io;
use std::time::Duration;

use crate::DecodeError;

/// Why a request's reply was not seen, or why a request was not sent.
///
/// ```
/// use ipvsnl::proto::Cause;
/// assert_eq!(
///     Cause::RepliesDropped.to_string(),
///     "the kernel dropped replies (socket receive buffer full, ENOBUFS)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Cause {
    /// The kernel dropped replies to this socket (`ENOBUFS`): the receive
    /// buffer overflowed.
    RepliesDropped,
    /// No reply came within this wait.
    TimedOut(Duration),
    /// The socket failed with this errno.
    Socket(i32),
    /// A reply came that could not be read (malformed, or larger than the
    /// receive buffer).
    BadReply,
    /// The IPVS generic-netlink family is not registered (module not
    /// loaded).
    Unavailable,
    /// Looking the IPVS family up was refused with this errno.
    FamilyLookup(i32),
    /// The caller abandoned the call (dropped it) before its reply was
    /// read.
    Abandoned,
    /// The IPVS family id changed under the call: the `ip_vs` module was
    /// unloaded and loaded again, and its tables started empty. What was
    /// sent under the old id never reached IPVS; the rest of the call
    /// was meant for the tables that are gone, and is not sent.
    FamilyChanged,
}

impl Cause {
    /// The cause of a socket error (`EIO` when it carries no errno).
    pub fn socket(e: &io::Error) -> Self {
        Cause::Socket(e.raw_os_error().unwrap_or(libc::EIO))
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::RepliesDropped => {
                f.write_str("the kernel dropped replies (socket receive buffer full, ENOBUFS)")
            }
            Cause::TimedOut(d) => write!(f, "no reply within {d:?}"),
            Cause::Socket(e) => write!(
                f,
                "the netlink socket failed: {}",
                io::Error::from_raw_os_error(*e)
            ),
            Cause::BadReply => f.write_str("a reply could not be read (malformed or truncated)"),
            Cause::Unavailable => f.write_str("IPVS is not available (ip_vs module not loaded)"),
            Cause::Abandoned => f.write_str("the call was abandoned before its reply was read"),
            Cause::FamilyChanged => f.write_str(
                "the ip_vs module was reloaded (its IPVS family id changed): its tables started empty",
            ),
            Cause::FamilyLookup(e) => write!(
                f,
                "looking up the IPVS family was refused: {}",
                io::Error::from_raw_os_error(*e)
            ),
        }
    }
}

/// What became of one request of a pipelined apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Outcome {
    /// Applied: the kernel acknowledged it, or acknowledged a later request
    /// of its datagram with no error for it in between.
    Done,
    /// Refused by the kernel with this (positive) errno.
    Refused(i32),
    /// Sent, and its reply never seen: it may or may not have been applied.
    Unknown(Cause),
    /// Never sent (so not applied), for this reason.
    NotSent(Cause),
    /// Not applied, and why is not known: refused with `errno` (`ENOENT`
    /// or `EOPNOTSUPP`), the answer both of IPVS to a request about
    /// something missing and of generic netlink to any request under a
    /// family id gone stale (the `ip_vs` module reloaded). Looking the
    /// family up again, to tell the two apart, failed for `lookup`; so
    /// this is no refusal by IPVS as far as is known.
    #[non_exhaustive]
    FamilyUnconfirmed {
        /// The errno the request was answered with (positive).
        errno: i32,
        /// Why the family lookup that followed failed.
        lookup: Cause,
    },
}

impl Outcome {
    /// True unless the outcome is [`Outcome::Unknown`].
    pub fn is_known(&self) -> bool {
        !matches!(self, Outcome::Unknown(_))
    }
}

/// Where a machine reports each request's outcome, exactly once per sent
/// or unsent request (those it was told to skip get none).
pub trait Outcomes {
    /// Request `index` (in the caller's list) ended so.
    fn outcome(&mut self, index: usize, outcome: Outcome);
}

impl<F: FnMut(usize, Outcome)> Outcomes for F {
    fn outcome(&mut self, index: usize, outcome: Outcome) {
        self(index, outcome)
    }
}

/// Why a call (a get, a dump, a family lookup) failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Failure {
    /// The kernel refused it with this (positive) errno.
    Refused(i32),
    /// The IPVS family is not registered.
    Unavailable,
    /// No reply within this wait.
    TimedOut(Duration),
    /// The kernel dropped replies (`ENOBUFS`): what was read is incomplete.
    Overrun,
    /// The socket failed.
    Socket(io::Error),
    /// A reply could not be read.
    Malformed(DecodeError),
    /// The dump was interrupted (`NLM_F_DUMP_INTR`: the table changed
    /// while it was read) every time it was taken again.
    Interrupted,
    /// The request was never sent, for this cause (looking the family up
    /// before it was refused, say): the kernel neither did nor refused it.
    NotSent(Cause),
}

impl Failure {
    /// True for [`Failure::TimedOut`].
    pub fn is_timeout(&self) -> bool {
        matches!(self, Failure::TimedOut(_))
    }

    /// The cause this failure gives the requests it stopped.
    pub fn cause(&self) -> Cause {
        match self {
            Failure::Refused(e) => Cause::FamilyLookup(*e),
            Failure::Unavailable => Cause::Unavailable,
            Failure::TimedOut(d) => Cause::TimedOut(*d),
            Failure::Overrun => Cause::RepliesDropped,
            Failure::Socket(e) => Cause::socket(e),
            Failure::Malformed(_) => Cause::BadReply,
            Failure::Interrupted => Cause::BadReply,
            Failure::NotSent(cause) => *cause,
        }
    }
}
