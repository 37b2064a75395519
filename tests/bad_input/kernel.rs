//! A scripted kernel for the apply machine, without a socket: it answers a
//! family lookup with [`FAMILY`] and every message that asks for an ACK
//! with one, and keeps every transmitted datagram, so a test can count the
//! IPVS messages that would have reached the kernel and read them back.

use std::collections::VecDeque;
use std::time::Duration;

use ipvsnl::proto::{Input, Limits, Machine, Outcome, Poll, Session};
use ipvsnl::Request;
use ipvsnl_wire::netlink_packet_core::ParseableParametrized;
use ipvsnl_wire::netlink_packet_generic::GenlHeader;
use ipvsnl_wire::IpvsMessage;

/// The IPVS family id the scripted kernel hands out.
pub const FAMILY: u16 = 0x23;
const GENL_ID_CTRL: u16 = 0x10;
const NLMSG_ERROR: u16 = 2;
const NLM_F_ACK: u16 = 4;

/// What one apply sent: every datagram, and every outcome reported.
#[derive(Debug, Default)]
pub struct Sent {
    /// The datagrams, in order.
    pub datagrams: Vec<Vec<u8>>,
    /// (index, outcome) as the machine reported them.
    pub outcomes: Vec<(usize, Outcome)>,
}

impl Sent {
    /// The IPVS requests of every datagram, decoded (family lookups are
    /// not counted).
    pub fn messages(&self) -> Vec<IpvsMessage> {
        let mut out = Vec::new();
        for d in &self.datagrams {
            for (kind, payload) in split(d) {
                if kind != FAMILY {
                    continue;
                }
                let [cmd, version, _, _, ref attrs @ ..] = *payload else {
                    panic!("a sent IPVS message has its generic-netlink header");
                };
                let header = GenlHeader { cmd, version };
                let m = IpvsMessage::parse_with_param(attrs, header);
                out.push(m.expect("a sent request decodes"));
            }
        }
        out
    }
}

/// The (type, payload) of each netlink message of a sent datagram.
fn split(datagram: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    let mut rest = datagram;
    while let Some(&[l0, l1, l2, l3, t0, t1, ..]) = rest.get(..16) {
        let len = u32::from_ne_bytes([l0, l1, l2, l3]) as usize;
        let payload = rest.get(16..len).expect("a sent message's length fits");
        out.push((u16::from_ne_bytes([t0, t1]), payload));
        rest = rest.get((len + 3) & !3..).unwrap_or_default();
    }
    out
}

/// A netlink message of these header fields and payload.
fn message(out: &mut Vec<u8>, kind: u16, seq: u32, payload: &[u8]) {
    out.extend_from_slice(&(16 + payload.len() as u32).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&0u16.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(payload);
    while out.len() % 4 != 0 {
        out.push(0);
    }
}

/// The kernel's answers to one transmitted datagram.
fn answers(datagram: &[u8], replies: &mut VecDeque<Vec<u8>>) {
    let mut rest = datagram;
    while rest.len() >= 16 {
        let len = u32::from_ne_bytes(rest[0..4].try_into().unwrap()) as usize;
        let kind = u16::from_ne_bytes([rest[4], rest[5]]);
        let flags = u16::from_ne_bytes([rest[6], rest[7]]);
        let seq = u32::from_ne_bytes(rest[8..12].try_into().unwrap());
        if kind == GENL_ID_CTRL {
            // CTRL_CMD_NEWFAMILY, version 2, CTRL_ATTR_FAMILY_ID.
            let mut p = vec![1, 2, 0, 0, 6, 0, 1, 0];
            p.extend_from_slice(&FAMILY.to_ne_bytes());
            p.extend_from_slice(&[0, 0]);
            let mut reply = Vec::new();
            message(&mut reply, GENL_ID_CTRL, seq, &p);
            replies.push_back(reply);
        }
        if flags & NLM_F_ACK != 0 {
            // An ACK as to a NETLINK_CAP_ACK socket: code 0, the header.
            let mut p = 0i32.to_ne_bytes().to_vec();
            p.extend_from_slice(&rest[..16]);
            let mut reply = Vec::new();
            message(&mut reply, NLMSG_ERROR, seq, &p);
            replies.push_back(reply);
        }
        rest = &rest[((len.max(16) + 3) & !3).min(rest.len())..];
    }
}

/// Applies `requests`, those that fail `Request::validate` skipped (as
/// `Client::apply` does), against the scripted kernel.
pub fn apply_validated(requests: &[Request]) -> Sent {
    let skip: Vec<bool> = requests.iter().map(|r| r.validate().is_err()).collect();
    let mut sent = Sent::default();
    let mut outcomes = Vec::new();
    let mut session = Session::new(Duration::from_secs(1));
    let mut sink = |i: usize, o: Outcome| outcomes.push((i, o));
    let mut m = session.apply(requests, &skip, Limits::new(4096, 16), &mut sink);
    let mut replies = VecDeque::new();
    for _ in 0..1_000_000 {
        match m.poll() {
            Poll::Transmit(bytes) => {
                let bytes = bytes.to_vec();
                m.handle(Input::Sent);
                answers(&bytes, &mut replies);
                sent.datagrams.push(bytes);
            }
            Poll::Receive(_) => match replies.pop_front() {
                Some(d) => m.handle(Input::Datagram(&d)),
                None => panic!("the machine waits for a reply the kernel would not send"),
            },
            Poll::Finished => break,
            _ => panic!("a new kind of poll"),
        }
    }
    drop(m);
    sent.outcomes = outcomes;
    sent
}
