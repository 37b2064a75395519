//! Sans-IO batching: requests encoded back to back into datagrams of a
//! bounded size, with consecutive sequence numbers and one acknowledgement
//! asked for per datagram. Nothing here touches a socket.
//!
//! Each batch also reserves [`BARRIER_SEQS`] sequence numbers after its
//! requests, for the no-op barriers the pipeline may send to recover from
//! `ENOBUFS`: a batch can then be encoded while the one before it is still
//! with the kernel, without the two ever sharing a number.

use ipvsnl_wire::netlink_packet_core::{NLM_F_ACK, NLM_F_REQUEST};
use ipvsnl_wire::write::set_message_flags;

use crate::request::encode;
use crate::Request;

/// Sequence numbers reserved after each batch for its barriers.
pub(crate) const BARRIER_SEQS: u32 = 16;

/// One datagram of requests.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// The encoded requests.
    pub bytes: Vec<u8>,
    /// Index of each request (in the caller's slice), in order.
    pub items: Vec<usize>,
    /// Sequence number of the first request; the others follow, one each
    /// (wrapping, skipping 0).
    pub first_seq: u32,
    /// Sequence number of the last request (the one asked to ACK).
    pub last_seq: u32,
    /// The first of the [`BARRIER_SEQS`] numbers reserved after the batch.
    pub barrier_seq: u32,
}

impl Batch {
    /// The position in [`Batch::items`] of the request answered by `seq`.
    pub(crate) fn position(&self, seq: u32) -> Option<usize> {
        let at = usize::try_from(steps(self.first_seq, seq)?).ok()?;
        (at < self.items.len()).then_some(at)
    }

    /// Whether `seq` is one of this batch's barrier numbers.
    pub(crate) fn is_barrier(&self, seq: u32) -> bool {
        steps(self.barrier_seq, seq).is_some_and(|n| n < BARRIER_SEQS)
    }

    /// The barrier number `n` (below [`BARRIER_SEQS`]).
    pub(crate) fn barrier(&self, n: u32) -> u32 {
        advance(self.barrier_seq, n)
    }
}

/// How many numbers `to` comes after `from` (0 is skipped on wrap and is
/// never anyone's number).
fn steps(from: u32, to: u32) -> Option<u32> {
    if to == 0 {
        return None;
    }
    let n = to.wrapping_sub(from);
    Some(if to < from { n - 1 } else { n })
}

/// The number `n` steps after `s`.
fn advance(s: u32, n: u32) -> u32 {
    (0..n).fold(s, |s, _| next_seq(s))
}

/// The sequence number after `s` (0 is never used: it marks kernel
/// notifications).
pub(crate) fn next_seq(s: u32) -> u32 {
    s.wrapping_add(1).max(1)
}

/// Encodes a slice of requests batch by batch.
#[derive(Debug)]
pub(crate) struct Encoder<'r> {
    requests: &'r [Request],
    /// Requests not to send (refused locally).
    skip: &'r [bool],
    family: u16,
    budget: usize,
    next: usize,
    seq: u32,
}

impl<'r> Encoder<'r> {
    /// An encoder of `requests` (those with `skip` set left out) for the
    /// IPVS family id `family`, at most `budget` bytes a batch (but always
    /// at least one request), numbering after `last_seq`.
    pub(crate) fn new(
        requests: &'r [Request],
        skip: &'r [bool],
        family: u16,
        budget: usize,
        last_seq: u32,
    ) -> Self {
        Encoder {
            requests,
            skip,
            family,
            budget,
            next: 0,
            seq: last_seq,
        }
    }

    /// The last sequence number handed out (barriers included).
    pub(crate) fn last_seq(&self) -> u32 {
        self.seq
    }

    /// Refills `b` with the next batch of at most `max_requests` requests;
    /// false when none is left.
    pub(crate) fn fill(&mut self, b: &mut Batch, max_requests: usize) -> bool {
        b.bytes.clear();
        b.items.clear();
        let max_requests = max_requests.max(1);
        let mut last = None;
        let mut seq = self.seq;
        while self.next < self.requests.len() && b.items.len() < max_requests {
            let i = self.next;
            if self.skip.get(i).copied().unwrap_or(false) {
                self.next += 1;
                continue;
            }
            let s = next_seq(seq);
            let start = encode(
                &mut b.bytes,
                self.family,
                s,
                NLM_F_REQUEST,
                &self.requests[i],
            );
            if b.bytes.len() > self.budget && !b.items.is_empty() {
                b.bytes.truncate(start.offset());
                break;
            }
            if b.items.is_empty() {
                b.first_seq = s;
            }
            seq = s;
            b.items.push(i);
            last = Some(start);
            self.next += 1;
        }
        let Some(last) = last else {
            return false;
        };
        // Only the last request asks for an acknowledgement.
        set_message_flags(&mut b.bytes, last, NLM_F_REQUEST | NLM_F_ACK);
        b.last_seq = seq;
        b.barrier_seq = next_seq(seq);
        self.seq = advance(seq, BARRIER_SEQS);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::frame::{all_frames, Reply};
    use crate::{Destination, Service, ServiceKey};

    fn requests(n: u32) -> Vec<Request> {
        let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
        let mut v = vec![Request::AddService(Service::new(key))];
        for i in 0..n {
            let addr = std::net::Ipv4Addr::from(0xac10_0000 + i);
            v.push(Request::AddDestination(
                key,
                Destination::new(addr.into(), 80),
            ));
        }
        v
    }

    fn all(enc: &mut Encoder<'_>, budget_check: usize, max: usize) -> Vec<Batch> {
        let mut out = Vec::new();
        loop {
            let mut b = Batch::default();
            if !enc.fill(&mut b, max) {
                return out;
            }
            assert!(b.bytes.len() <= budget_check || b.items.len() == 1);
            out.push(b);
        }
    }

    #[test]
    fn batches_cover_every_request_once_within_the_budget() {
        let reqs = requests(500);
        let mut skip = vec![false; reqs.len()];
        skip[7] = true;
        skip[300] = true;
        let mut enc = Encoder::new(&reqs, &skip, 0x22, 4096, 41);
        let batches = all(&mut enc, 4096, 1000);
        assert!(batches.len() > 5, "{}", batches.len());
        let items: Vec<usize> = batches.iter().flat_map(|b| b.items.clone()).collect();
        let want: Vec<usize> = (0..reqs.len()).filter(|i| !skip[*i]).collect();
        assert_eq!(items, want);
        let mut expect_seq = 42;
        for b in &batches {
            let f = all_frames(&b.bytes, 0x22).unwrap();
            assert_eq!(f.len(), b.items.len());
            for (k, fr) in f.iter().enumerate() {
                assert_eq!(fr.seq, expect_seq, "consecutive numbers");
                assert_eq!(b.position(fr.seq), Some(k));
                assert!(matches!(fr.reply, Reply::Data { .. }));
                let ack = fr.flags & NLM_F_ACK != 0;
                assert_eq!(ack, k + 1 == f.len(), "only the last asks for an ACK");
                expect_seq += 1;
            }
            assert_eq!(b.last_seq, expect_seq - 1);
            assert_eq!(b.barrier_seq, expect_seq);
            assert!(b.is_barrier(expect_seq) && b.is_barrier(expect_seq + BARRIER_SEQS - 1));
            assert!(!b.is_barrier(expect_seq + BARRIER_SEQS));
            assert_eq!(b.position(expect_seq), None);
            expect_seq += BARRIER_SEQS;
        }
        assert_eq!(enc.last_seq(), expect_seq - 1);
    }

    #[test]
    fn the_request_bound_and_a_lone_oversized_request() {
        let reqs = requests(50);
        let skip = vec![false; reqs.len()];
        let batches = all(
            &mut Encoder::new(&reqs, &skip, 0x22, 1 << 20, 0),
            1 << 20,
            7,
        );
        assert!(batches.iter().all(|b| b.items.len() <= 7));
        assert_eq!(batches.len(), 51usize.div_ceil(7));
        // A budget smaller than one request still sends one per batch.
        let batches = all(&mut Encoder::new(&reqs, &skip, 0x22, 10, 0), 10, 100);
        assert_eq!(batches.len(), 51);
    }

    #[test]
    fn numbering_wraps_past_zero() {
        let reqs = requests(40);
        let skip = vec![false; reqs.len()];
        let mut enc = Encoder::new(&reqs, &skip, 0x22, 1 << 20, u32::MAX - 20);
        let batches = all(&mut enc, 1 << 20, 1000);
        assert_eq!(batches.len(), 1);
        let b = &batches[0];
        let f = all_frames(&b.bytes, 0x22).unwrap();
        assert!(f.iter().all(|fr| fr.seq != 0));
        for (k, fr) in f.iter().enumerate() {
            assert_eq!(b.position(fr.seq), Some(k));
        }
        assert!(b.is_barrier(b.barrier(BARRIER_SEQS - 1)));
        assert!(!b.is_barrier(b.barrier(BARRIER_SEQS)));
        assert_ne!(b.barrier(0), 0);
        assert_eq!(b.position(0), None);
        assert_eq!(b.position(b.first_seq.wrapping_sub(1)), None);
    }

    #[test]
    fn nothing_to_send() {
        let reqs = requests(3);
        let skip = vec![true; reqs.len()];
        let mut b = Batch::default();
        assert!(!Encoder::new(&reqs, &skip, 0x22, 4096, 0).fill(&mut b, 10));
        assert!(!Encoder::new(&[], &[], 0x22, 4096, 0).fill(&mut b, 10));
    }
}
