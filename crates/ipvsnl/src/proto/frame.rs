//! Framing: requests to bytes, received datagrams to replies.
//!
//! Nothing here touches a socket, so everything is tested on byte vectors
//! (an ACK as the kernel sends it to a socket with `NETLINK_CAP_ACK`, the
//! header of the request only: see the tests below). Crate-private; the
//! fuzz targets reach it through `proto::fuzzing` (`--cfg fuzzing`).

use ipvsnl_wire::netlink_packet_core::{
    ErrorBuffer, NetlinkMessage, NlasIterator, ParseableParametrized, NLMSG_DONE, NLMSG_ERROR,
    NLMSG_NOOP, NLMSG_OVERRUN,
};
use ipvsnl_wire::netlink_packet_generic::ctrl::nlas::GenlCtrlAttrs;
use ipvsnl_wire::netlink_packet_generic::ctrl::{GenlCtrl, GenlCtrlCmd};
use ipvsnl_wire::netlink_packet_generic::{GenlHeader, GenlMessage};
use ipvsnl_wire::IpvsMessage;

use crate::DecodeError;

/// `GENL_ID_CTRL`: the generic-netlink controller.
pub const GENL_ID_CTRL: u16 = 0x10;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const GENL_HDRLEN: usize = 4;

/// Appends one IPVS request to `out`.
pub fn push_request(out: &mut Vec<u8>, family: u16, seq: u32, flags: u16, msg: IpvsMessage) {
    let mut genl = GenlMessage::from_payload(msg);
    genl.set_resolved_family_id(family);
    push(out, NetlinkMessage::from(genl), seq, flags);
}

/// Appends a `CTRL_CMD_GETFAMILY` request for `name` to `out`.
pub fn push_get_family(out: &mut Vec<u8>, name: &str, seq: u32, flags: u16) {
    let genl = GenlMessage::from_payload(GenlCtrl {
        cmd: GenlCtrlCmd::GetFamily,
        nlas: vec![GenlCtrlAttrs::FamilyName(name.to_owned())],
    });
    push(out, NetlinkMessage::from(genl), seq, flags);
}

fn push<T>(out: &mut Vec<u8>, mut msg: NetlinkMessage<T>, seq: u32, flags: u16)
where
    T: ipvsnl_wire::netlink_packet_core::NetlinkSerializable,
{
    msg.header.flags = flags;
    msg.header.sequence_number = seq;
    msg.finalize();
    let start = out.len();
    out.resize(start + msg.buffer_len(), 0);
    msg.serialize(&mut out[start..]);
}

/// `NLM_F_DUMP_INTR`: the kernel's table changed while this dump was
/// taken, so the dump may be inconsistent.
pub const NLM_F_DUMP_INTR: u16 = 0x10;

/// What one netlink message of a reply datagram says.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reply<'a> {
    /// An IPVS message (a listed object or a get reply), still undecoded.
    Data {
        /// The generic-netlink command.
        command: u8,
        /// The attributes after the generic-netlink header.
        attrs: &'a [u8],
    },
    /// A positive acknowledgement.
    Ack,
    /// A refusal; the positive errno.
    Error(i32),
    /// The end of a dump, with the error the dump ended on (a positive
    /// errno; 0 when it ended well).
    Done(i32),
    /// The reply to a family lookup: the id.
    FamilyId(u16),
    /// Padding, overrun notices and anything else that carries no answer.
    Ignored,
}

/// One message of a datagram, with its header fields.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Frame<'a> {
    /// Sequence number it answers.
    pub seq: u32,
    /// Netlink flags (`NLM_F_MULTI` marks dump parts).
    pub flags: u16,
    /// The content.
    pub reply: Reply<'a>,
}

/// Splits a received datagram into frames, one at a time (nothing
/// allocated). `family` is the IPVS family id: messages of another type
/// that are not control messages are ignored. A malformed message is an
/// error, after which the iterator ends.
pub fn frames(datagram: &[u8], family: u16) -> Frames<'_> {
    Frames {
        datagram,
        offset: 0,
        family,
    }
}

/// The iterator of [`frames`].
#[derive(Debug)]
pub struct Frames<'a> {
    datagram: &'a [u8],
    offset: usize,
    family: u16,
}

impl<'a> Iterator for Frames<'a> {
    type Item = Result<Frame<'a>, DecodeError>;

    // Always inlined: a listing reads a frame per object, and under
    // emulation the call and its returned value through memory cost more
    // than the framing itself.
    // Measured with scripts/measure/decode-cost (valgrind, per service of a 10,000 x 5
    // listing): without the forced inlining of the decode path (here, in
    // `frame_at`, `read_stats` and the wire crate's readers), decoding a
    // service's five destinations takes 4,701 instructions instead of
    // 4,169, and the whole listing's share 5,924 instead of 4,855.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.offset >= self.datagram.len() {
            return None;
        }
        let offset = self.offset;
        let frame = frame_at(&self.datagram[offset..], offset, self.family);
        self.offset = match &frame {
            // Messages are 4-byte aligned; a zero length would loop forever.
            Ok((_, len)) => offset + ((len.max(&16) + 3) & !3),
            Err(_) => self.datagram.len(),
        };
        Some(frame.map(|(f, _)| f))
    }
}

/// How many data messages (not `NLMSG_DONE`, errors or ACKs) a datagram
/// holds, from their headers alone, up to a malformed one: to reserve room
/// for a reply's objects before decoding them (and none for the
/// `NLMSG_DONE` that ends a dump).
pub fn data_message_count(datagram: &[u8]) -> usize {
    let mut count = 0;
    let mut rest = datagram;
    while let Some(&[l0, l1, l2, l3, t0, t1]) = rest.get(..6) {
        let len = u32::from_ne_bytes([l0, l1, l2, l3]) as usize;
        if len < NLMSG_HDRLEN {
            break;
        }
        count += usize::from(u16::from_ne_bytes([t0, t1]) >= NLMSG_MIN_TYPE);
        rest = rest.get((len + 3) & !3..).unwrap_or_default();
    }
    count
}

/// The first message type that is not netlink's own (`NLMSG_MIN_TYPE`).
const NLMSG_MIN_TYPE: u16 = 0x10;

/// The size of `struct nlmsghdr`.
const NLMSG_HDRLEN: usize = 16;

/// The message at the start of `rest` (at byte `offset` of its datagram),
/// with its length. The header is read by hand (length, type, flags,
/// sequence number, all host order), and an IPVS message (the hundreds of
/// thousands of a listing) is told apart inline; control messages and
/// every error go out of line, so this stays small enough to inline.
#[inline(always)]
fn frame_at(rest: &[u8], offset: usize, family: u16) -> Result<(Frame<'_>, usize), DecodeError> {
    let Some(&[l0, l1, l2, l3, t0, t1, f0, f1, s0, s1, s2, s3, ..]) =
        rest.first_chunk::<NLMSG_HDRLEN>()
    else {
        return Err(short_header(offset, rest.len()));
    };
    let len = u32::from_ne_bytes([l0, l1, l2, l3]) as usize;
    let Some(payload) = rest.get(NLMSG_HDRLEN..len) else {
        return Err(bad_length(offset, len, rest.len()));
    };
    let kind = u16::from_ne_bytes([t0, t1]);
    let reply = if kind == family && !is_control(kind) {
        match *payload {
            [command, _, _, _, ..] => Reply::Data {
                command,
                attrs: &payload[GENL_HDRLEN..],
            },
            _ => return Err(short_message(offset, len)),
        }
    } else {
        other_reply(kind, payload, offset)?
    };
    let frame = Frame {
        seq: u32::from_ne_bytes([s0, s1, s2, s3]),
        flags: u16::from_ne_bytes([f0, f1]),
        reply,
    };
    Ok((frame, len))
}

/// The netlink control message types (below any family's id).
fn is_control(kind: u16) -> bool {
    matches!(kind, NLMSG_NOOP | NLMSG_ERROR | NLMSG_DONE | NLMSG_OVERRUN)
}

/// Any message but an IPVS one: acknowledgements and errors, the end of a
/// dump, a family lookup's reply, and what carries no answer.
#[inline(never)]
fn other_reply(kind: u16, payload: &[u8], offset: usize) -> Result<Reply<'_>, DecodeError> {
    Ok(match kind {
        NLMSG_ERROR => {
            let err =
                ErrorBuffer::new_checked(payload).map_err(|e| DecodeError::BadErrorMessage {
                    offset,
                    why: e.to_string().into(),
                })?;
            match err.code() {
                None => Reply::Ack,
                Some(code) => Reply::Error(code.get().saturating_abs()),
            }
        }
        NLMSG_DONE => Reply::Done(match *payload {
            [a, b, c, d, ..] => i32::from_ne_bytes([a, b, c, d]).saturating_abs(),
            // A DONE without its error word (never sent by a current
            // kernel): the dump ended, and nothing says it failed.
            _ => 0,
        }),
        GENL_ID_CTRL => family_id(&payload[GENL_HDRLEN.min(payload.len())..])
            .map(Reply::FamilyId)
            .unwrap_or(Reply::Ignored),
        _ => Reply::Ignored,
    })
}

#[cold]
fn short_header(offset: usize, left: usize) -> DecodeError {
    DecodeError::ShortHeader { offset, left }
}

#[cold]
fn bad_length(offset: usize, len: usize, left: usize) -> DecodeError {
    DecodeError::BadLength { offset, len, left }
}

#[cold]
fn short_message(offset: usize, len: usize) -> DecodeError {
    DecodeError::ShortMessage { offset, len }
}

/// Every frame of a datagram, or the first error (for tests and the fuzz
/// targets).
#[cfg(any(test, fuzzing))]
pub fn all_frames(datagram: &[u8], family: u16) -> Result<Vec<Frame<'_>>, DecodeError> {
    frames(datagram, family).collect()
}

fn family_id(attrs: &[u8]) -> Option<u16> {
    NlasIterator::new(attrs).flatten().find_map(|nla| {
        (nla.kind() == CTRL_ATTR_FAMILY_ID && nla.value().len() == 2)
            .then(|| u16::from_ne_bytes([nla.value()[0], nla.value()[1]]))
    })
}

/// Decodes the attributes of a data frame.
pub fn decode(command: u8, attrs: &[u8]) -> Result<IpvsMessage, DecodeError> {
    IpvsMessage::parse_with_param(
        attrs,
        GenlHeader {
            cmd: command,
            version: 1,
        },
    )
    .map_err(|e| DecodeError::Message {
        command,
        why: e.to_string().into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipvsnl_wire::netlink_packet_core::{NLM_F_ACK, NLM_F_REQUEST};
    use ipvsnl_wire::{IpvsAttr, IpvsCommand};

    fn ack(seq: u32, code: i32) -> Vec<u8> {
        // nlmsghdr + error code + the original header (CAP_ACK style: header only)
        let mut v = Vec::new();
        v.extend_from_slice(&36u32.to_ne_bytes());
        v.extend_from_slice(&NLMSG_ERROR.to_ne_bytes());
        v.extend_from_slice(&0u16.to_ne_bytes());
        v.extend_from_slice(&seq.to_ne_bytes());
        v.extend_from_slice(&1234u32.to_ne_bytes());
        v.extend_from_slice(&code.to_ne_bytes());
        v.extend_from_slice(&[0; 16]);
        v
    }

    #[test]
    fn requests_frame_back_to_themselves() {
        let mut out = Vec::new();
        let msg = IpvsMessage::new(IpvsCommand::SetConfig, vec![IpvsAttr::TimeoutUdp(5)]);
        push_request(&mut out, 0x22, 7, NLM_F_REQUEST | NLM_F_ACK, msg.clone());
        push_request(&mut out, 0x22, 8, NLM_F_REQUEST, msg.clone());
        let frames = all_frames(&out, 0x22).unwrap();
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].seq, 7);
        assert_eq!(frames[1].seq, 8);
        match frames[1].reply {
            Reply::Data { command, attrs } => assert_eq!(decode(command, attrs).unwrap(), msg),
            ref other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn data_messages_are_counted_and_control_ones_not() {
        let data = |seq: u32| {
            let mut m = Vec::new();
            m.extend_from_slice(&20u32.to_ne_bytes());
            m.extend_from_slice(&0x22u16.to_ne_bytes());
            m.extend_from_slice(&0u16.to_ne_bytes());
            m.extend_from_slice(&seq.to_ne_bytes());
            m.extend_from_slice(&[0; 8]);
            m
        };
        let mut d = data(1);
        d.extend(ack(2, -libc::EEXIST));
        d.extend(data(3));
        d.extend(ack(4, 0));
        assert_eq!(data_message_count(&d), 2);
        let yielded = frames(&d, 0x22)
            .filter(|f| matches!(f.as_ref().map(|f| &f.reply), Ok(Reply::Data { .. })))
            .count();
        assert_eq!(data_message_count(&d), yielded);
        assert_eq!(data_message_count(&[]), 0);
        assert_eq!(data_message_count(&ack(1, 0)), 0);
        // A zero length ends the count (the frame there is an error).
        let mut bad = data(1);
        bad.extend([0; 20]);
        bad.extend(data(2));
        assert_eq!(data_message_count(&bad), 1);
    }

    #[test]
    fn acks_errors_and_garbage() {
        let mut d = ack(1, 0);
        d.extend(ack(2, -libc::EEXIST));
        let f = all_frames(&d, 0x22).unwrap();
        assert_eq!(f[0].reply, Reply::Ack);
        assert_eq!(f[1].reply, Reply::Error(libc::EEXIST));
        // A length field that runs past the datagram is an error naming
        // where and how far, not a panic.
        let mut bad = ack(3, 0);
        bad[0] = 200;
        let mut two = ack(1, 0);
        two.extend(&bad);
        assert_eq!(
            all_frames(&two, 0x22).unwrap_err(),
            DecodeError::BadLength {
                offset: 36,
                len: 200,
                left: 36
            }
        );
        assert_eq!(
            all_frames(&[1, 2, 3], 0x22).unwrap_err(),
            DecodeError::ShortHeader { offset: 0, left: 3 }
        );
        // A truncated error payload.
        let mut short = ack(4, 0);
        short.truncate(18);
        short[0] = 18;
        let err = all_frames(&short, 0x22).unwrap_err();
        assert!(
            matches!(err, DecodeError::BadErrorMessage { offset: 0, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn an_ipvs_message_without_its_genl_header_is_named() {
        let mut d = Vec::new();
        d.extend_from_slice(&18u32.to_ne_bytes());
        d.extend_from_slice(&0x22u16.to_ne_bytes());
        d.extend_from_slice(&[0; 10]);
        d.extend_from_slice(&[1, 1]);
        assert_eq!(
            all_frames(&d, 0x22).unwrap_err(),
            DecodeError::ShortMessage { offset: 0, len: 18 }
        );
        // Attributes that do not parse name the command.
        let err = decode(1, &[8, 0, 1, 0, 1]).unwrap_err();
        assert!(
            matches!(err, DecodeError::Message { command: 1, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn family_lookup_round_trip() {
        let mut out = Vec::new();
        push_get_family(&mut out, "IPVS", 1, NLM_F_REQUEST);
        // Reply: ctrl message with FAMILY_ID=0x23.
        let mut reply = Vec::new();
        reply.extend_from_slice(&28u32.to_ne_bytes());
        reply.extend_from_slice(&GENL_ID_CTRL.to_ne_bytes());
        reply.extend_from_slice(&0u16.to_ne_bytes());
        reply.extend_from_slice(&1u32.to_ne_bytes());
        reply.extend_from_slice(&0u32.to_ne_bytes());
        reply.extend_from_slice(&[1, 2, 0, 0]);
        reply.extend_from_slice(&6u16.to_ne_bytes());
        reply.extend_from_slice(&1u16.to_ne_bytes());
        reply.extend_from_slice(&0x23u16.to_ne_bytes());
        reply.extend_from_slice(&[0, 0]);
        let f = all_frames(&reply, 0).unwrap();
        assert_eq!(f[0].reply, Reply::FamilyId(0x23));
        assert!(out.windows(5).any(|w| w == b"IPVS\0"));
    }
}
