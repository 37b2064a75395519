//! The plain client's way of creating a table: requests packed into
//! datagrams of up to 64 KiB, one `sendmsg` each, an ACK asked for on each
//! datagram's last message only, and nothing read but those ACKs and the
//! refusals.

use std::io;

use ipvsnl::wire::netlink_packet_core::{NetlinkMessage, NLMSG_ERROR, NLM_F_ACK, NLM_F_REQUEST};
use ipvsnl::wire::netlink_packet_generic::GenlMessage;
use ipvsnl::Request;

use super::attrs::get_u32;

/// The most bytes of requests in one datagram.
pub const BATCH_BYTES: usize = 64 << 10;

/// Encoded datagrams: (bytes, sequence number of the last message).
#[derive(Debug, Default)]
pub struct Batches(pub Vec<(Vec<u8>, u32)>);

/// Packs messages into [`Batches`].
#[derive(Debug, Default)]
pub struct BatchBuilder {
    batches: Vec<(Vec<u8>, u32)>,
    current: Vec<u8>,
    last_start: usize,
    seq: u32,
    scratch: Vec<u8>,
}

impl BatchBuilder {
    /// Adds one message: `encode` appends it (flags `NLM_F_REQUEST`) to the
    /// buffer it is given, with the sequence number it is given.
    pub fn push(&mut self, encode: impl FnOnce(&mut Vec<u8>, u32)) {
        self.scratch.clear();
        encode(&mut self.scratch, self.seq + 1);
        if !self.current.is_empty() && self.current.len() + self.scratch.len() > BATCH_BYTES {
            self.close();
        }
        self.seq += 1;
        self.last_start = self.current.len();
        self.current.extend_from_slice(&self.scratch);
    }

    /// Asks for an ACK on the current datagram's last message (flags at
    /// bytes 6..8) and starts the next datagram.
    fn close(&mut self) {
        let flags = NLM_F_REQUEST | NLM_F_ACK;
        let at = self.last_start;
        self.current[at + 6..at + 8].copy_from_slice(&flags.to_ne_bytes());
        let full = std::mem::replace(&mut self.current, Vec::with_capacity(BATCH_BYTES));
        self.batches.push((full, self.seq));
    }

    /// The datagrams.
    pub fn finish(mut self) -> Batches {
        if !self.current.is_empty() {
            self.close();
        }
        Batches(self.batches)
    }
}

impl Batches {
    /// The library's requests, encoded through its wire types (for the
    /// in-process floor, encoded before the clock starts).
    pub fn encode(requests: &[Request], family: u16) -> Self {
        let mut b = BatchBuilder::default();
        for r in requests {
            b.push(|out, seq| {
                let mut genl = GenlMessage::from_payload(r.to_message());
                genl.set_resolved_family_id(family);
                let mut msg = NetlinkMessage::from(genl);
                msg.header.flags = NLM_F_REQUEST;
                msg.header.sequence_number = seq;
                msg.finalize();
                let at = out.len();
                out.resize(at + msg.buffer_len(), 0);
                msg.serialize(&mut out[at..]);
            });
        }
        b.finish()
    }

    /// Sends every datagram on `sock` and reads until each one's ACK;
    /// returns how many requests were refused.
    pub fn send(&self, sock: &netlink_sys::Socket) -> io::Result<usize> {
        let mut refused = 0;
        let mut buf = vec![0u8; 8192];
        for (bytes, last) in &self.0 {
            sock.send(bytes, 0)?;
            'batch: loop {
                let n = sock.recv(&mut &mut buf[..], 0)?;
                let mut at = 0;
                while at + 20 <= n {
                    let len = get_u32(&buf[at..]) as usize;
                    let kind = u16::from_ne_bytes([buf[at + 4], buf[at + 5]]);
                    let seq = get_u32(&buf[at + 8..]);
                    let code = get_u32(&buf[at + 16..]) as i32;
                    if kind == NLMSG_ERROR {
                        if code != 0 {
                            refused += 1;
                        }
                        if seq == *last {
                            break 'batch;
                        }
                    }
                    at += (len.max(16) + 3) & !3;
                }
            }
        }
        Ok(refused)
    }
}
