//! Pipelined batches: many requests per `sendmsg`, one ACK per batch,
//! every outcome accounted for.
//!
//! How a batch works: requests are encoded back to back into one buffer of
//! at most [`ClientOptions::with_batch_bytes`](crate::ClientOptions) bytes
//! (counted exactly), only the last asks for an acknowledgement, and one
//! `sendmsg` hands the whole buffer to the kernel, which processes it
//! synchronously before the call returns. A refused request still gets its
//! own error message (with `NETLINK_CAP_ACK`, 36 bytes), so the replies
//! are: one error per refused request, then the ACK of the last. The number
//! of requests per batch is bounded so that even if every one fails, their
//! error messages fit in the socket's receive buffer.
//!
//! If replies were dropped anyway (`ENOBUFS`), the queue is read out (the
//! kernel delivers nothing new to a congested socket before), then a no-op
//! with an ACK is sent as a barrier: when its ACK arrives (or the batch's
//! own ACK), every surviving reply of the batch has been read, and the requests whose outcome could not be seen report
//! `ENOBUFS` (outcome unknown: they may have been applied) instead of a
//! guess. The sync engine then reads the affected services back.

use ipvsnl_wire::netlink_packet_core::{NLMSG_NOOP, NLM_F_ACK, NLM_F_REQUEST};
use ipvsnl_wire::write::{push_empty_message, set_message_flags, MessageStart};

use crate::request::encode;
use crate::transport::frame::{self, Reply};
use crate::{Client, Error, Request};

/// Tuning of one [`Client::apply_with`] call.
///
/// ```
/// let opts = ipvsnl::ApplyOptions::default().with_max_batch_requests(64);
/// assert_eq!(opts.max_batch_requests(), Some(64));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApplyOptions {
    max_batch_requests: Option<usize>,
}

impl ApplyOptions {
    /// At most this many requests per `sendmsg`, overriding the bound the
    /// client derives from its socket buffer. A bound above what the
    /// buffer holds lets a batch full of failures overflow it: useful only
    /// to exercise the `ENOBUFS` recovery, or to measure.
    pub fn with_max_batch_requests(mut self, n: usize) -> Self {
        self.max_batch_requests = Some(n.max(1));
        self
    }

    /// The override in force, if any.
    pub fn max_batch_requests(&self) -> Option<usize> {
        self.max_batch_requests
    }
}

impl Client {
    /// Applies many requests, pipelined: as many as fit in a batch go out in
    /// one `sendmsg`, with one acknowledgement asked for per batch; a
    /// refused request still gets its own error. Returns one outcome per
    /// request, in order. Invalid requests are refused locally and not
    /// sent; the others still apply.
    ///
    /// If the kernel drops replies (`ENOBUFS`: the socket buffer
    /// overflowed), the requests of that batch whose outcome could not be
    /// seen report `ENOBUFS` rather than a guess, and later batches are
    /// made smaller.
    pub fn apply(&mut self, requests: &[Request]) -> Vec<Result<(), Error>> {
        self.apply_with(requests, &ApplyOptions::default())
    }

    /// [`Client::apply`] with tuning.
    pub fn apply_with(
        &mut self,
        requests: &[Request],
        options: &ApplyOptions,
    ) -> Vec<Result<(), Error>> {
        let mut results: Vec<Option<Result<(), Error>>> = requests
            .iter()
            .map(|r| r.validate().err().map(Err))
            .collect();
        let family = match self.family_id() {
            Ok(f) => f,
            Err(e) => {
                let unavailable = matches!(e, Error::Unavailable);
                let errno = e.errno().unwrap_or(libc::EIO);
                return requests
                    .iter()
                    .zip(results)
                    .map(|(r, done)| match done {
                        Some(done) => done,
                        None if unavailable => Err(Error::Unavailable),
                        None => Err(r.refused(errno)),
                    })
                    .collect();
            }
        };
        let mut max_requests = options
            .max_batch_requests
            .unwrap_or(self.max_batch_requests)
            .max(1);
        let budget = self.opts.batch_bytes;
        let mut batch = Vec::new();
        let mut seqs = Vec::new();
        let mut next = 0;
        while next < requests.len() {
            // Encode the next batch, counting its bytes exactly.
            batch.clear();
            seqs.clear();
            self.tx.clear();
            while next < requests.len() && batch.len() < max_requests {
                if results[next].is_some() {
                    next += 1;
                    continue;
                }
                let seq = self.seq.wrapping_add(1).max(1);
                let start = encode(&mut self.tx, family, seq, NLM_F_REQUEST, &requests[next]);
                if self.tx.len() > budget && !batch.is_empty() {
                    self.tx.truncate(start.offset());
                    break;
                }
                self.seq = seq;
                batch.push(next);
                seqs.push((start, seq));
                next += 1;
            }
            let Some(&(last_start, _)) = seqs.last() else {
                continue;
            };
            // Only the last request asks for an acknowledgement.
            set_message_flags(&mut self.tx, last_start, NLM_F_REQUEST | NLM_F_ACK);
            match self.send_batch(family, requests, &batch, &seqs, &mut results) {
                Ok(true) => {}
                Ok(false) => max_requests = (max_requests / 2).max(1),
                Err(e) => {
                    // The socket failed: nothing more can be known or sent.
                    let errno = e.errno().unwrap_or(libc::EIO);
                    for (i, r) in requests.iter().enumerate() {
                        if results[i].is_none() {
                            results[i] = Some(Err(r.refused(errno)));
                        }
                    }
                    break;
                }
            }
        }
        results
            .into_iter()
            .zip(requests)
            .map(|(r, req)| r.unwrap_or_else(|| Err(req.refused(libc::EIO))))
            .collect()
    }

    /// Sends the encoded batch in `self.tx` and records every outcome.
    /// `Ok(false)` means replies were lost (ENOBUFS) and the batch size
    /// should shrink.
    fn send_batch(
        &mut self,
        family: u16,
        requests: &[Request],
        batch: &[usize],
        seqs: &[(MessageStart, u32)],
        results: &mut [Option<Result<(), Error>>],
    ) -> Result<bool, Error> {
        let kind = requests[batch[0]].kind();
        let first_seq = seqs[0].1;
        let last_seq = seqs[seqs.len() - 1].1;
        // Sequence numbers of a batch are consecutive (wrapping, skipping 0).
        let index_of = |seq: u32| -> Option<usize> {
            let off = seq.wrapping_sub(first_seq) as usize;
            let pos = if off < seqs.len() && seqs[off].1 == seq {
                Some(off)
            } else {
                seqs.iter().position(|s| s.1 == seq)
            };
            pos.map(|p| batch[p])
        };
        self.sock
            .send(&self.tx)
            .map_err(|e| self.io_error(kind, e))?;
        let mut lost = false;
        let mut barriers: Vec<u32> = Vec::new();
        let mut draining = false;
        loop {
            let n = match self.sock.recv(&mut self.rx) {
                Ok(n) => n,
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) && !draining => {
                    // Replies were dropped. The kernel processed the whole
                    // batch before the send returned, so whatever survived
                    // is queued. A congested netlink socket gets nothing
                    // new until its queue is empty: read the queue out
                    // (a short wait that times out means it is empty),
                    // then a no-op with an ACK marks the end.
                    lost = true;
                    draining = true;
                    self.sock
                        .set_timeout(DRAIN_WAIT)
                        .map_err(|e| self.io_error(kind, e))?;
                    continue;
                }
                Err(e)
                    if draining
                        && matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::ENOBUFS))
                        && barriers.len() < 16 =>
                {
                    // Queue empty: send the barrier and wait for its ACK.
                    let timeout = if e.raw_os_error() == Some(libc::EAGAIN) {
                        self.opts.timeout
                    } else {
                        DRAIN_WAIT
                    };
                    self.sock
                        .set_timeout(timeout)
                        .map_err(|e| self.io_error(kind, e))?;
                    let seq = self.next_seq();
                    // A no-op with an ACK request: the kernel skips it and
                    // acks, after everything sent before it.
                    let mut noop = Vec::with_capacity(16);
                    push_empty_message(&mut noop, NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, seq);
                    self.sock.send(&noop).map_err(|e| self.io_error(kind, e))?;
                    barriers.push(seq);
                    continue;
                }
                Err(e) => {
                    let _ = self.sock.set_timeout(self.opts.timeout);
                    return Err(self.io_error(kind, e));
                }
            };
            let frames = frame::frames(&self.rx[..n], family)
                .map_err(|detail| Error::Decode { kind, detail })?;
            let mut finished = false;
            for f in frames {
                if barriers.contains(&f.seq) {
                    finished = true;
                    continue;
                }
                let Some(i) = index_of(f.seq) else { continue };
                match f.reply {
                    Reply::Error(e) => {
                        let r = &requests[i];
                        results[i] = Some(Err(r.refused(e)));
                        if f.seq == last_seq && barriers.is_empty() {
                            finished = true;
                        }
                    }
                    Reply::Ack => {
                        results[i] = Some(Ok(()));
                        if f.seq == last_seq && barriers.is_empty() {
                            finished = true;
                        }
                    }
                    _ => {}
                }
            }
            if finished {
                break;
            }
        }
        if draining {
            self.sock
                .set_timeout(self.opts.timeout)
                .map_err(|e| self.io_error(kind, e))?;
        }
        // No error seen for a request means it was applied, unless replies
        // were lost: then its outcome is unknown.
        for &i in batch {
            if results[i].is_none() {
                results[i] = Some(if lost {
                    let r = &requests[i];
                    Err(r.refused(libc::ENOBUFS))
                } else {
                    Ok(())
                });
            }
        }
        Ok(!lost)
    }
}

/// How long a receive waits while the queue is read out after `ENOBUFS`:
/// the batch's replies are all queued already, so a wait this short that
/// times out means the queue is empty.
const DRAIN_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_override_the_window() {
        assert_eq!(ApplyOptions::default().max_batch_requests(), None);
        assert_eq!(
            ApplyOptions::default()
                .with_max_batch_requests(0)
                .max_batch_requests(),
            Some(1)
        );
    }
}
