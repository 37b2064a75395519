//! Pipelined batches: many requests per `sendmsg`, one ACK per batch,
//! every outcome accounted for.

use ipvsnl_wire::netlink_packet_core::{NLMSG_NOOP, NLM_F_ACK, NLM_F_REQUEST};

use crate::transport::frame::{self, Reply};
use crate::{Client, Error, Request};

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
        let mut results: Vec<Option<Result<(), Error>>> = requests
            .iter()
            .map(|r| r.validate().err().map(Err))
            .collect();
        let family = match self.family_id() {
            Ok(f) => f,
            Err(e) => {
                let text = e.to_string();
                let errno = e.errno().unwrap_or(libc::EIO);
                return requests
                    .iter()
                    .zip(results)
                    .map(|(r, done)| match done {
                        Some(done) => done,
                        None if errno == libc::ENOENT && text.contains("not available") => {
                            Err(Error::Unavailable)
                        }
                        None => Err(Error::kernel(r.kind(), r.target(), errno)),
                    })
                    .collect();
            }
        };
        let mut next = 0;
        let mut max_requests = self.max_batch_requests;
        while next < requests.len() {
            // Gather the next batch: indices of requests still to send.
            let mut batch = Vec::new();
            let mut bytes = 0;
            while next < requests.len()
                && batch.len() < max_requests
                && bytes < self.opts.batch_bytes
            {
                if results[next].is_none() {
                    batch.push(next);
                    bytes += 160; // a typical request; the exact size is not needed
                }
                next += 1;
            }
            if batch.is_empty() {
                continue;
            }
            match self.send_batch(family, requests, &batch, &mut results) {
                Ok(true) => {}
                Ok(false) => max_requests = (max_requests / 2).max(1),
                Err(e) => {
                    // The socket failed: nothing more can be known or sent.
                    let errno = e.errno().unwrap_or(libc::EIO);
                    for (i, r) in requests.iter().enumerate() {
                        if results[i].is_none() {
                            results[i] = Some(Err(Error::kernel(r.kind(), r.target(), errno)));
                        }
                    }
                    break;
                }
            }
        }
        results
            .into_iter()
            .zip(requests)
            .map(|(r, req)| {
                r.unwrap_or_else(|| Err(Error::kernel(req.kind(), req.target(), libc::EIO)))
            })
            .collect()
    }

    /// Sends one batch and records every outcome. `Ok(false)` means replies
    /// were lost (ENOBUFS) and the batch size should shrink.
    fn send_batch(
        &mut self,
        family: u16,
        requests: &[Request],
        batch: &[usize],
        results: &mut [Option<Result<(), Error>>],
    ) -> Result<bool, Error> {
        let kind = requests[batch[0]].kind();
        self.tx.clear();
        let first_seq = self.seq.wrapping_add(1);
        let mut seqs = Vec::with_capacity(batch.len());
        for (n, &i) in batch.iter().enumerate() {
            let seq = self.next_seq();
            let last = n + 1 == batch.len();
            let flags = if last {
                NLM_F_REQUEST | NLM_F_ACK
            } else {
                NLM_F_REQUEST
            };
            frame::push_request(&mut self.tx, family, seq, flags, requests[i].to_message());
            seqs.push(seq);
        }
        let last_seq = *seqs.last().unwrap_or(&first_seq);
        let index_of = |seq: u32| seqs.iter().position(|s| *s == seq).map(|p| batch[p]);
        self.sock
            .send(&self.tx)
            .map_err(|e| self.io_error(kind, e))?;
        let mut lost = false;
        let mut barrier = None;
        loop {
            let n = match self.sock.recv(&mut self.rx) {
                Ok(n) => n,
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) && barrier.is_none() => {
                    // Replies were dropped. Everything queued after this
                    // point is intact; a no-op with an ACK marks the end.
                    lost = true;
                    let seq = self.next_seq();
                    self.tx.clear();
                    push_noop(&mut self.tx, seq);
                    self.sock
                        .send(&self.tx)
                        .map_err(|e| self.io_error(kind, e))?;
                    barrier = Some(seq);
                    continue;
                }
                Err(e) => return Err(self.io_error(kind, e)),
            };
            let frames = frame::frames(&self.rx[..n], family)
                .map_err(|detail| Error::Decode { kind, detail })?;
            let mut finished = false;
            for f in frames {
                if Some(f.seq) == barrier {
                    finished = true;
                    continue;
                }
                let Some(i) = index_of(f.seq) else { continue };
                match f.reply {
                    Reply::Error(e) => {
                        let r = &requests[i];
                        results[i] = Some(Err(Error::kernel(r.kind(), r.target(), e)));
                        if f.seq == last_seq && barrier.is_none() {
                            finished = true;
                        }
                    }
                    Reply::Ack if f.seq == last_seq && barrier.is_none() => finished = true,
                    _ => {}
                }
            }
            if finished {
                break;
            }
        }
        for &i in batch {
            if results[i].is_none() {
                results[i] = Some(if lost {
                    let r = &requests[i];
                    Err(Error::kernel(r.kind(), r.target(), libc::ENOBUFS))
                } else {
                    Ok(())
                });
            }
        }
        Ok(!lost)
    }
}

/// A `NLMSG_NOOP` with an ACK request: the kernel skips it and acks, after
/// everything sent before it.
fn push_noop(out: &mut Vec<u8>, seq: u32) {
    out.extend_from_slice(&16u32.to_ne_bytes());
    out.extend_from_slice(&NLMSG_NOOP.to_ne_bytes());
    out.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
}
