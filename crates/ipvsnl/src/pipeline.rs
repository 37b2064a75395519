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
use ipvsnl_wire::write::push_empty_message;

use crate::batch::{Batch, Encoder, BARRIER_SEQS};
use crate::failures::Failures;
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
    encode_ahead: Option<bool>,
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

    /// Whether the next batch is encoded on a helper thread while the
    /// kernel works through the current one. By default it is for a
    /// large apply (thousands of requests) and not for a small one.
    pub fn with_encode_ahead(mut self, yes: bool) -> Self {
        self.encode_ahead = Some(yes);
        self
    }

    /// The encode-ahead choice in force (`None`: decided by size).
    pub fn encode_ahead(&self) -> Option<bool> {
        self.encode_ahead
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
        self.apply_failures(requests, options)
            .into_results(requests.len())
    }

    /// [`Client::apply_with`], returning the failures only (what the sync
    /// engine keeps: memory for the exceptions, not for every request).
    pub(crate) fn apply_failures(
        &mut self,
        requests: &[Request],
        options: &ApplyOptions,
    ) -> Failures {
        let mut failures = Failures::default();
        let skip: Vec<bool> = requests
            .iter()
            .enumerate()
            .map(|(i, r)| match r.validate() {
                Ok(()) => false,
                Err(e) => {
                    failures.set(i, e);
                    true
                }
            })
            .collect();
        let family = match self.family_id() {
            Ok(f) => f,
            Err(e) => {
                let unavailable = matches!(e, Error::Unavailable);
                let errno = e.errno().unwrap_or(libc::EIO);
                for (i, r) in requests.iter().enumerate() {
                    failures.set_if_ok(i, || {
                        if unavailable {
                            Error::Unavailable
                        } else {
                            r.refused(errno)
                        }
                    });
                }
                return failures;
            }
        };
        let max_requests = options
            .max_batch_requests
            .unwrap_or(self.max_batch_requests)
            .max(1);
        let mut encoder = Encoder::new(requests, &skip, family, self.opts.batch_bytes, self.seq);
        let ahead = options
            .encode_ahead
            .unwrap_or(requests.len() >= ENCODE_AHEAD_FROM);
        let failed = if ahead {
            self.run_encoding_ahead(&mut encoder, requests, max_requests, &mut failures)
        } else {
            self.run_in_turn(&mut encoder, requests, max_requests, &mut failures)
        };
        self.seq = encoder.last_seq();
        if let Some((from, e)) = failed {
            // The socket failed: nothing from this batch on can be known.
            // (Refusals already read stay as they are.)
            let errno = e.errno().unwrap_or(libc::EIO);
            for (i, r) in requests.iter().enumerate().skip(from) {
                failures.set_if_ok(i, || r.refused(errno));
            }
        }
        failures
    }

    /// Encodes a batch, sends it and reads its replies, then the next.
    /// On a socket failure, returns the index of the first request whose
    /// outcome is unknown, with the error.
    fn run_in_turn(
        &mut self,
        encoder: &mut Encoder<'_>,
        requests: &[Request],
        mut max_requests: usize,
        failures: &mut Failures,
    ) -> Option<(usize, Error)> {
        let mut batch = Batch {
            bytes: std::mem::take(&mut self.tx),
            ..Batch::default()
        };
        let mut failed = None;
        while encoder.fill(&mut batch, max_requests) {
            let sent = self.send_batch(requests, &batch, failures);
            if let Err(e) = resize_after(sent, &mut max_requests) {
                failed = Some((batch.items[0], e));
                break;
            }
        }
        self.tx = batch.bytes;
        failed
    }

    /// The same, with the next batch encoded on a helper thread while the
    /// kernel works through the current one (the kernel processes a batch
    /// inside `sendmsg`, on this thread): two buffers take turns.
    fn run_encoding_ahead(
        &mut self,
        encoder: &mut Encoder<'_>,
        requests: &[Request],
        max_requests: usize,
        failures: &mut Failures,
    ) -> Option<(usize, Error)> {
        use std::sync::mpsc::{channel, sync_channel};
        std::thread::scope(|s| {
            // Encoded batches to send; buffers back (with the batch size
            // to use) to refill.
            let (full_tx, full_rx) = sync_channel::<Batch>(1);
            let (empty_tx, empty_rx) = channel::<(Batch, usize)>();
            for _ in 0..2 {
                let b = Batch {
                    bytes: Vec::with_capacity(self.opts.batch_bytes + 4096),
                    ..Batch::default()
                };
                // The receiver lives until the encoder ends: cannot fail.
                let _ = empty_tx.send((b, max_requests));
            }
            let worker = s.spawn(move || {
                while let Ok((mut b, max)) = empty_rx.recv() {
                    if !encoder.fill(&mut b, max) || full_tx.send(b).is_err() {
                        break;
                    }
                }
            });
            let mut max = max_requests;
            let mut failed = None;
            let mut unsent = 0;
            for batch in full_rx.iter() {
                unsent = batch.items.last().map_or(unsent, |i| i + 1);
                let sent = self.send_batch(requests, &batch, failures);
                if let Err(e) = resize_after(sent, &mut max) {
                    failed = Some((batch.items[0], e));
                    break;
                }
                if empty_tx.send((batch, max)).is_err() {
                    break;
                }
            }
            // Dropping both ends stops the encoder wherever it waits.
            drop(empty_tx);
            drop(full_rx);
            // The encoder does not panic; if it did, its batches are the
            // unsent ones, reported below as not applied.
            if worker.join().is_err() && failed.is_none() {
                if let Some(r) = requests.get(unsent) {
                    let source = std::io::Error::other("the encoding thread panicked");
                    failed = Some((unsent, self.io_error(r.kind(), source)));
                }
            }
            failed
        })
    }

    /// Sends one encoded batch and records every failure in `failures`.
    /// `Ok(false)` means replies were lost (ENOBUFS) and the batch size
    /// should shrink.
    fn send_batch(
        &mut self,
        requests: &[Request],
        batch: &Batch,
        failures: &mut Failures,
    ) -> Result<bool, Error> {
        let kind = requests[batch.items[0]].kind();
        // Only the last request asks for an ACK; the others are answered
        // only when refused (then their result is an error).
        let mut last_acked = false;
        self.sock
            .send(&batch.bytes)
            .map_err(|e| self.io_error(kind, e))?;
        let mut lost = false;
        let mut barriers = 0u32;
        let mut draining = false;
        loop {
            let n = match self.recv_one() {
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
                        && barriers < BARRIER_SEQS =>
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
                    // A no-op with an ACK request: the kernel skips it and
                    // acks, after everything sent before it.
                    let mut noop = Vec::with_capacity(16);
                    let seq = batch.barrier(barriers);
                    push_empty_message(&mut noop, NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, seq);
                    self.sock.send(&noop).map_err(|e| self.io_error(kind, e))?;
                    barriers += 1;
                    continue;
                }
                Err(e) => {
                    let _ = self.sock.set_timeout(self.opts.timeout);
                    return Err(self.io_error(kind, e));
                }
            };
            let mut finished = false;
            for f in frame::frames(&self.rx[..n], 0) {
                let f = f.map_err(|detail| Error::Decode { kind, detail })?;
                if barriers > 0 && batch.is_barrier(f.seq) {
                    finished = true;
                    continue;
                }
                let Some(at) = batch.position(f.seq) else {
                    continue;
                };
                let last = f.seq == batch.last_seq && barriers == 0;
                match f.reply {
                    Reply::Error(e) => {
                        let i = batch.items[at];
                        failures.set(i, requests[i].refused(e));
                        finished |= last;
                    }
                    Reply::Ack => {
                        last_acked |= f.seq == batch.last_seq;
                        finished |= last;
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
        if lost {
            let unanswered = batch.items.len() - usize::from(last_acked);
            for &i in &batch.items[..unanswered] {
                failures.set_if_ok(i, || requests[i].refused(libc::ENOBUFS));
            }
        }
        Ok(!lost)
    }
}

/// Halves the batch size after a batch that lost replies; passes a
/// socket failure on (nothing more can be sent then).
fn resize_after(sent: Result<bool, Error>, max_requests: &mut usize) -> Result<(), Error> {
    if !sent? {
        *max_requests = (*max_requests / 2).max(1);
    }
    Ok(())
}

/// From this many requests on, the next batch is encoded on a helper
/// thread while the kernel works through the current one (below it, the
/// thread would cost more than it saves).
const ENCODE_AHEAD_FROM: usize = 2048;

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
