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

use crate::request::addr_bytes;
use crate::transport::frame::{self, Reply};
use crate::{Client, Destination, Error, Request, Service, ServiceFlags, ServiceKey};

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
                        None => Err(Error::kernel(r.kind(), r.target(), errno)),
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
                let start = self.tx.len();
                let seq = self.seq.wrapping_add(1).max(1);
                encode(&mut self.tx, family, seq, NLM_F_REQUEST, &requests[next]);
                if self.tx.len() > budget && !batch.is_empty() {
                    self.tx.truncate(start);
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
            let flags_at = last_start + 6;
            let flags = NLM_F_REQUEST | NLM_F_ACK;
            self.tx[flags_at..flags_at + 2].copy_from_slice(&flags.to_ne_bytes());
            match self.send_batch(family, requests, &batch, &seqs, &mut results) {
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

    /// Sends the encoded batch in `self.tx` and records every outcome.
    /// `Ok(false)` means replies were lost (ENOBUFS) and the batch size
    /// should shrink.
    fn send_batch(
        &mut self,
        family: u16,
        requests: &[Request],
        batch: &[usize],
        seqs: &[(usize, u32)],
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
                    let mut noop = Vec::with_capacity(16);
                    push_noop(&mut noop, seq);
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
                        results[i] = Some(Err(Error::kernel(r.kind(), r.target(), e)));
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
                    Err(Error::kernel(r.kind(), r.target(), libc::ENOBUFS))
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

/// A `NLMSG_NOOP` with an ACK request: the kernel skips it and acks, after
/// everything sent before it.
fn push_noop(out: &mut Vec<u8>, seq: u32) {
    out.extend_from_slice(&16u32.to_ne_bytes());
    out.extend_from_slice(&NLMSG_NOOP.to_ne_bytes());
    out.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
}

/// Appends one request, encoded directly for the service and destination
/// requests a sync sends by the thousand (byte for byte what
/// [`Request::to_message`] gives, without building it), through the
/// generic encoder for the others.
pub(crate) fn encode(out: &mut Vec<u8>, family: u16, seq: u32, flags: u16, r: &Request) {
    const NEW_SERVICE: u8 = 1;
    const SET_SERVICE: u8 = 2;
    const DEL_SERVICE: u8 = 3;
    const NEW_DEST: u8 = 5;
    const SET_DEST: u8 = 6;
    const DEL_DEST: u8 = 7;
    let (cmd, service, full, dest): (u8, &ServiceKey, Option<&Service>, Option<DestNest>) = match r
    {
        Request::AddService(s) => (NEW_SERVICE, &s.key, Some(s), None),
        Request::EditService(s) => (SET_SERVICE, &s.key, Some(s), None),
        Request::DeleteService(k) => (DEL_SERVICE, k, None, None),
        Request::AddDestination(k, d) => (NEW_DEST, k, None, Some(DestNest::Full(d))),
        Request::EditDestination(k, d) => (SET_DEST, k, None, Some(DestNest::Full(d))),
        Request::DeleteDestination(k, a, p) => (DEL_DEST, k, None, Some(DestNest::Id(a, *p))),
        other => {
            frame::push_request(out, family, seq, flags, other.to_message());
            return;
        }
    };
    let start = out.len();
    // nlmsghdr (length patched below), genlmsghdr.
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(&family.to_ne_bytes());
    out.extend_from_slice(&flags.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(&[cmd, ipvsnl_wire::IPVS_GENL_VERSION, 0, 0]);
    // IPVS_CMD_ATTR_SERVICE
    let nest = begin(out, 1);
    match service {
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => {
            attr(
                out,
                1,
                &crate::AddressFamily::of(addr).to_raw().to_ne_bytes(),
            );
            attr(out, 2, &protocol.to_raw().to_ne_bytes());
            attr(out, 3, &addr_bytes(addr));
            attr(out, 4, &port.to_be_bytes());
        }
        ServiceKey::Fwmark { mark, family } => {
            attr(out, 1, &family.to_raw().to_ne_bytes());
            attr(out, 5, &mark.to_ne_bytes());
        }
    }
    if let Some(s) = full {
        let name = s.scheduler.name().as_bytes();
        string_attr(out, 6, name);
        if let Some(pe) = &s.persistence_engine {
            string_attr(out, 11, pe.as_bytes());
        }
        let mut fm = [0u8; 8];
        fm[..4].copy_from_slice(&(s.flags - ServiceFlags::HASHED).bits().to_ne_bytes());
        fm[4..].copy_from_slice(&u32::MAX.to_ne_bytes());
        attr(out, 7, &fm);
        attr(out, 8, &s.timeout.to_ne_bytes());
        attr(out, 9, &s.netmask.to_wire());
    }
    end(out, nest);
    // IPVS_CMD_ATTR_DEST
    match dest {
        Some(DestNest::Full(d)) => {
            let nest = begin(out, 2);
            let tunnel = d.forward.tunnel().copied().unwrap_or_default();
            attr(out, 11, &d.family().to_raw().to_ne_bytes());
            attr(out, 1, &addr_bytes(&d.addr));
            attr(out, 2, &d.port.to_be_bytes());
            attr(out, 3, &d.forward.to_raw().to_ne_bytes());
            attr(out, 4, &d.weight.to_ne_bytes());
            attr(out, 13, &[tunnel.kind.to_raw()]);
            attr(out, 14, &tunnel.port.to_be_bytes());
            attr(out, 15, &tunnel.flags.bits().to_ne_bytes());
            attr(out, 5, &d.upper_threshold.to_ne_bytes());
            attr(out, 6, &d.lower_threshold.to_ne_bytes());
            end(out, nest);
        }
        Some(DestNest::Id(a, p)) => {
            let nest = begin(out, 2);
            attr(out, 11, &crate::AddressFamily::of(a).to_raw().to_ne_bytes());
            attr(out, 1, &addr_bytes(a));
            attr(out, 2, &p.to_be_bytes());
            end(out, nest);
        }
        None => {}
    }
    let len = (out.len() - start) as u32;
    out[start..start + 4].copy_from_slice(&len.to_ne_bytes());
}

enum DestNest<'a> {
    Full(&'a Destination),
    Id(&'a std::net::IpAddr, u16),
}

/// One attribute, padded to 4 bytes.
pub(crate) fn attr(out: &mut Vec<u8>, kind: u16, value: &[u8]) {
    let len = 4 + value.len();
    out.extend_from_slice(&(len as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(value);
    pad(out, len);
}

/// A NUL-terminated string attribute.
fn string_attr(out: &mut Vec<u8>, kind: u16, value: &[u8]) {
    let len = 4 + value.len() + 1;
    out.extend_from_slice(&(len as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(value);
    out.push(0);
    pad(out, len);
}

/// Pads an attribute of `len` bytes to a multiple of 4.
fn pad(out: &mut Vec<u8>, len: usize) {
    out.extend_from_slice(&[0; 3][..(4 - len % 4) % 4]);
}

/// Starts a nest; returns where its header is.
pub(crate) fn begin(out: &mut Vec<u8>, kind: u16) -> usize {
    let at = out.len();
    out.extend_from_slice(&0u16.to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    at
}

pub(crate) fn end(out: &mut [u8], at: usize) {
    let len = (out.len() - at) as u16;
    out[at..at + 2].copy_from_slice(&len.to_ne_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AddressFamily, Forward, Netmask, Scheduler, Tunnel, TunnelFlags, TunnelKind};

    fn generic(r: &Request) -> Vec<u8> {
        let mut v = Vec::new();
        frame::push_request(&mut v, 0x25, 9, NLM_F_REQUEST, r.to_message());
        v
    }

    fn direct(r: &Request) -> Vec<u8> {
        let mut v = vec![0xaa; 3]; // encoding appends; offsets must not matter
        encode(&mut v, 0x25, 9, NLM_F_REQUEST, r);
        v.split_off(3)
    }

    #[test]
    fn direct_encoding_is_byte_identical_to_the_generic_one() {
        let v4 = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
        let v6 = ServiceKey::udp("2001:db8::1".parse().unwrap(), 53);
        let fw = ServiceKey::fwmark(7, AddressFamily::Inet6);
        let d = Destination::new("172.16.0.1".parse().unwrap(), 8080)
            .with_weight(3)
            .with_thresholds(10, 2);
        let gue = Destination::new("2001:db8::9".parse().unwrap(), 53).with_forward(
            Forward::Tunnel(Tunnel {
                kind: TunnelKind::Gue,
                port: 6080,
                flags: TunnelFlags::REMCSUM,
            }),
        );
        let reqs = [
            Request::AddService(Service::new(v4).with_scheduler(Scheduler::RoundRobin)),
            Request::AddService(
                Service::new(v6)
                    .with_persistence(300)
                    .with_netmask(Netmask::V6(64))
                    .with_persistence_engine("sip")
                    .with_flags(ServiceFlags::HASHED | ServiceFlags::ONE_PACKET),
            ),
            Request::EditService(Service::new(fw).with_scheduler(Scheduler::Maglev)),
            Request::DeleteService(v4),
            Request::DeleteService(fw),
            Request::AddDestination(v4, d),
            Request::EditDestination(v6, gue),
            Request::DeleteDestination(v4, d.addr, d.port),
            Request::DeleteDestination(v6, gue.addr, gue.port),
            Request::Flush,
        ];
        for r in &reqs {
            assert_eq!(direct(r), generic(r), "{r}");
        }
    }

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
