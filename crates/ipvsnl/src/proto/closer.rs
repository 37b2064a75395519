//! How a batch asks for its end to be acknowledged: an ACK asked of its
//! last request, or, when that request may be answered with nothing at
//! all, a no-op after it that asks for the ACK instead (the closer).
//!
//! Netlink (`netlink_rcv_skb`) sends no reply whatever to a request whose
//! handler returns `EINTR`, not even the ACK asked for: that code means
//! "the answer comes some other way" (a dump that has started). One IPVS
//! handler returns it for another reason. Stopping a sync daemon
//! (`ip_vs_genl_set_daemon` → `ip_vs_genl_del_daemon` → `stop_sync_thread`)
//! passes on what `kthread_stop` returned, and a kernel thread that was
//! woken but never ran (the start, `start_sync_thread`, made it with
//! `kthread_run` moments before) exits from `kthread()` with `-EINTR`
//! without running its function. The stop is complete by then (the role's
//! state is cleared, its threads gone, its sockets released); only the
//! answer is missing. On Debian's 6.1 and 6.12 alike (the code is the
//! same), a stop sent straight after a start often goes so.
//!
//! The kernel works through a datagram's messages in order before the
//! send returns, so the closer's ACK, once read, says every message before
//! it was handled: a request that had an error to report reported it
//! first, and one that did not is done.

use ipvsnl_wire::netlink_packet_core::{NLMSG_NOOP, NLM_F_ACK, NLM_F_REQUEST};
use ipvsnl_wire::write::push_empty_message;

use crate::proto::state::State;

/// Offset of `nlmsg_flags` in a netlink header.
const FLAGS_AT: usize = 6;

/// Ends the batch encoded in `tx`, whose last request starts at
/// `last_start`: asks that request for its ACK, or, if it `may_go_unanswered`,
/// appends a no-op (numbered by `session`) that asks for it. Returns the
/// closer's number, if one was appended.
pub(crate) fn close_batch(
    tx: &mut Vec<u8>,
    last_start: usize,
    may_go_unanswered: bool,
    state: &mut State,
) -> Option<u32> {
    if !may_go_unanswered {
        ask_ack(tx, last_start);
        return None;
    }
    let seq = state.next_seq();
    push_empty_message(tx, NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, seq);
    Some(seq)
}

/// Sets `NLM_F_ACK` on the message at `start`.
fn ask_ack(tx: &mut [u8], start: usize) {
    if let Some(f) = tx.get_mut(start + FLAGS_AT..start + FLAGS_AT + 2) {
        f.copy_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::frame::{all_frames, Reply};
    use std::time::Duration;

    /// A request message of no payload, asking for nothing.
    fn one_request(tx: &mut Vec<u8>, seq: u32) {
        push_empty_message(tx, 0x23, NLM_F_REQUEST, seq);
    }

    #[test]
    fn the_last_request_asks_for_the_ack_unless_it_may_go_unanswered() {
        let mut state = State::new(Duration::from_secs(1));
        state.set_last_seq(9);
        let mut tx = Vec::new();
        one_request(&mut tx, 9);
        assert_eq!(close_batch(&mut tx, 0, false, &mut state), None);
        let f = all_frames(&tx, 0).unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].flags, NLM_F_REQUEST | NLM_F_ACK);
        assert_eq!(state.last_seq(), 9, "no number taken");

        let mut tx = Vec::new();
        one_request(&mut tx, 9);
        assert_eq!(close_batch(&mut tx, 0, true, &mut state), Some(10));
        let f = all_frames(&tx, 0).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].flags, NLM_F_REQUEST, "the request asks for nothing");
        assert_eq!((f[1].seq, f[1].flags), (10, NLM_F_REQUEST | NLM_F_ACK));
        assert_eq!(f[1].reply, Reply::Ignored, "a no-op");
        assert_eq!(state.last_seq(), 10);
    }
}
