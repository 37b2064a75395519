//! The messages of a datagram a client sent, as the kernel's
//! `netlink_rcv_skb` walks them.

use ipvsnl_wire::netlink_packet_core::NLM_F_DUMP;

/// One message of a datagram.
pub(crate) struct Message<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) kind: u16,
    pub(crate) flags: u16,
    pub(crate) seq: u32,
}

/// The messages of a datagram, as `netlink_rcv_skb` walks them (it stops
/// at the first whose length does not fit).
pub(crate) struct Messages<'a>(pub(crate) &'a [u8]);

impl<'a> Iterator for Messages<'a> {
    type Item = Message<'a>;

    fn next(&mut self) -> Option<Message<'a>> {
        let rest = self.0;
        if rest.len() < 16 {
            return None;
        }
        let len = u32::from_ne_bytes(rest[..4].try_into().unwrap_or_default()) as usize;
        if len < 16 || len > rest.len() {
            self.0 = &[];
            return None;
        }
        self.0 = rest.get((len + 3) & !3..).unwrap_or_default();
        Some(Message {
            bytes: &rest[..len],
            kind: u16::from_ne_bytes([rest[4], rest[5]]),
            flags: u16::from_ne_bytes([rest[6], rest[7]]),
            seq: u32::from_ne_bytes(rest[8..12].try_into().unwrap_or_default()),
        })
    }
}

impl Message<'_> {
    /// Whether it asks for a dump.
    pub(crate) fn is_dump(&self) -> bool {
        self.flags & NLM_F_DUMP == NLM_F_DUMP
    }

    /// Its generic-netlink command.
    pub(crate) fn command(&self) -> u8 {
        self.bytes.get(16).copied().unwrap_or(0)
    }

    /// Its attributes (after the generic-netlink header).
    pub(crate) fn attrs(&self) -> &[u8] {
        self.bytes.get(20..).unwrap_or_default()
    }
}
