//! Looking up the IPVS family id (`CTRL_CMD_GETFAMILY` "IPVS"): a step the
//! other machines take first when the id is not known, or again when the
//! kernel's answers say it went stale (module reloaded), and a machine of
//! its own for a caller that only wants the id.

use ipvsnl_wire::netlink_packet_core::{NLM_F_ACK, NLM_F_REQUEST};
use ipvsnl_wire::IPVS_GENL_NAME;

use crate::proto::frame::{self, Reply};
use crate::proto::state::State;
use crate::proto::{Failure, Input, Machine, Poll, Wait};
use crate::DecodeError;

/// One lookup in flight: its sequence number, the id seen so far, and how
/// many times it was sent.
#[derive(Debug)]
pub(crate) struct FamilyStep {
    seq: u32,
    id: Option<u16>,
    attempts: u32,
    /// Reading out the queue after an overrun, before asking again.
    draining: bool,
}

/// How many times a lookup whose reply may have been dropped is sent.
const ATTEMPTS: u32 = 3;

impl FamilyStep {
    /// Writes the lookup into `tx` (cleared) with the session's next number.
    pub(crate) fn start(state: &mut State, tx: &mut Vec<u8>) -> Self {
        let seq = state.next_seq();
        tx.clear();
        frame::push_get_family(tx, IPVS_GENL_NAME, seq, NLM_F_REQUEST | NLM_F_ACK);
        FamilyStep {
            seq,
            id: None,
            attempts: 1,
            draining: false,
        }
    }

    /// How the next receive waits: only for what is queued while the
    /// queue is read out after an overrun.
    pub(crate) fn wait(&self, state: &State) -> Wait {
        if self.draining {
            Wait::Queued
        } else {
            Wait::Up(state.timeout())
        }
    }

    /// Writes the lookup again under a new number (its reply may have been
    /// dropped); false when it was sent as often as it may be.
    fn again(&mut self, state: &mut State, tx: &mut Vec<u8>) -> bool {
        if self.attempts >= ATTEMPTS {
            return false;
        }
        let attempts = self.attempts + 1;
        *self = FamilyStep::start(state, tx);
        self.attempts = attempts;
        true
    }

    /// Reads a datagram; `Some` once the lookup has its answer. Messages
    /// of other numbers are not the lookup's and are passed over.
    fn datagram(&mut self, datagram: &[u8]) -> Option<Result<u16, Failure>> {
        for f in frame::frames(datagram, 0) {
            let f = match f {
                Ok(f) => f,
                Err(detail) => return Some(Err(Failure::Malformed(detail))),
            };
            if f.seq != self.seq {
                continue;
            }
            match f.reply {
                Reply::FamilyId(v) => self.id = Some(v),
                Reply::Error(libc::ENOENT) => return Some(Err(Failure::Unavailable)),
                Reply::Error(e) => return Some(Err(Failure::Refused(e))),
                Reply::Ack => {
                    return Some(self.id.ok_or(Failure::Malformed(DecodeError::Missing {
                        object: "acknowledged family lookup",
                        attr: "CTRL_ATTR_FAMILY_ID",
                    })))
                }
                _ => {}
            }
        }
        None
    }

    /// What an input means for the lookup: `None` to go on. `pending_tx`
    /// says whether `tx` (the lookup) is still to be sent: cleared once it
    /// was, set again when it is to go once more.
    pub(crate) fn input(
        &mut self,
        input: Input<'_>,
        state: &mut State,
        tx: &mut Vec<u8>,
        pending_tx: &mut bool,
    ) -> Option<Result<u16, Failure>> {
        match input {
            Input::Sent => {
                *pending_tx = false;
                None
            }
            Input::Datagram(d) => self.datagram(d),
            Input::SendFailed(e) | Input::ReceiveFailed(e) => Some(Err(Failure::Socket(e))),
            // The queue is read out and the reply was not in it: it was
            // dropped. Ask again, under a new number (a congested socket
            // takes nothing new until its queue is empty).
            Input::TimedOut if self.draining => {
                if self.again(state, tx) {
                    *pending_tx = true;
                    None
                } else {
                    Some(Err(Failure::Overrun))
                }
            }
            Input::TimedOut => Some(Err(Failure::TimedOut(state.timed_out()))),
            // The reply may be among the dropped ones: read out what is
            // queued first.
            Input::Overrun => {
                self.draining = true;
                None
            }
            Input::Truncated { len } => {
                Some(Err(Failure::Malformed(DecodeError::Truncated { len })))
            }
        }
    }
}

/// A machine that looks the IPVS family id up and records it in the
/// session ([`Session::resolve_family`](crate::proto::Session::resolve_family)).
#[derive(Debug)]
pub struct FamilyLookup<'s> {
    state: &'s mut State,
    tx: Vec<u8>,
    step: FamilyStep,
    pending_tx: bool,
    result: Option<Result<u16, Failure>>,
}

impl<'s> FamilyLookup<'s> {
    pub(crate) fn new(state: &'s mut State) -> Self {
        let mut tx = std::mem::take(&mut state.tx);
        let step = FamilyStep::start(state, &mut tx);
        FamilyLookup {
            state,
            tx,
            step,
            pending_tx: true,
            result: None,
        }
    }

    /// The id, or why there is none; `None` before the machine finished.
    /// Taking it a second time gives `None`.
    pub fn result(&mut self) -> Option<Result<u16, Failure>> {
        self.result.take()
    }
}

impl Machine for FamilyLookup<'_> {
    fn poll(&mut self) -> Poll<'_> {
        if self.result.is_some() {
            Poll::Finished
        } else if self.pending_tx {
            Poll::Transmit(&self.tx)
        } else {
            Poll::Receive(self.step.wait(self.state))
        }
    }

    fn handle(&mut self, input: Input<'_>) {
        // The tail of a dump an earlier call abandoned may come first (or
        // with the answer, in one receive).
        if let Input::Datagram(d) = input {
            self.state.observe(d);
        }
        if self.result.is_some() {
            return;
        }
        let r = self
            .step
            .input(input, self.state, &mut self.tx, &mut self.pending_tx);
        if let Some(r) = r {
            if let Ok(id) = r {
                self.state.family = Some(id);
            }
            self.result = Some(r);
        }
    }
}

impl Drop for FamilyLookup<'_> {
    fn drop(&mut self) {
        self.state.tx = std::mem::take(&mut self.tx);
    }
}
