//! Walking a nest: the attributes of a payload handed over one by one, with
//! the owned parse's bounds checks and errors, and the first top-level
//! attribute of a number found ([`find_attr`]). The one-pass values are
//! built on it.
//!
//! The walk never allocates (but for an error's text) and never panics.

use netlink_packet_core::{
    DecodeError, ErrorContext, NlasIterator, NLA_ALIGNTO, NLA_HEADER_SIZE, NLA_TYPE_MASK,
};

/// Walks the attributes of `buf`, handing each one's number (without the
/// `NLA_F_*` flag bits) and payload to `each`. It accepts and refuses the
/// same bytes as the owned parse ([`NlasIterator`]): an attribute shorter
/// than its header, or longer than what is left, is an error.
#[inline]
pub(crate) fn walk<'a>(
    buf: &'a [u8],
    what: &str,
    mut each: impl FnMut(u16, &'a [u8]),
) -> Result<(), DecodeError> {
    try_walk(buf, what, |kind, value| {
        each(kind, value);
        Ok(())
    })
}

/// [`walk`] with a callback that can refuse a payload: its error ends the
/// walk and is returned as is.
#[inline]
pub(crate) fn try_walk<'a>(
    buf: &'a [u8],
    what: &str,
    mut each: impl FnMut(u16, &'a [u8]) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let mut rest = buf;
    while !rest.is_empty() {
        let (len, kind) = match rest {
            [l0, l1, k0, k1, ..] => (
                usize::from(u16::from_ne_bytes([*l0, *l1])),
                u16::from_ne_bytes([*k0, *k1]) & NLA_TYPE_MASK,
            ),
            _ => (0, 0),
        };
        let Some(value) = rest.get(NLA_HEADER_SIZE..len) else {
            return malformed(rest, what);
        };
        each(kind, value)?;
        rest = rest
            .get((len + NLA_ALIGNTO - 1) & !(NLA_ALIGNTO - 1)..)
            .unwrap_or_default();
    }
    Ok(())
}

/// The owned parse's error for the malformed attribute at the start of
/// `rest`, word for word, in `what` (always an error). Out of line: the
/// walk it is built for is inlined into every reader.
#[cold]
#[inline(never)]
fn malformed(rest: &[u8], what: &str) -> Result<(), DecodeError> {
    let err = NlasIterator::new(rest)
        .find_map(Result::err)
        .unwrap_or_else(|| DecodeError::from("malformed attribute"));
    Err(err).with_context(|| format!("malformed attribute in {what}"))
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
#[inline]
pub fn find_attr(attrs: &[u8], kind: u16) -> Result<Option<&[u8]>, DecodeError> {
    let mut found = None;
    walk(attrs, "IPVS message", |k, v| {
        if k == kind && found.is_none() {
            found = Some(v);
        }
    })?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk and the owned parse's iterator see the same attributes and
    /// refuse the same bytes, with the same error.
    #[test]
    fn walk_agrees_with_the_nla_iterator() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..50_000 {
            let len = (next() % 40) as usize;
            let mut buf: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            // Plausible lengths now and then, so that walks get far.
            for at in (0..len).step_by(8) {
                if next() % 2 == 0 {
                    buf[at] = (4 + next() % 8) as u8;
                    if at + 1 < len {
                        buf[at + 1] = 0;
                    }
                }
            }
            let mut seen = Vec::new();
            let walked = walk(&buf, "X", |k, v| seen.push((k, v.to_vec())));
            let mut want = Vec::new();
            let mut failed = None;
            for nla in NlasIterator::new(&buf[..]) {
                match nla {
                    Ok(nla) => want.push((nla.kind(), nla.value().to_vec())),
                    Err(e) => failed = Some(e.context("malformed attribute in X").to_string()),
                }
            }
            assert_eq!(walked.map_err(|e| e.to_string()).err(), failed, "{buf:?}");
            assert_eq!(seen, want, "{buf:?}");
        }
    }
}
