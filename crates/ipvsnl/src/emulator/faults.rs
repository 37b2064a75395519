//! What can go wrong on the paths a daemon lives on, injected where a
//! test says: a request refused, replies lost to an overrun or to a full
//! receive queue, a reply that never comes, a truncated or garbled
//! datagram, a stranger's message, a send or a receive that fails, a send
//! that never completes, the module unloaded or reloaded, another writer
//! changing the table between two calls or between two parts of a dump;
//! and the rare answers a test cannot time on a real kernel (a daemon's
//! stop answered with nothing) or that generic netlink allows and IPVS
//! never gives ([`DumpQuirk`]).

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
    /// `Some(e)` refused, `Some(EINTR)` done and answered with nothing
    /// ([`Fault::Unanswered`]), `None` not answered (a fault; or not yet
    /// run, when a fault's condition sees it).
    pub errno: Option<i32>,
    /// The message as the kernel received it, byte for byte: its netlink
    /// header (length, type: the family id it was sent under, flags,
    /// sequence number, port), its generic-netlink header and its
    /// attributes; for a test of exactly what a client sends.
    pub bytes: Vec<u8>,
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
    /// which the condition holds, before the kernel runs it. Every armed
    /// fault's condition sees every request (so one that counts counts
    /// them all); one fault strikes a request, the first armed of those
    /// whose condition holds.
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

    /// At the `n`-th change from now (1: the next one); if another fault
    /// struck at that one, at the next change.
    pub fn nth_change(n: usize) -> Self {
        let mut seen = 0;
        When::Request(Box::new(move |t| {
            if t.is_change() {
                seen += 1;
            }
            t.is_change() && seen >= n
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
    /// The request is run, and its replies are lost as the socket's
    /// receive buffer overflowed: the socket's next receive fails with
    /// `ENOBUFS` (the kernel's overrun; what was queued before is read
    /// after it), and every reply after them is lost too until the reader
    /// reads the queue empty (netlink's congested socket). At a dump part:
    /// the kernel could not have the part's buffer, so it writes nothing
    /// (no entry is skipped), the receive under way ends, the next fails
    /// with `ENOBUFS`, and the one after goes on with the dump.
    Overrun,
    /// The request is run but its replies never come (no error either):
    /// the client's wait runs out. (Netlink itself never loses a reply
    /// silently: within a pipelined batch, an error lost so before the
    /// batch's last ACK is read as done.) A dump: none of its parts comes.
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
    /// From this request on, the socket's receive queue holds this many
    /// datagrams (as a small receive buffer would): a reply that finds it
    /// full is lost as in [`Fault::Overrun`], and so is every reply after
    /// it until the reader reads the queue empty. Dump parts are never
    /// lost so: the kernel writes the next one when the reader made room.
    QueueLimit(usize),
    /// The datagram carrying the request is refused by the socket: the
    /// send fails with this errno (`ENOBUFS`, `ENOMEM`), and the kernel
    /// takes none of its requests.
    SendFails(i32),
    /// The request is run, and the socket's next receive fails with this
    /// errno (`EFAULT`, say) before anything queued is read.
    ReceiveFails(i32),
    /// The request is run and its first reply comes garbled: bytes no
    /// netlink reader can frame. At a dump part: that part.
    Garbage,
    /// Before the request's replies (or the dump part), a datagram that
    /// answers nothing the socket asked: an error and an IPVS message
    /// under sequence numbers `0x7fff_0000` and `0x7fff_0001`, as a reply
    /// to a request given up on long ago would come.
    Stray,
    /// The request is run and, done, answered with nothing at all, not
    /// even the ACK it asked for (refused, its error comes as usual). A
    /// real kernel's answer to a sync daemon's stop when the daemon's
    /// thread was started and stopped before it ever ran: the handler
    /// passes on `kthread_stop`'s `EINTR`, to which netlink sends no
    /// reply; the stop is complete. A race a test cannot time on a real
    /// kernel. Recorded with the errno `EINTR` ([`Taken::errno`]).
    Unanswered,
    /// Dump framing that generic netlink allows a family and IPVS never
    /// uses, at a dump part ([`When::DumpPart`]): for tests of code that
    /// reads any family's dumps (this crate's own protocol core), never
    /// needed to emulate IPVS.
    DumpQuirk(DumpQuirk),
}

/// What generic netlink allows a family's dump and IPVS's never does
/// ([`Fault::DumpQuirk`]). From the part it strikes at to the dump's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DumpQuirk {
    /// Every message flagged `NLM_F_DUMP_INTR`: the table changed under
    /// the dump, take it again. IPVS never checks a dump's consistency
    /// (a change between two parts skips or repeats entries silently).
    Interrupted,
    /// The dump's `NLMSG_DONE` carries this errno: the dump failed. IPVS's
    /// dump callbacks never fail.
    DoneErrno(i32),
    /// The `NLMSG_DONE` comes in the datagram of the last part, not alone.
    /// Netlink does that for a family whose dump callback says it ended;
    /// IPVS's say how much they wrote, so its DONE always comes alone.
    DoneWithLastPart,
}

/// A fault waiting for its moment.
pub(crate) struct Armed {
    pub(crate) when: When,
    pub(crate) fault: Fault,
}
