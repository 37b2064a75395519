//! Zero-copy reading: a nest is walked once into the payloads of its
//! attributes, indexed by attribute number, and typed getters decode one
//! payload when asked, with the same readers (and the same errors) as the
//! owned attribute enums.
//!
//! The views never allocate (but for an error's text) and never panic.

use netlink_packet_core::{DecodeError, ErrorContext, NlasIterator};

/// Walks the attributes of `buf`, handing each one's number (without the
/// `NLA_F_*` flag bits) and payload to `each`. The walk is the owned
/// parse's ([`NlasIterator`]), so both accept and refuse the same bytes.
pub(crate) fn walk<'a>(
    buf: &'a [u8],
    what: &str,
    mut each: impl FnMut(u16, &'a [u8]),
) -> Result<(), DecodeError> {
    for nla in NlasIterator::new(buf) {
        let nla = nla.with_context(|| format!("malformed attribute in {what}"))?;
        let kind = nla.kind();
        let len = usize::from(nla.length());
        // new_checked guarantees 4 <= length <= the bytes left.
        if let Some(value) = nla.into_inner().get(4..len) {
            each(kind, value);
        }
    }
    Ok(())
}

/// The payload of the first top-level attribute `kind` in a message's
/// attribute bytes (what follows the generic-netlink header), e.g.
/// [`IPVS_CMD_ATTR_SERVICE`](crate::IPVS_CMD_ATTR_SERVICE). Every attribute
/// is checked, so malformed bytes anywhere are an error, as with the owned
/// parse.
///
/// ```
/// use ipvsnl_wire::{find_attr, IPVS_CMD_ATTR_DEST};
/// let attrs = [8, 0, 4, 0, 1, 0, 0, 0, 4, 0, 2, 0];
/// assert_eq!(find_attr(&attrs, IPVS_CMD_ATTR_DEST).unwrap(), Some(&[][..]));
/// assert!(find_attr(&attrs[..6], IPVS_CMD_ATTR_DEST).is_err());
/// ```
pub fn find_attr(attrs: &[u8], kind: u16) -> Result<Option<&[u8]>, DecodeError> {
    let mut found = None;
    walk(attrs, "IPVS message", |k, v| {
        if k == kind && found.is_none() {
            found = Some(v);
        }
    })?;
    Ok(found)
}

/// The payloads of one nest, by attribute number (`N` - 1 known numbers;
/// others are skipped). When a number repeats, the last one counts, as
/// when the owned attributes are folded into a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slots<'a, const N: usize>([Option<&'a [u8]>; N]);

impl<'a, const N: usize> Slots<'a, N> {
    /// Walks `nest` (named `what` in errors) once.
    pub(crate) fn parse(nest: &'a [u8], what: &str) -> Result<Self, DecodeError> {
        let mut slots = [None; N];
        walk(nest, what, |kind, value| {
            if let Some(slot) = slots.get_mut(usize::from(kind)) {
                *slot = Some(value);
            }
        })?;
        Ok(Slots(slots))
    }

    /// The raw payload of attribute `kind`, if present.
    pub(crate) fn raw(&self, kind: u16) -> Option<&'a [u8]> {
        self.0.get(usize::from(kind)).copied().flatten()
    }

    /// Attribute `kind` decoded by `read`, if present.
    pub(crate) fn get<T>(
        &self,
        kind: u16,
        read: impl FnOnce(&'a [u8]) -> Result<T, DecodeError>,
    ) -> Result<Option<T>, DecodeError> {
        self.raw(kind).map(read).transpose()
    }
}
