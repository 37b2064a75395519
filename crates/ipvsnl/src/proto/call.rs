//! One request answered by data: a get (its reply, then an ACK) or a dump
//! (parts, then `NLMSG_DONE`).
//!
//! Before its own request a call reads out a dump the session left
//! unfinished (one socket holds one dump at a time: a second one is
//! answered `EBUSY`), and looks the family id up if it is not known. A
//! refusal with `ENOENT` or `EOPNOTSUPP` may mean the id went stale (the
//! module was reloaded): the id is looked up again and, if it changed, the
//! request is sent once more. A dump marked interrupted
//! (`NLM_F_DUMP_INTR`) is taken again from the start, a few times at most;
//! so is a read whose replies may have been dropped (`ENOBUFS`).
//! A call that ends before its dump did (the caller wants no more, a reply
//! that cannot be decoded, a time-out, the caller dropping it) leaves the
//! dump's rest to the next call. The session knows at every moment whether
//! a dump is open: the rest of a datagram a call stopped in, and every
//! datagram handed to a finished call (a driver receives several at
//! once), are still read for the dump's end. The read-out takes only what
//! is queued: the kernel makes a dump's next part while the previous one
//! is read, so an open dump always has a datagram queued, and an empty
//! queue means it ended.

use ipvsnl_wire::netlink_packet_core::{NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST};

use crate::proto::family::FamilyStep;
use crate::proto::frame::{self, Reply, NLM_F_DUMP_INTR};
use crate::proto::state::State;
use crate::proto::{Cause, Failure, Input, Machine, Poll, Wait};
use crate::DecodeError;

/// What kind of answer a call expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallKind {
    /// One reply, then an ACK.
    Get,
    /// Any number of parts, then `NLMSG_DONE`.
    Dump,
}

/// Where a call hands the IPVS messages of its answer.
///
/// ```
/// use ipvsnl::proto::Replies;
/// use ipvsnl::DecodeError;
/// #[derive(Default)]
/// struct Count(usize);
/// impl Replies for Count {
///     fn message(&mut self, _command: u8, _attrs: &[u8]) -> Result<(), DecodeError> {
///         self.0 += 1;
///         Ok(())
///     }
///     fn restart(&mut self) {
///         self.0 = 0;
///     }
/// }
/// let mut c = Count::default();
/// c.message(1, &[]).unwrap();
/// c.restart();
/// assert_eq!(c.0, 0);
/// ```
pub trait Replies {
    /// One message: its generic-netlink command and attribute bytes. An
    /// error ends the call (as [`Failure::Malformed`]); words of your own
    /// convert into one ([`DecodeError::Other`]).
    fn message(&mut self, command: u8, attrs: &[u8]) -> Result<(), DecodeError>;
    /// The dump starts over: forget what came so far.
    fn restart(&mut self);
    /// A datagram of the answer is about to be read, message by message
    /// (to reserve room for what it holds, say). By default nothing.
    fn datagram(&mut self, datagram: &[u8]) {
        let _ = datagram;
    }
    /// True once the caller wants no more: the call ends at once, well,
    /// and a dump's rest is read out by the session's next call. By
    /// default never.
    fn stopped(&self) -> bool {
        false
    }
}

/// How often an interrupted dump is taken again.
const MAX_RESTARTS: u32 = 3;

/// Where a call stands.
#[derive(Debug)]
enum Stage {
    /// Reading out the session's unfinished dump.
    Drain,
    /// Looking the family up; `stale` holds the refusal that made a
    /// known id suspect.
    Lookup {
        step: FamilyStep,
        stale: Option<i32>,
    },
    /// The request sent (or about to be); reading its answer.
    Answer,
    /// Over.
    Finished,
}

/// The machine of one get or dump ([`Session::call`](crate::proto::Session::call)).
///
/// ```
/// use std::time::Duration;
/// use ipvsnl::proto::{CallKind, Input, Machine, Poll, Replies, Session};
/// struct Nothing;
/// impl Replies for Nothing {
///     fn message(&mut self, _: u8, _: &[u8]) -> Result<(), ipvsnl::DecodeError> { Ok(()) }
///     fn restart(&mut self) {}
/// }
/// let mut session = Session::new(Duration::from_secs(1));
/// let mut call = session.call(CallKind::Dump, |_, _, _, _| {}, Nothing);
/// // The family lookup first; no reply comes.
/// assert!(matches!(call.poll(), Poll::Transmit(_)));
/// call.handle(Input::Sent);
/// assert!(matches!(call.poll(), Poll::Receive(_)));
/// call.handle(Input::TimedOut);
/// assert!(call.result().unwrap().unwrap_err().is_timeout());
/// ```
#[derive(Debug)]
pub struct Call<'s, W, S> {
    state: &'s mut State,
    kind: CallKind,
    write: W,
    replies: S,
    tx: Vec<u8>,
    pending_tx: bool,
    stage: Stage,
    /// The request's number (once written).
    seq: u32,
    /// A part of this dump came marked interrupted.
    interrupted: bool,
    /// Replies were dropped while this dump was read: take it again.
    lossy: bool,
    /// A get's reply may have been dropped: reading out the queue.
    draining: bool,
    restarts: u32,
    /// The family was looked up again for this call (only once).
    refreshed: bool,
    result: Option<Result<(), Failure>>,
}

impl<'s, W, S> Call<'s, W, S>
where
    W: Fn(&mut Vec<u8>, u16, u32, u16),
    S: Replies,
{
    pub(crate) fn new(state: &'s mut State, kind: CallKind, write: W, replies: S) -> Self {
        let tx = std::mem::take(&mut state.tx);
        let mut call = Call {
            state,
            kind,
            write,
            replies,
            tx,
            pending_tx: false,
            stage: Stage::Finished,
            seq: 0,
            interrupted: false,
            lossy: false,
            draining: false,
            restarts: 0,
            refreshed: false,
            result: None,
        };
        match call.state.unfinished_dump {
            Some(_) => call.stage = Stage::Drain,
            None => call.begin(),
        }
        call
    }

    /// Success, or why not; `None` before the machine finished. Taking it
    /// a second time gives `None`.
    pub fn result(&mut self) -> Option<Result<(), Failure>> {
        self.result.take()
    }

    /// The replies received.
    pub fn replies(&mut self) -> &mut S {
        &mut self.replies
    }

    /// Looks the family up if it is not known, else writes the request.
    fn begin(&mut self) {
        match self.state.family {
            None => self.lookup(None),
            Some(family) => self.send_request(family),
        }
    }

    fn lookup(&mut self, stale: Option<i32>) {
        let step = FamilyStep::start(self.state, &mut self.tx);
        self.stage = Stage::Lookup { step, stale };
        self.pending_tx = true;
    }

    fn send_request(&mut self, family: u16) {
        self.seq = self.state.next_seq();
        let flags = match self.kind {
            CallKind::Get => NLM_F_REQUEST | NLM_F_ACK,
            CallKind::Dump => NLM_F_REQUEST | NLM_F_DUMP,
        };
        self.tx.clear();
        (self.write)(&mut self.tx, family, self.seq, flags);
        self.stage = Stage::Answer;
        self.pending_tx = true;
        self.interrupted = false;
        self.lossy = false;
        self.draining = false;
    }

    /// Sends the request again (reads change nothing), a bounded number of
    /// times; `failure` when they are used up.
    fn again(&mut self, failure: Failure) {
        if self.restarts >= MAX_RESTARTS {
            return self.finish(Err(failure));
        }
        self.restarts += 1;
        self.replies.restart();
        match self.state.family {
            Some(family) => self.send_request(family),
            None => self.begin(),
        }
    }

    fn finish(&mut self, r: Result<(), Failure>) {
        self.result = Some(r);
        self.stage = Stage::Finished;
        self.pending_tx = false;
    }

    /// One datagram of the answer. A call that ends in its middle still
    /// reads the rest for its dump's end.
    fn answer(&mut self, d: &[u8]) {
        self.read_answer(d);
        if matches!(self.stage, Stage::Finished) {
            self.state.observe(d);
        }
    }

    fn read_answer(&mut self, d: &[u8]) {
        let family = self.state.family.unwrap_or(0);
        self.replies.datagram(d);
        for f in frame::frames(d, family) {
            let f = match f {
                Ok(f) => f,
                Err(detail) => return self.finish(Err(Failure::Malformed(detail))),
            };
            if f.seq != self.seq {
                continue; // an earlier call's late reply, or a stranger's
            }
            match f.reply {
                Reply::Data { command, attrs } => {
                    self.interrupted |= f.flags & NLM_F_DUMP_INTR != 0;
                    if let Err(detail) = self.replies.message(command, attrs) {
                        return self.finish(Err(Failure::Malformed(detail)));
                    }
                    if self.replies.stopped() {
                        return self.finish(Ok(()));
                    }
                }
                Reply::Done(errno) if self.kind == CallKind::Dump => {
                    self.state.unfinished_dump = None;
                    return self.ended(errno);
                }
                Reply::Ack if self.kind == CallKind::Get => return self.finish(Ok(())),
                Reply::Error(e) => {
                    if self.kind == CallKind::Dump {
                        self.state.unfinished_dump = None;
                    }
                    let suspect = matches!(e, libc::ENOENT | libc::EOPNOTSUPP);
                    if suspect && !self.refreshed {
                        self.refreshed = true;
                        return self.lookup(Some(e));
                    }
                    return self.finish(Err(Failure::Refused(e)));
                }
                _ => {}
            }
        }
    }

    /// The dump ended (`errno` 0: well).
    fn ended(&mut self, errno: i32) {
        if errno != 0 {
            return self.finish(Err(Failure::Refused(errno)));
        }
        match (self.interrupted, self.lossy) {
            (false, false) => self.finish(Ok(())),
            (true, _) => self.again(Failure::Interrupted),
            (false, true) => self.again(Failure::Overrun),
        }
    }

    fn looked_up(&mut self, r: Result<u16, Failure>, stale: Option<i32>) {
        match (r, stale) {
            (Ok(id), Some(e)) if Some(id) == self.state.family => {
                // The id holds: the refusal was real.
                self.finish(Err(Failure::Refused(e)))
            }
            (Ok(id), _) => {
                self.state.family = Some(id);
                self.send_request(id)
            }
            (Err(Failure::Unavailable), Some(_)) => {
                self.state.family = None;
                self.finish(Err(Failure::Unavailable))
            }
            // The request was never sent: not a refusal of it.
            (Err(Failure::Refused(e)), _) => {
                self.finish(Err(Failure::NotSent(Cause::FamilyLookup(e))))
            }
            (Err(f), _) => self.finish(Err(f)),
        }
    }
}

impl<W, S> Machine for Call<'_, W, S>
where
    W: Fn(&mut Vec<u8>, u16, u32, u16),
    S: Replies,
{
    fn poll(&mut self) -> Poll<'_> {
        match self.stage {
            Stage::Finished => Poll::Finished,
            _ if self.pending_tx => Poll::Transmit(&self.tx),
            Stage::Lookup { ref step, .. } => Poll::Receive(step.wait(self.state)),
            Stage::Answer if self.draining => Poll::Receive(Wait::Queued),
            Stage::Drain => Poll::Receive(Wait::Queued),
            _ => Poll::Receive(Wait::Up(self.state.timeout())),
        }
    }

    fn handle(&mut self, input: Input<'_>) {
        match &mut self.stage {
            // Datagrams received together with the one that ended the
            // call: read for an open dump's end all the same.
            Stage::Finished => {
                if let Input::Datagram(d) = input {
                    self.state.observe(d);
                }
            }
            Stage::Drain => match input {
                Input::Datagram(d) => {
                    self.state.observe(d);
                    if self.state.unfinished_dump.is_none() {
                        self.begin();
                    }
                }
                // Nothing queued: the dump has ended (its end was read
                // where the session could not see it, or the kernel ended
                // it otherwise). The socket is free.
                Input::TimedOut => {
                    self.state.unfinished_dump = None;
                    self.begin();
                }
                Input::Overrun | Input::Truncated { .. } | Input::Sent => {}
                Input::SendFailed(e) | Input::ReceiveFailed(e) => {
                    self.finish(Err(Failure::Socket(e)))
                }
            },
            Stage::Lookup { step, stale } => {
                let stale = *stale;
                let r = step.input(input, self.state, &mut self.tx, &mut self.pending_tx);
                if let Some(r) = r {
                    self.looked_up(r, stale);
                }
            }
            Stage::Answer => match input {
                Input::Sent => {
                    self.pending_tx = false;
                    if self.kind == CallKind::Dump {
                        self.state.unfinished_dump = Some(self.seq);
                    }
                }
                Input::SendFailed(e) => self.finish(Err(Failure::Socket(e))),
                Input::Datagram(d) => self.answer(d),
                Input::Truncated { len } => {
                    self.finish(Err(Failure::Malformed(DecodeError::Truncated { len })))
                }
                // A get's reply may be queued or dropped: read the queue
                // out, then ask again if it was not there. A dump's parts
                // are made only when there is room, but something of it
                // may have been lost all the same: it is read to its end
                // and taken again.
                Input::Overrun => match self.kind {
                    CallKind::Get => self.draining = true,
                    CallKind::Dump => self.lossy = true,
                },
                Input::TimedOut if self.draining => self.again(Failure::Overrun),
                Input::TimedOut => {
                    let waited = self.state.timed_out();
                    self.finish(Err(Failure::TimedOut(waited)))
                }
                Input::ReceiveFailed(e) => self.finish(Err(Failure::Socket(e))),
            },
        }
    }
}

impl<W, S> Drop for Call<'_, W, S> {
    fn drop(&mut self) {
        self.state.tx = std::mem::take(&mut self.tx);
    }
}
