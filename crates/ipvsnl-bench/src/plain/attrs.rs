//! Netlink attributes read and written by hand: the plain client's only
//! codec.

/// Length of `struct nlmsghdr`.
pub const NLMSG_HDRLEN: usize = 16;
/// Length of `struct genlmsghdr`.
pub const GENL_HDRLEN: usize = 4;
/// `NLA_TYPE_MASK`: the attribute type without the nested and byte-order flags.
pub const NLA_TYPE_MASK: u16 = 0x3fff;

/// Calls `f(type, payload)` for each attribute in `buf`.
#[inline]
pub fn each_attr(mut buf: &[u8], mut f: impl FnMut(u16, &[u8])) {
    while buf.len() >= 4 {
        let len = usize::from(u16::from_ne_bytes([buf[0], buf[1]]));
        if len < 4 || len > buf.len() {
            return;
        }
        f(
            u16::from_ne_bytes([buf[2], buf[3]]) & NLA_TYPE_MASK,
            &buf[4..len],
        );
        buf = &buf[((len + 3) & !3).min(buf.len())..];
    }
}

/// A host-order `u16` at the start of `p` (0 if too short).
#[inline]
pub fn get_u16(p: &[u8]) -> u16 {
    p.get(..2).map_or(0, |b| u16::from_ne_bytes([b[0], b[1]]))
}

/// A host-order `u32` at the start of `p` (0 if too short).
#[inline]
pub fn get_u32(p: &[u8]) -> u32 {
    p.get(..4)
        .map_or(0, |b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
}

/// A host-order `u64` at the start of `p` (0 if too short).
#[inline]
pub fn get_u64(p: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    match p.get(..8) {
        Some(s) => b.copy_from_slice(s),
        None => return 0,
    }
    u64::from_ne_bytes(b)
}

/// Up to 16 bytes of an address attribute.
#[inline]
pub fn get_addr(p: &[u8]) -> [u8; 16] {
    let mut a = [0u8; 16];
    let n = p.len().min(16);
    a[..n].copy_from_slice(&p[..n]);
    a
}

/// Appends one attribute, padded to 4 bytes.
#[inline]
pub fn put_attr(out: &mut Vec<u8>, kind: u16, payload: &[u8]) {
    out.extend_from_slice(&((4 + payload.len()) as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(payload);
    out.resize((out.len() + 3) & !3, 0);
}

/// Starts a nested attribute; [`end_nest`] writes its length.
#[inline]
pub fn begin_nest(out: &mut Vec<u8>, kind: u16) -> usize {
    let at = out.len();
    put_attr(out, kind, &[]);
    at
}

/// Writes the length of the nest begun at `at`.
#[inline]
pub fn end_nest(out: &mut [u8], at: usize) {
    let len = (out.len() - at) as u16;
    out[at..at + 2].copy_from_slice(&len.to_ne_bytes());
}

/// Appends a netlink and generic-netlink header (length filled by
/// [`end_message`]); returns where the message starts.
#[inline]
pub fn begin_message(
    out: &mut Vec<u8>,
    kind: u16,
    flags: u16,
    seq: u32,
    cmd: u8,
    version: u8,
) -> usize {
    let at = out.len();
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&flags.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(&[cmd, version, 0, 0]);
    at
}

/// Writes the length of the message begun at `at`.
#[inline]
pub fn end_message(out: &mut [u8], at: usize) {
    let len = (out.len() - at) as u32;
    out[at..at + 4].copy_from_slice(&len.to_ne_bytes());
}
