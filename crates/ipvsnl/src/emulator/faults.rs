//! What can go wrong on the paths a daemon lives on, injected where a
//! test says: a request refused, replies lost to an overrun, a reply that
//! never comes, a truncated datagram, a send that never completes, the
//! module unloaded or reloaded, another writer changing the table
//! between two calls or between two parts of a dump.

use ipvsnl_wire::IpvsCommand;

use crate::{Request, RequestKind, ServiceKey};

/// A request the emulated kernel took, as the library names it, with what
/// the kernel answered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Taken {
    /// The namespace it was sent in.
    pub namespace: String,
    /// What it asked (`None` for a command the library never sends).
    pub kind: Option<RequestKind>,
    /// The generic-netlink command number (0 for a family lookup).
    pub command: u8,
    /// Whether it was sent as a dump.
    pub dump: bool,
    /// The change it asks for, as the library's request, if it is one
    /// (decoded from the bytes the kernel received).
    pub request: Option<Request>,
    /// The service it names, if it names one (a change's, a get's, a
    /// destination listing's).
    pub service: Option<ServiceKey>,
    /// The errno it was answered with: `Some(0)` done (a dump: started),
    /// `Some(e)` refused, `None` not answered (a fault; or not yet run,
    /// when a fault's condition sees it).
    pub errno: Option<i32>,
}

impl Taken {
    /// Whether it is a change (a request the sync engine sends).
    pub fn is_change(&self) -> bool {
        use IpvsCommand::*;
        matches!(
            IpvsCommand::from(self.command),
            NewService | SetService | DelService | NewDest | SetDest | DelDest
        ) && self.kind != Some(RequestKind::ResolveFamily)
    }
}

/// A condition on a request.
pub type Condition = Box<dyn FnMut(&Taken) -> bool + Send>;

/// Where a fault strikes, once.
#[non_exhaustive]
pub enum When {
    /// At the first request (a message of a datagram a client sent) for
    /// which the condition holds, before the kernel runs it.
    Request(Condition),
    /// Before the kernel writes part `n` (1: the first, written when the
    /// dump request is taken) of the next dump that gets that far.
    DumpPart(usize),
}

impl When {
    /// At the next request.
    pub fn next_request() -> Self {
        When::Request(Box::new(|_| true))
    }

    /// At the next request of kind `kind`.
    pub fn next(kind: RequestKind) -> Self {
        When::Request(Box::new(move |t| t.kind == Some(kind)))
    }

    /// At the `n`-th change from now (1: the next one).
    pub fn nth_change(n: usize) -> Self {
        let mut seen = 0;
        When::Request(Box::new(move |t| {
            if t.is_change() {
                seen += 1;
            }
            t.is_change() && seen == n
        }))
    }

    /// At the first request for which `condition` holds.
    pub fn request(condition: impl FnMut(&Taken) -> bool + Send + 'static) -> Self {
        When::Request(Box::new(condition))
    }
}

impl std::fmt::Debug for When {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            When::Request(_) => f.write_str("Request(..)"),
            When::DumpPart(n) => write!(f, "DumpPart({n})"),
        }
    }
}

/// What happens.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Fault {
    /// The request is refused with this errno, the table untouched.
    Refuse(i32),
    /// The request is run, and its replies are lost with every reply
    /// queued on the socket: the socket's next receive fails with
    /// `ENOBUFS` (the kernel's overrun). At a dump part: that part.
    Overrun,
    /// The request is run but its replies never come (no error either):
    /// the client's wait runs out.
    LoseReply,
    /// The request is taken (not run), and the kernel answers nothing more
    /// on that socket but family lookups: a kernel that hangs.
    Stall,
    /// The request is run and its first reply comes truncated
    /// (`MSG_TRUNC`). At a dump part: that part.
    Truncate,
    /// The datagram carrying the request is never sent: the send waits
    /// for ever (for the async client, whose futures can be dropped; a
    /// blocking client would wait for ever too).
    Hold,
    /// The module is unloaded before the request is run (the family id
    /// the request carries is then unknown: `ENOENT`).
    Unload,
    /// The module is unloaded and loaded again before the request is run:
    /// a new family id, every namespace's table empty.
    Reload,
    /// Another writer applies these requests (in the same namespace)
    /// before the request is run, or before the dump part is written.
    Foreign(Vec<Request>),
}

/// A fault waiting for its moment.
pub(crate) struct Armed {
    pub(crate) when: When,
    pub(crate) fault: Fault,
}
