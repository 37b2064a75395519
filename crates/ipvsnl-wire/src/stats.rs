//! Counters and rates (`IPVS_STATS_ATTR_*`), nested in services and
//! destinations as `STATS` (mostly 32-bit) and `STATS64` (all 64-bit).

use netlink_packet_core::{DecodeError, DefaultNla, Nla, NlaBuffer, Parseable};

use crate::bytes::{u32_ne, u64_ne};
use crate::consts::*;

/// Which counter or rate a stats attribute carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StatsField {
    /// Connections scheduled (1).
    Conns,
    /// Incoming packets (2).
    InPkts,
    /// Outgoing packets (3).
    OutPkts,
    /// Incoming bytes (4).
    InBytes,
    /// Outgoing bytes (5).
    OutBytes,
    /// Connections per second (6).
    Cps,
    /// Incoming packets per second (7).
    InPps,
    /// Outgoing packets per second (8).
    OutPps,
    /// Incoming bytes per second (9).
    InBps,
    /// Outgoing bytes per second (10).
    OutBps,
}

impl StatsField {
    /// Every field, in attribute-number order.
    pub const ALL: [StatsField; 10] = [
        StatsField::Conns,
        StatsField::InPkts,
        StatsField::OutPkts,
        StatsField::InBytes,
        StatsField::OutBytes,
        StatsField::Cps,
        StatsField::InPps,
        StatsField::OutPps,
        StatsField::InBps,
        StatsField::OutBps,
    ];

    /// The attribute number (`IPVS_STATS_ATTR_*`).
    pub fn kind(self) -> u16 {
        match self {
            StatsField::Conns => IPVS_STATS_ATTR_CONNS,
            StatsField::InPkts => IPVS_STATS_ATTR_INPKTS,
            StatsField::OutPkts => IPVS_STATS_ATTR_OUTPKTS,
            StatsField::InBytes => IPVS_STATS_ATTR_INBYTES,
            StatsField::OutBytes => IPVS_STATS_ATTR_OUTBYTES,
            StatsField::Cps => IPVS_STATS_ATTR_CPS,
            StatsField::InPps => IPVS_STATS_ATTR_INPPS,
            StatsField::OutPps => IPVS_STATS_ATTR_OUTPPS,
            StatsField::InBps => IPVS_STATS_ATTR_INBPS,
            StatsField::OutBps => IPVS_STATS_ATTR_OUTBPS,
        }
    }

    #[inline]
    pub(crate) fn from_kind(kind: u16) -> Option<StatsField> {
        // The numbers run from CONNS (1) to OUTBPS (10), in `ALL`'s order.
        let at = usize::from(kind.checked_sub(IPVS_STATS_ATTR_CONNS)?);
        StatsField::ALL.get(at).copied()
    }

    /// The field's place in [`StatsField::ALL`].
    #[inline]
    pub(crate) fn index(self) -> usize {
        usize::from(self.kind() - IPVS_STATS_ATTR_CONNS)
    }

    /// The attribute's kernel name, for error messages.
    pub fn name(self) -> &'static str {
        match self {
            StatsField::Conns => "IPVS_STATS_ATTR_CONNS",
            StatsField::InPkts => "IPVS_STATS_ATTR_INPKTS",
            StatsField::OutPkts => "IPVS_STATS_ATTR_OUTPKTS",
            StatsField::InBytes => "IPVS_STATS_ATTR_INBYTES",
            StatsField::OutBytes => "IPVS_STATS_ATTR_OUTBYTES",
            StatsField::Cps => "IPVS_STATS_ATTR_CPS",
            StatsField::InPps => "IPVS_STATS_ATTR_INPPS",
            StatsField::OutPps => "IPVS_STATS_ATTR_OUTPPS",
            StatsField::InBps => "IPVS_STATS_ATTR_INBPS",
            StatsField::OutBps => "IPVS_STATS_ATTR_OUTBPS",
        }
    }
}

/// One attribute of a stats nest.
///
/// The kernel sends most fields as `u32` in `STATS` and as `u64` in
/// `STATS64`; the width is kept so that what was parsed emits back to the
/// same bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StatsAttr {
    /// A 32-bit counter or rate.
    U32(StatsField, u32),
    /// A 64-bit counter or rate.
    U64(StatsField, u64),
    /// Alignment padding (no payload).
    Pad,
    /// An attribute this crate does not know.
    Other(DefaultNla),
}

impl StatsAttr {
    /// The field and its value widened to 64 bits, if this is a counter.
    pub fn value(&self) -> Option<(StatsField, u64)> {
        match self {
            StatsAttr::U32(f, v) => Some((*f, u64::from(*v))),
            StatsAttr::U64(f, v) => Some((*f, *v)),
            _ => None,
        }
    }
}

impl Nla for StatsAttr {
    #[inline]
    fn value_len(&self) -> usize {
        match self {
            StatsAttr::U32(..) => 4,
            StatsAttr::U64(..) => 8,
            StatsAttr::Pad => 0,
            StatsAttr::Other(nla) => nla.value_len(),
        }
    }

    #[inline]
    fn kind(&self) -> u16 {
        match self {
            StatsAttr::U32(f, _) | StatsAttr::U64(f, _) => f.kind(),
            StatsAttr::Pad => IPVS_STATS_ATTR_PAD,
            StatsAttr::Other(nla) => nla.kind(),
        }
    }

    #[inline]
    fn emit_value(&self, buf: &mut [u8]) {
        match self {
            StatsAttr::U32(_, v) => buf.copy_from_slice(&v.to_ne_bytes()),
            StatsAttr::U64(_, v) => buf.copy_from_slice(&v.to_ne_bytes()),
            StatsAttr::Pad => {}
            StatsAttr::Other(nla) => nla.emit_value(buf),
        }
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Parseable<NlaBuffer<&'a T>> for StatsAttr {
    fn parse(buf: &NlaBuffer<&'a T>) -> Result<Self, DecodeError> {
        let value = buf.value();
        let kind = buf.kind();
        if kind == IPVS_STATS_ATTR_PAD {
            return Ok(StatsAttr::Pad);
        }
        Ok(match StatsField::from_kind(kind) {
            Some(f) => match read(f, value)? {
                (false, v) => StatsAttr::U32(f, v as u32),
                (true, v) => StatsAttr::U64(f, v),
            },
            None => StatsAttr::Other(DefaultNla::parse(buf)?),
        })
    }
}

/// The payload of a counter or rate, for the owned parse and the one-pass
/// values alike: whether it is 64-bit, and its value. The width is decided by the
/// payload: the same field is 32-bit in STATS and 64-bit in STATS64 (bytes
/// are 64-bit in both).
#[inline]
pub(crate) fn read(f: StatsField, value: &[u8]) -> Result<(bool, u64), DecodeError> {
    Ok(if value.len() == 4 {
        (false, u64::from(u32_ne(value, f.name())?))
    } else {
        (true, u64_ne(value, f.name())?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nest::{emit_nest, nest_len, parse_nest};

    #[test]
    fn widths_and_unknowns_round_trip() {
        let attrs = vec![
            StatsAttr::U32(StatsField::Conns, 7),
            StatsAttr::U64(StatsField::InBytes, 1 << 40),
            StatsAttr::Pad,
            StatsAttr::Other(DefaultNla::new(42, vec![1, 2, 3, 4])),
        ];
        let mut buf = vec![0; nest_len(&attrs)];
        emit_nest(&attrs, &mut buf);
        let back: Vec<StatsAttr> = parse_nest(&buf, "STATS").unwrap();
        assert_eq!(back, attrs);
        assert_eq!(back[1].value(), Some((StatsField::InBytes, 1 << 40)));
    }

    #[test]
    fn a_bad_width_names_the_field() {
        // CONNS with a 3-byte payload.
        let bytes = [7, 0, 1, 0, 1, 2, 3, 0];
        let err = parse_nest::<StatsAttr>(&bytes, "IPVS_SVC_ATTR_STATS").unwrap_err();
        let text = format!("{err:?}");
        assert!(text.contains("IPVS_STATS_ATTR_CONNS"), "{text}");
    }

    #[test]
    fn field_numbers_match_the_uapi() {
        assert_eq!(StatsField::Conns.kind(), 1);
        assert_eq!(StatsField::OutBps.kind(), 10);
        for f in StatsField::ALL {
            assert_eq!(StatsField::from_kind(f.kind()), Some(f));
        }
        assert_eq!(StatsField::from_kind(0), None);
    }
}
