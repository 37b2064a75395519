//! Fixed-size attributes written into a stack buffer, then appended to a
//! request in one copy: the service keys and destinations a sync or a
//! listing sends by the ten thousand, without building an attribute value
//! (and dropping it) for each field.
//!
//! The callers know their largest run at compile time: `N` is that size,
//! and the request encoder's tests write the largest of each kind.
//!
//! Measured (A/B under qemu icount, kernel 6.1, medians of 3 rounds): the
//! encoder written through the wire crate's `push_attr` with the owned
//! attribute enums instead (no stack buffers, no forced inlining) made
//! creating 10,000 x 5 through `Client::apply` take 1.197 s of guest time
//! instead of 1.096 s, user time 0.132 s instead of 0.032 s.

use ipvsnl_wire::netlink_packet_core::{NLA_ALIGNTO, NLA_HEADER_SIZE};

/// Attributes of known sizes, gathered in `N` bytes.
pub(crate) struct FixedAttrs<const N: usize> {
    buf: [u8; N],
    len: usize,
}

/// Where a nest's header was written in a [`FixedAttrs`].
pub(crate) struct FixedNest(usize);

impl<const N: usize> FixedAttrs<N> {
    /// None yet (padding is written as the zeroes the buffer starts with).
    #[inline(always)]
    pub(crate) fn new() -> Self {
        FixedAttrs {
            buf: [0; N],
            len: 0,
        }
    }

    /// Appends attribute `kind` of value `value`, padded to 4 bytes.
    #[inline(always)]
    pub(crate) fn put<const L: usize>(&mut self, kind: u16, value: [u8; L]) {
        let at = self.len;
        let padded = (NLA_HEADER_SIZE + L + NLA_ALIGNTO - 1) & !(NLA_ALIGNTO - 1);
        // Sized by the caller for its largest run (see the module).
        let slot = &mut self.buf[at..at + padded];
        // An attribute of at most 16 value bytes: its length fits a u16.
        slot[..2].copy_from_slice(&((NLA_HEADER_SIZE + L) as u16).to_ne_bytes());
        slot[2..4].copy_from_slice(&kind.to_ne_bytes());
        slot[4..4 + L].copy_from_slice(&value);
        self.len = at + padded;
    }

    /// Starts a nest of `kind`: the attributes put until
    /// [`FixedAttrs::end_nest`] are its value.
    #[inline(always)]
    pub(crate) fn begin_nest(&mut self, kind: u16) -> FixedNest {
        let at = self.len;
        self.buf[at + 2..at + 4].copy_from_slice(&kind.to_ne_bytes());
        self.len = at + NLA_HEADER_SIZE;
        FixedNest(at)
    }

    /// Writes the length of the nest begun at `n`.
    #[inline(always)]
    pub(crate) fn end_nest(&mut self, n: FixedNest) {
        let len = (self.len - n.0) as u16; // at most N, a few hundred bytes
        self.buf[n.0..n.0 + 2].copy_from_slice(&len.to_ne_bytes());
    }

    /// What was written.
    #[inline(always)]
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_padded_and_nests_measured() {
        let mut f = FixedAttrs::<32>::new();
        let n = f.begin_nest(7);
        f.put(1, [0xab_u8]);
        f.put(2, 0x0102_u16.to_be_bytes());
        f.end_nest(n);
        f.put(3, 5_u32.to_ne_bytes());
        let mut want = Vec::new();
        want.extend_from_slice(&20u16.to_ne_bytes());
        want.extend_from_slice(&7u16.to_ne_bytes());
        want.extend_from_slice(&5u16.to_ne_bytes());
        want.extend_from_slice(&1u16.to_ne_bytes());
        want.extend_from_slice(&[0xab, 0, 0, 0]);
        want.extend_from_slice(&6u16.to_ne_bytes());
        want.extend_from_slice(&2u16.to_ne_bytes());
        want.extend_from_slice(&[1, 2, 0, 0]);
        want.extend_from_slice(&8u16.to_ne_bytes());
        want.extend_from_slice(&3u16.to_ne_bytes());
        want.extend_from_slice(&5u32.to_ne_bytes());
        assert_eq!(f.as_bytes(), &want[..]);
    }
}
