//! Allocation-free writing of requests: netlink and generic-netlink
//! headers, attributes and nests appended to a caller's `Vec<u8>`, for
//! encoders that do not build an [`IpvsMessage`](crate::IpvsMessage) first.
//!
//! Attribute payloads are written by the owned attribute enums (their
//! [`Nla`] implementation), so widths and byte order stay decided in one
//! place; strings, which the enums own, go through [`push_str`].
//!
//! ```
//! use ipvsnl_wire::write::{begin_ipvs_message, begin_nest, end_message, end_nest, push_attr, push_str};
//! use ipvsnl_wire::{IpvsCommand, ServiceAttr, IPVS_CMD_ATTR_SERVICE, IPVS_SVC_ATTR_SCHED_NAME};
//!
//! let mut out = Vec::new();
//! let msg = begin_ipvs_message(&mut out, 0x23, 0x5, 1, IpvsCommand::NewService);
//! let nest = begin_nest(&mut out, IPVS_CMD_ATTR_SERVICE);
//! push_attr(&mut out, &ServiceAttr::AddressFamily(2));
//! push_attr(&mut out, &ServiceAttr::Fwmark(7));
//! push_str(&mut out, IPVS_SVC_ATTR_SCHED_NAME, "rr");
//! end_nest(&mut out, nest);
//! end_message(&mut out, msg);
//! assert_eq!(out.len(), 16 + 4 + 4 + 8 + 8 + 8);
//! assert_eq!(out[..4], (out.len() as u32).to_ne_bytes());
//! ```

use netlink_packet_core::{Nla, NLA_ALIGNTO, NLA_HEADER_SIZE};

use crate::bytes::{emit_string, string_len};
use crate::{IpvsCommand, IPVS_GENL_VERSION};

/// Size of `struct nlmsghdr`.
const NLMSG_HDRLEN: usize = 16;
/// Offset of `nlmsg_flags` in `struct nlmsghdr`.
const NLMSG_FLAGS_AT: usize = 6;

/// Where a message begins in the buffer; [`end_message`] writes its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageStart(usize);

impl MessageStart {
    /// The offset of the message's header in the buffer.
    #[inline]
    pub fn offset(self) -> usize {
        self.0
    }
}

/// Where a nest begins in the buffer; [`end_nest`] writes its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NestStart(usize);

/// Appends a netlink header (`struct nlmsghdr`, host order, port id 0)
/// whose length [`end_message`] fills in.
#[must_use = "a message must be ended with end_message"]
#[inline]
pub fn begin_message(out: &mut Vec<u8>, message_type: u16, flags: u16, seq: u32) -> MessageStart {
    let at = out.len();
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(&message_type.to_ne_bytes());
    out.extend_from_slice(&flags.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    MessageStart(at)
}

/// Appends the netlink and generic-netlink headers of an IPVS message of
/// family id `family`; the attributes follow.
#[must_use = "a message must be ended with end_message"]
#[inline]
pub fn begin_ipvs_message(
    out: &mut Vec<u8>,
    family: u16,
    flags: u16,
    seq: u32,
    command: IpvsCommand,
) -> MessageStart {
    let m = begin_message(out, family, flags, seq);
    out.extend_from_slice(&[command.into(), IPVS_GENL_VERSION, 0, 0]);
    m
}

/// Writes the length of the message begun at `m` (everything appended
/// since).
#[inline]
pub fn end_message(out: &mut [u8], m: MessageStart) {
    let len = u32::try_from(out.len() - m.0).unwrap_or(u32::MAX);
    out[m.0..m.0 + 4].copy_from_slice(&len.to_ne_bytes());
}

/// Replaces the flags of the message begun at `m`.
#[inline]
pub fn set_message_flags(out: &mut [u8], m: MessageStart, flags: u16) {
    let at = m.0 + NLMSG_FLAGS_AT;
    out[at..at + 2].copy_from_slice(&flags.to_ne_bytes());
}

/// A whole netlink message of no payload (e.g. `NLMSG_NOOP`).
#[inline]
pub fn push_empty_message(out: &mut Vec<u8>, message_type: u16, flags: u16, seq: u32) {
    let m = begin_message(out, message_type, flags, seq);
    debug_assert_eq!(out.len() - m.0, NLMSG_HDRLEN);
    end_message(out, m);
}

/// Appends one attribute, header and padding included, exactly as the
/// attribute emits itself inside a message (the `NLA_F_*` bits of its
/// number included).
#[inline(always)]
pub fn push_attr<A: Nla>(out: &mut Vec<u8>, attr: &A) {
    let len = attr.value_len();
    let padded = (len + NLA_ALIGNTO - 1) & !(NLA_ALIGNTO - 1);
    let mut small = [0u8; NLA_HEADER_SIZE + 16];
    let total = u16::try_from(NLA_HEADER_SIZE + len).unwrap_or(u16::MAX);
    small[..2].copy_from_slice(&total.to_ne_bytes());
    small[2..4].copy_from_slice(&attr.kind().to_ne_bytes());
    if len <= 16 {
        // The usual case, a small fixed-size value: one copy, no fill.
        attr.emit_value(&mut small[NLA_HEADER_SIZE..NLA_HEADER_SIZE + len]);
        out.extend_from_slice(&small[..NLA_HEADER_SIZE + padded]);
    } else {
        out.extend_from_slice(&small[..NLA_HEADER_SIZE]);
        let at = out.len();
        out.resize(at + padded, 0);
        attr.emit_value(&mut out[at..at + len]);
    }
}

/// Appends a NUL-terminated string attribute (a scheduler, persistence
/// engine or interface name), as the owned enums emit their strings.
#[inline]
pub fn push_str(out: &mut Vec<u8>, kind: u16, value: &str) {
    push_attr(out, &StrAttr(kind, value));
}

/// Appends a whole nest of attribute number `kind` holding `attrs`.
#[inline]
pub fn push_nest<A: Nla>(out: &mut Vec<u8>, kind: u16, attrs: &[A]) {
    let nest = begin_nest(out, kind);
    for a in attrs {
        push_attr(out, a);
    }
    end_nest(out, nest);
}

/// Starts a nest of attribute number `kind`.
#[must_use = "a nest must be ended with end_nest"]
#[inline]
pub fn begin_nest(out: &mut Vec<u8>, kind: u16) -> NestStart {
    let at = out.len();
    out.extend_from_slice(&0u16.to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    NestStart(at)
}

/// Writes the length of the nest begun at `n` (every attribute appended
/// since, each already padded).
#[inline]
pub fn end_nest(out: &mut [u8], n: NestStart) {
    let len = u16::try_from(out.len() - n.0).unwrap_or(u16::MAX);
    out[n.0..n.0 + 2].copy_from_slice(&len.to_ne_bytes());
}

/// A borrowed string attribute.
struct StrAttr<'a>(u16, &'a str);

impl Nla for StrAttr<'_> {
    #[inline]
    fn value_len(&self) -> usize {
        string_len(self.1)
    }

    #[inline]
    fn kind(&self) -> u16 {
        self.0
    }

    #[inline]
    fn emit_value(&self, buf: &mut [u8]) {
        emit_string(self.1, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nest::{emit_nest, nest_len};
    use crate::{ServiceAttr, IPVS_CMD_ATTR_SERVICE, IPVS_SVC_ATTR_PE_NAME};

    #[test]
    fn writes_what_the_owned_attributes_emit() {
        let attrs = vec![
            ServiceAttr::AddressFamily(10),
            ServiceAttr::Port(53),
            ServiceAttr::PersistenceEngine("sip".into()),
            ServiceAttr::Timeout(300),
        ];
        let mut want = vec![0; nest_len(&attrs)];
        emit_nest(&attrs, &mut want);
        let mut out = vec![0xee]; // offsets must not matter
        let nest = begin_nest(&mut out, IPVS_CMD_ATTR_SERVICE);
        push_attr(&mut out, &attrs[0]);
        push_attr(&mut out, &attrs[1]);
        push_str(&mut out, IPVS_SVC_ATTR_PE_NAME, "sip");
        push_attr(&mut out, &attrs[3]);
        end_nest(&mut out, nest);
        assert_eq!(out[1..3], (want.len() as u16 + 4).to_ne_bytes());
        assert_eq!(out[3..5], IPVS_CMD_ATTR_SERVICE.to_ne_bytes());
        assert_eq!(out[5..], want);
    }

    #[test]
    fn messages_carry_their_length_and_flags() {
        let mut out = vec![1, 2, 3];
        let m = begin_ipvs_message(&mut out, 0x25, 1, 9, IpvsCommand::Flush);
        end_message(&mut out, m);
        set_message_flags(&mut out, m, 5);
        assert_eq!(m.offset(), 3);
        assert_eq!(out[3..7], 20u32.to_ne_bytes());
        assert_eq!(out[7..9], 0x25u16.to_ne_bytes());
        assert_eq!(out[9..11], 5u16.to_ne_bytes());
        assert_eq!(out[11..15], 9u32.to_ne_bytes());
        assert_eq!(out[19..], [17, IPVS_GENL_VERSION, 0, 0]);
        let mut noop = Vec::new();
        push_empty_message(&mut noop, 1, 5, 3);
        assert_eq!(noop.len(), 16);
        assert_eq!(noop[..4], 16u32.to_ne_bytes());
    }
}
