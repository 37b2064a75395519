//! Batching: requests encoded back to back into one datagram of a bounded
//! size, with consecutive sequence numbers and an acknowledgement asked of
//! the last one only (the kernel still answers each refused one with its
//! own error), or of a no-op after it when it may go unanswered (see
//! [`closer`](crate::proto::closer)).

use ipvsnl_wire::netlink_packet_core::NLM_F_REQUEST;

use crate::proto::closer::close_batch;
use crate::proto::seq::{next_seq, steps};
use crate::proto::state::State;

/// A request the protocol core can send: it writes itself as one whole
/// netlink message.
///
/// ```
/// use ipvsnl::proto::Encode;
/// use ipvsnl::{Request, ServiceKey};
/// let r = Request::DeleteService(ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80));
/// let mut out = Vec::new();
/// r.encode(&mut out, 0x23, 7, 1);
/// assert_eq!(out[..4], (out.len() as u32).to_ne_bytes()); // nlmsg_len
/// assert_eq!(out[8..12], 7u32.to_ne_bytes()); // nlmsg_seq
/// ```
pub trait Encode {
    /// Appends the message to `out` with the IPVS family id `family`, the
    /// sequence number `seq` and the netlink flags `flags`.
    fn encode(&self, out: &mut Vec<u8>, family: u16, seq: u32, flags: u16);

    /// Whether the kernel may answer this request with nothing at all, not
    /// even the ACK asked for, though it handled it: netlink sends no reply
    /// to a request whose handler returned `EINTR` (stopping a sync daemon
    /// whose thread never ran does). A batch that ends with such a request
    /// ends with a no-op that asks for the ACK instead, so its end is still
    /// seen at once. By default false.
    fn may_go_unanswered(&self) -> bool {
        false
    }
}

/// The requests of the datagram in flight.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// Index of each request (in the caller's list), in order.
    pub items: Vec<usize>,
    /// Sequence number of the first; the others follow one each.
    pub first_seq: u32,
    /// Sequence number of the last request.
    pub last_seq: u32,
    /// Sequence number of the no-op that closes the batch and asks for its
    /// ACK, when the last request may go unanswered (else the last request
    /// asks for it).
    pub closer: Option<u32>,
}

impl Batch {
    /// The position in [`Batch::items`] of the request numbered `seq`.
    pub(crate) fn position(&self, seq: u32) -> Option<usize> {
        let at = usize::try_from(steps(self.first_seq, seq)?).ok()?;
        (at < self.items.len()).then_some(at)
    }
}

/// The requests of one apply, and how far encoding has come.
#[derive(Debug)]
pub(crate) struct Queue<'r, R> {
    requests: &'r [R],
    skip: &'r [bool],
    next: usize,
}

impl<'r, R: Encode> Queue<'r, R> {
    /// `requests`, those with `skip[i]` set left out.
    pub(crate) fn new(requests: &'r [R], skip: &'r [bool]) -> Self {
        Queue {
            requests,
            skip,
            next: 0,
        }
    }

    /// Takes the requests not yet encoded (and not skipped), in order.
    pub(crate) fn drain_rest(&mut self) -> impl Iterator<Item = usize> + 'r {
        let skip = self.skip;
        let from = std::mem::replace(&mut self.next, self.requests.len());
        (from..self.requests.len()).filter(move |&i| !skip.get(i).copied().unwrap_or(false))
    }

    /// Encodes into `tx` (cleared) the next requests, numbered by
    /// `session`, until `budget` bytes or `max` requests (always at least
    /// one); `batch` names them. False if none was left.
    pub(crate) fn fill(
        &mut self,
        tx: &mut Vec<u8>,
        batch: &mut Batch,
        budget: usize,
        max: usize,
        state: &mut State,
        family: u16,
    ) -> bool {
        tx.clear();
        batch.items.clear();
        batch.closer = None;
        let mut last_start = 0;
        while self.next < self.requests.len() && batch.items.len() < max.max(1) {
            let i = self.next;
            if self.skip.get(i).copied().unwrap_or(false) {
                self.next += 1;
                continue;
            }
            let start = tx.len();
            // The number is taken only if the request stays in this batch.
            let seq = next_seq(state.last_seq());
            self.requests[i].encode(tx, family, seq, NLM_F_REQUEST);
            if tx.len() > budget && !batch.items.is_empty() {
                tx.truncate(start);
                break;
            }
            state.set_last_seq(seq);
            if batch.items.is_empty() {
                batch.first_seq = seq;
            }
            batch.last_seq = seq;
            batch.items.push(i);
            last_start = start;
            self.next += 1;
        }
        let Some(&last) = batch.items.last() else {
            return false;
        };
        let unanswered = self.requests[last].may_go_unanswered();
        batch.closer = close_batch(tx, last_start, unanswered, state);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::frame::{all_frames, Reply};
    use crate::{Destination, Request, Service, ServiceKey};
    use ipvsnl_wire::netlink_packet_core::NLM_F_ACK;
    use std::time::Duration;

    fn requests(n: u32) -> Vec<Request> {
        let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
        let mut v = vec![Request::add_service(Service::new(key))];
        for i in 0..n {
            let addr = std::net::Ipv4Addr::from(0xac10_0000 + i);
            v.push(Request::AddDestination(
                key,
                Destination::new(addr.into(), 80),
            ));
        }
        v
    }

    #[test]
    fn batches_cover_every_request_once_within_the_budget() {
        let reqs = requests(500);
        let mut skip = vec![false; reqs.len()];
        skip[7] = true;
        skip[300] = true;
        let mut state = State::new(Duration::from_secs(1));
        state.set_last_seq(41);
        let (mut tx, mut b) = (Vec::new(), Batch::default());
        let mut q = Queue::new(&reqs, &skip);
        let mut items = Vec::new();
        let mut expect_seq = 42;
        let mut batches = 0;
        while q.fill(&mut tx, &mut b, 4096, 1000, &mut state, 0x22) {
            batches += 1;
            assert!(tx.len() <= 4096);
            let f = all_frames(&tx, 0x22).unwrap();
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
            assert_eq!(b.position(expect_seq), None);
            items.extend(b.items.iter().copied());
        }
        assert!(batches > 5, "{batches}");
        let want: Vec<usize> = (0..reqs.len()).filter(|i| !skip[*i]).collect();
        assert_eq!(items, want);
        assert_eq!(state.last_seq(), expect_seq - 1, "no number wasted");
    }

    #[test]
    fn the_request_bound_a_lone_oversized_request_and_wrapping() {
        let reqs = requests(50);
        let skip = vec![false; reqs.len()];
        let mut state = State::new(Duration::from_secs(1));
        state.set_last_seq(u32::MAX - 20);
        let (mut tx, mut b) = (Vec::new(), Batch::default());
        let mut q = Queue::new(&reqs, &skip);
        let mut n = 0;
        while q.fill(&mut tx, &mut b, 1 << 20, 7, &mut state, 1) {
            assert!(b.items.len() <= 7);
            for fr in all_frames(&tx, 1).unwrap() {
                assert_ne!(fr.seq, 0);
                assert!(b.position(fr.seq).is_some());
            }
            n += 1;
        }
        assert_eq!(n, 51usize.div_ceil(7));
        // A budget smaller than one request still sends one per batch.
        let mut q = Queue::new(&reqs, &skip);
        let mut n = 0;
        while q.fill(&mut tx, &mut b, 10, 100, &mut state, 1) {
            n += 1;
        }
        assert_eq!(n, 51);
        // Nothing to send; nothing left.
        let all = vec![true; 51];
        let mut q = Queue::new(&reqs, &all);
        assert!(!q.fill(&mut tx, &mut b, 10, 100, &mut state, 1));
        assert_eq!(Queue::new(&reqs, &skip).drain_rest().count(), 51);
    }
}
