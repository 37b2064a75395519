//! The pipelined apply: many requests per datagram, one ACK asked for per
//! datagram, every request's outcome accounted for exactly once.
//!
//! A batch goes out in one datagram; the kernel works through all of it
//! before the send returns and answers each refused request with its own
//! error, then the last one with its ACK. So the replies of a batch are
//! queued once it is sent: errors in any order, and the batch is over when
//! the last request's ACK (or error) is read. A batch whose last request
//! may be answered with nothing at all (stopping a sync daemon, see
//! [`Encode::may_go_unanswered`]) ends with a no-op asking for the ACK
//! instead, and is over when that ACK is read.
//!
//! If replies were dropped (`ENOBUFS`), the queue is read out without
//! waiting (everything that survived is there already; a congested socket
//! gets nothing new until it is empty), then a no-op asking for an ACK goes
//! out as a barrier: once its ACK is read, every surviving reply of the
//! batch has been. The requests whose reply could not be seen are
//! [`Outcome::Unknown`], and later batches are made smaller.
//!
//! A family id gone stale (the `ip_vs` module reloaded) makes the kernel
//! refuse every message under it, each with `ENOENT` (or `EOPNOTSUPP` if
//! the number went to another family) and nothing applied: from the first
//! request after the reload, wherever in a batch that falls. When any
//! request of a batch is refused so, the id is looked up once more, after
//! the batch's replies are read:
//!
//! - the same id: the refusals were IPVS's own (a missing destination, an
//!   unknown scheduler), and the apply goes on;
//! - another id: the module was reloaded, its tables emptied under the
//!   apply. Every request refused so, and every one not yet sent, ends
//!   [`Outcome::NotSent`] with [`Cause::FamilyChanged`], whatever the
//!   request and wherever the reload struck: none reached the new
//!   module, and none is sent to it, as each was meant for a table that
//!   is gone (its caller plans again from a new listing). The requests
//!   done before the reload stay [`Outcome::Done`] (their effect went with
//!   the old tables). A request IPVS itself refused with `ENOENT` in the
//!   same batch before the reload cannot be told apart, and ends so too;
//! - the lookup fails: those refused so are
//!   [`Outcome::FamilyUnconfirmed`]: not applied, not known to be refused.
//!
//! A time-out or a socket failure ends the apply: the batch in flight is
//! unknown where unanswered, the requests after it are
//! [`Outcome::NotSent`].

use ipvsnl_wire::netlink_packet_core::{NLMSG_NOOP, NLM_F_ACK, NLM_F_REQUEST};
use ipvsnl_wire::write::push_empty_message;

use crate::proto::batch::{Batch, Queue};
use crate::proto::family::FamilyStep;
use crate::proto::frame::{self, Reply};
use crate::proto::state::State;
use crate::proto::{Cause, Encode, Input, Machine, Outcome, Outcomes, Poll, Wait};

/// How big a batch may get.
///
/// ```
/// let l = ipvsnl::proto::Limits::new(65536, 2048);
/// assert_eq!((l.batch_bytes(), l.batch_requests()), (65536, 2048));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    batch_bytes: usize,
    batch_requests: usize,
}

impl Limits {
    /// At most `batch_bytes` bytes and `batch_requests` requests per
    /// datagram (a single request larger than the byte bound still goes,
    /// alone). The request bound keeps a batch's error replies within the
    /// socket's receive buffer.
    pub fn new(batch_bytes: usize, batch_requests: usize) -> Self {
        Limits {
            batch_bytes: batch_bytes.max(1),
            batch_requests: batch_requests.max(1),
        }
    }

    /// The byte bound.
    pub fn batch_bytes(&self) -> usize {
        self.batch_bytes
    }

    /// The request bound.
    pub fn batch_requests(&self) -> usize {
        self.batch_requests
    }
}

/// Whether `errno` is generic netlink's answer to a message under a family
/// id it does not know (or that went to another family): `ENOENT`
/// (`EOPNOTSUPP`), which IPVS gives too, for something missing.
fn is_stale_answer(errno: i32) -> bool {
    matches!(errno, libc::ENOENT | libc::EOPNOTSUPP)
}

/// How many barriers one batch may send (each after its predecessor's ACK
/// was dropped too) before its unseen replies are given up as unknown.
const MAX_BARRIERS: u32 = 16;

/// Where the apply stands.
#[derive(Debug)]
enum Stage {
    /// Looking the family up: first (`refresh` false) or after the batch
    /// in flight was refused as if the id were stale.
    Lookup { step: FamilyStep, refresh: bool },
    /// A batch in flight.
    Batch,
    /// Every outcome reported.
    Finished,
}

/// What has been seen of the batch in flight.
#[derive(Debug, Default)]
struct Seen {
    /// The errno each request was refused with (0: none seen).
    errnos: Vec<i32>,
    /// The last request's ACK (or error) was read.
    last_answered: bool,
    /// Replies were lost, and why.
    lost: Option<Cause>,
    /// Reading out the queue without waiting (after `ENOBUFS`).
    draining: bool,
    /// The barrier in flight, by number.
    barrier: Option<u32>,
    /// Barriers sent for this batch.
    barriers: u32,
}

/// The pipelined-apply machine ([`Session::apply`](crate::proto::Session::apply)).
///
/// ```
/// use std::time::Duration;
/// use ipvsnl::proto::{Input, Limits, Machine, Outcome, Poll, Session};
/// use ipvsnl::{Request, ServiceKey};
///
/// let requests = [Request::DeleteService(ServiceKey::fwmark(1, ipvsnl::AddressFamily::Inet))];
/// let mut seen = Vec::new();
/// let mut sink = |i: usize, o: Outcome| seen.push((i, o));
/// let mut session = Session::new(Duration::from_secs(1));
/// let mut m = session.apply(&requests, &[false], Limits::new(4096, 64), &mut sink);
/// // The family lookup goes out first; say the socket failed.
/// assert!(matches!(m.poll(), Poll::Transmit(_)));
/// m.handle(Input::SendFailed(std::io::Error::from_raw_os_error(libc::EPERM)));
/// assert_eq!(m.poll(), Poll::Finished);
/// drop(m);
/// assert!(matches!(seen[..], [(0, Outcome::NotSent(_))]));
/// ```
#[derive(Debug)]
pub struct Apply<'s, 'r, R: Encode, O: Outcomes> {
    state: &'s mut State,
    queue: Queue<'r, R>,
    outcomes: O,
    limits: Limits,
    /// The request bound in force (halved after a batch lost replies).
    max_requests: usize,
    tx: Vec<u8>,
    pending_tx: bool,
    stage: Stage,
    batch: Batch,
    seen: Seen,
}

impl<'s, 'r, R: Encode, O: Outcomes> Apply<'s, 'r, R, O> {
    pub(crate) fn new(
        state: &'s mut State,
        requests: &'r [R],
        skip: &'r [bool],
        limits: Limits,
        outcomes: O,
    ) -> Self {
        let mut tx = std::mem::take(&mut state.tx);
        let nothing = (0..requests.len()).all(|i| skip.get(i).copied().unwrap_or(false));
        let (stage, pending_tx) = match state.family {
            _ if nothing => (Stage::Finished, false),
            Some(_) => (Stage::Batch, false),
            None => (
                Stage::Lookup {
                    step: FamilyStep::start(state, &mut tx),
                    refresh: false,
                },
                true,
            ),
        };
        let mut m = Apply {
            state,
            queue: Queue::new(requests, skip),
            outcomes,
            limits,
            max_requests: limits.batch_requests,
            tx,
            pending_tx,
            stage,
            batch: Batch::default(),
            seen: Seen::default(),
        };
        if matches!(m.stage, Stage::Batch) {
            m.next_batch();
        }
        m
    }

    /// The outcome sink. Every outcome is in it once the machine
    /// finished; dropping the machine before reports the rest (in flight:
    /// unknown; not yet sent: not sent), so pass `&mut sink` to read them
    /// after the drop.
    pub fn outcomes(&mut self) -> &mut O {
        &mut self.outcomes
    }

    /// The request bound in force now (halved after each batch that lost
    /// replies).
    pub fn batch_requests(&self) -> usize {
        self.max_requests
    }

    /// Encodes and queues the next batch, or finishes.
    fn next_batch(&mut self) {
        let Some(family) = self.state.family else {
            // Unreachable: a batch follows a successful lookup.
            return self.stop(None, Cause::Unavailable);
        };
        self.seen = Seen::default();
        if self.queue.fill(
            &mut self.tx,
            &mut self.batch,
            self.limits.batch_bytes,
            self.max_requests,
            self.state,
            family,
        ) {
            self.seen.errnos.resize(self.batch.items.len(), 0);
            self.stage = Stage::Batch;
            self.pending_tx = true;
        } else {
            self.stage = Stage::Finished;
        }
    }

    /// Ends the apply: the batch in flight (if `in_flight` is its cause)
    /// settles with its unseen replies unknown, and every request after it
    /// is not sent, for `cause`.
    fn stop(&mut self, in_flight: Option<Cause>, cause: Cause) {
        if let Some(lost) = in_flight {
            self.seen.lost = Some(lost);
            self.settle();
        }
        for i in self.queue.drain_rest() {
            self.outcomes.outcome(i, Outcome::NotSent(cause));
        }
        self.batch.items.clear();
        self.stage = Stage::Finished;
        self.pending_tx = false;
    }

    /// Reports the outcome of every request of the batch in flight.
    fn settle(&mut self) {
        let last = self.batch.items.len().saturating_sub(1);
        for (at, &i) in self.batch.items.iter().enumerate() {
            let errno = self.seen.errnos.get(at).copied().unwrap_or(0);
            let o = if errno != 0 {
                Outcome::Refused(errno)
            } else if at == last && self.seen.last_answered {
                Outcome::Done
            } else if let Some(cause) = self.seen.lost {
                Outcome::Unknown(cause)
            } else {
                Outcome::Done
            };
            self.outcomes.outcome(i, o);
        }
        self.batch.items.clear();
    }

    /// The batch's replies are all read: refresh the family if a request
    /// of the batch was refused as if the id were stale, else settle and
    /// go on.
    fn batch_over(&mut self) {
        let stale = self.seen.errnos.iter().any(|&e| is_stale_answer(e));
        if stale && self.seen.lost.is_none() {
            let step = FamilyStep::start(self.state, &mut self.tx);
            self.stage = Stage::Lookup {
                step,
                refresh: true,
            };
            self.pending_tx = true;
            return;
        }
        if self.seen.lost.is_some() {
            self.max_requests = (self.max_requests / 2).max(1);
        }
        self.settle();
        self.next_batch();
    }

    /// Settles the batch in flight after a failed lookup: each request
    /// refused as under a stale id (`ENOENT`, `EOPNOTSUPP`) ends as
    /// `stale` says of its errno, every other as the kernel answered.
    fn settle_as_stale(&mut self, stale: impl Fn(i32) -> Outcome) {
        let items = std::mem::take(&mut self.batch.items);
        let errnos = std::mem::take(&mut self.seen.errnos);
        for (i, errno) in items.into_iter().zip(errnos) {
            if is_stale_answer(errno) {
                self.outcomes.outcome(i, stale(errno));
            } else {
                self.batch.items.push(i);
                self.seen.errnos.push(errno);
            }
        }
        self.settle();
    }

    /// The lookup ended.
    fn looked_up(&mut self, result: Result<u16, crate::proto::Failure>, refresh: bool) {
        match (result, refresh) {
            (Ok(id), false) => {
                self.state.family = Some(id);
                self.next_batch();
            }
            (Ok(id), true) if Some(id) != self.state.family => {
                // Reloaded: the kernel applied nothing under the old id,
                // and what is left was meant for the tables it emptied.
                self.state.family = Some(id);
                let changed = Outcome::NotSent(Cause::FamilyChanged);
                self.settle_as_stale(|_| changed);
                self.stop(None, Cause::FamilyChanged);
            }
            (Ok(_), true) => {
                // The same id: the refusals were real.
                self.settle();
                self.next_batch();
            }
            (Err(f), false) => self.stop(None, f.cause()),
            (Err(crate::proto::Failure::Unavailable), true) => {
                // Unloaded and not back: what the family's absence refused
                // never reached IPVS.
                self.settle_as_stale(|_| Outcome::NotSent(Cause::Unavailable));
                self.state.family = None;
                self.stop(None, Cause::Unavailable);
            }
            (Err(f), true) => {
                // Whether the id is stale is unknown: what was refused as
                // if it were is not applied, and not known to be refused
                // by IPVS.
                let lookup = f.cause();
                self.settle_as_stale(|errno| Outcome::FamilyUnconfirmed { errno, lookup });
                self.stop(None, lookup);
            }
        }
    }

    /// Reads one datagram of the batch's replies.
    fn batch_datagram(&mut self, d: &[u8]) {
        for f in frame::frames(d, 0) {
            let Ok(f) = f else {
                // What it held is lost; the ACK or the barrier still ends
                // the batch (or the wait times out).
                self.seen.lost.get_or_insert(Cause::BadReply);
                break;
            };
            let answer = match f.reply {
                Reply::Ack => 0,
                Reply::Error(e) => e,
                _ => continue,
            };
            if self.seen.barrier == Some(f.seq) {
                self.seen.barrier = None;
                return self.batch_over();
            }
            if self.batch.closer == Some(f.seq) {
                // The kernel handled the whole batch: its replies came
                // before (or were dropped), a request without one is done.
                self.seen.draining = false;
                return self.batch_over();
            }
            let Some(at) = self.batch.position(f.seq) else {
                continue; // another call's, or an earlier barrier's
            };
            if answer != 0 {
                self.seen.errnos[at] = answer;
            }
            if at + 1 == self.batch.items.len() && self.batch.closer.is_none() {
                // The last reply of the batch: everything before it was
                // read or dropped, so no barrier is needed.
                self.seen.last_answered = true;
                self.seen.draining = false;
                return self.batch_over();
            }
        }
    }

    /// Nothing more came: after `ENOBUFS` the queue is empty now, so the
    /// barrier goes out; otherwise the batch timed out.
    fn batch_quiet(&mut self) {
        if self.seen.draining {
            self.seen.draining = false;
            if self.seen.barriers >= MAX_BARRIERS {
                return self.batch_over();
            }
            let seq = self.state.next_seq();
            self.tx.clear();
            push_empty_message(&mut self.tx, NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, seq);
            self.seen.barrier = Some(seq);
            self.seen.barriers += 1;
            self.pending_tx = true;
        } else {
            let t = Cause::TimedOut(self.state.timed_out());
            self.stop(Some(t), t);
        }
    }

    /// Dropped before finishing: what was in flight is unknown, the rest
    /// not sent.
    fn abandon(&mut self) {
        if matches!(self.stage, Stage::Finished) {
            return;
        }
        // A batch sent (its barrier pending or not) is in flight; one
        // encoded but not sent, or refused and awaiting the family lookup,
        // is settled as far as it is known.
        let sent = !self.pending_tx || self.seen.barrier.is_some();
        match self.stage {
            Stage::Batch if sent => {
                let lost = self.seen.lost.unwrap_or(Cause::Abandoned);
                return self.stop(Some(lost), Cause::Abandoned);
            }
            Stage::Batch => {
                for i in std::mem::take(&mut self.batch.items) {
                    self.outcomes.outcome(i, Outcome::NotSent(Cause::Abandoned));
                }
            }
            Stage::Lookup { refresh: true, .. } => {
                self.settle_as_stale(|errno| Outcome::FamilyUnconfirmed {
                    errno,
                    lookup: Cause::Abandoned,
                })
            }
            _ => {}
        }
        self.stop(None, Cause::Abandoned);
    }
}

impl<R: Encode, O: Outcomes> Machine for Apply<'_, '_, R, O> {
    fn poll(&mut self) -> Poll<'_> {
        if matches!(self.stage, Stage::Finished) {
            Poll::Finished
        } else if self.pending_tx {
            Poll::Transmit(&self.tx)
        } else if let Stage::Lookup { step, .. } = &self.stage {
            Poll::Receive(step.wait(self.state))
        } else if self.seen.draining {
            Poll::Receive(Wait::Queued)
        } else {
            Poll::Receive(Wait::Up(self.state.timeout()))
        }
    }

    fn handle(&mut self, input: Input<'_>) {
        // The tail of a dump an earlier call abandoned may come first.
        if let Input::Datagram(d) = input {
            self.state.observe(d);
        }
        match &mut self.stage {
            Stage::Finished => {}
            Stage::Lookup { step, refresh } => {
                let refresh = *refresh;
                let r = step.input(input, self.state, &mut self.tx, &mut self.pending_tx);
                if let Some(r) = r {
                    self.looked_up(r, refresh);
                }
            }
            Stage::Batch => match input {
                Input::Sent => self.pending_tx = false,
                Input::SendFailed(e) => {
                    let cause = Cause::socket(&e);
                    self.pending_tx = false;
                    if self.seen.barrier.is_some() {
                        // The batch went; its barrier did not.
                        let lost = self.seen.lost.unwrap_or(cause);
                        self.stop(Some(lost), cause);
                    } else {
                        for i in std::mem::take(&mut self.batch.items) {
                            self.outcomes.outcome(i, Outcome::NotSent(cause));
                        }
                        self.stop(None, cause);
                    }
                }
                Input::Datagram(d) => self.batch_datagram(d),
                Input::Truncated { .. } => {
                    self.seen.lost.get_or_insert(Cause::BadReply);
                }
                Input::Overrun => {
                    self.seen.lost = Some(Cause::RepliesDropped);
                    self.seen.draining = true;
                    // A barrier in flight may be among the dropped: the
                    // next goes out once the queue is empty.
                    self.seen.barrier = None;
                }
                Input::TimedOut => self.batch_quiet(),
                Input::ReceiveFailed(e) => {
                    let cause = Cause::socket(&e);
                    self.stop(Some(cause), cause);
                }
            },
        }
    }
}

impl<R: Encode, O: Outcomes> Drop for Apply<'_, '_, R, O> {
    fn drop(&mut self) {
        self.abandon();
        self.state.tx = std::mem::take(&mut self.tx);
    }
}
