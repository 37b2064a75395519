//! One-pass reading: a service or destination nest decoded into plain
//! values in a single walk, every known attribute width-checked as it is
//! met. This is what a listing of thousands of objects wants: no list of
//! owned attributes is built, and every attribute is looked at once.
//!
//! The same readers as the owned parse decide widths and byte order, and
//! the errors name the attribute. When a number repeats, the last one
//! counts (as when the owned attributes are folded into a value). Unknown
//! attributes are skipped. The counter nests are handed over unread, for
//! [`StatsValues::read`]: the kernel sends the same counters twice (32- and
//! 64-bit), and a reader wants one of them or neither. Nothing here allocates but an error's text, or panics.

use netlink_packet_core::{DecodeError, NlaBuffer, Parseable, NLA_HEADER_SIZE};

use crate::bytes::{address, array};
use crate::consts::*;
use crate::service::FlagsMask;
use crate::stats::{self, StatsField};
use crate::walk::{find_attr, try_walk};
use crate::{service, DestAttr};

/// The values of a counters nest (`IPVS_STATS_ATTR_*`), 32- or 64-bit,
/// each widened to `u64`.
///
/// ```
/// use ipvsnl_wire::{write::push_attr, StatsAttr, StatsField, StatsValues};
/// let mut nest = Vec::new();
/// push_attr(&mut nest, &StatsAttr::U32(StatsField::Conns, 7));
/// push_attr(&mut nest, &StatsAttr::U64(StatsField::InBytes, 1 << 40));
/// let v = StatsValues::read(&nest, "stats").unwrap();
/// assert_eq!(v.get(StatsField::Conns), Some(7));
/// assert_eq!(v.get(StatsField::InBytes), Some(1 << 40));
/// assert_eq!(v.get(StatsField::Cps), None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatsValues {
    values: [u64; StatsField::ALL.len()],
    /// Bit `i` set: `values[i]` was sent.
    present: u16,
}

impl StatsValues {
    /// Reads a counters nest named `what` in errors (e.g.
    /// `"IPVS_DEST_ATTR_STATS64"`).
    #[inline]
    pub fn read(nest: &[u8], what: &str) -> Result<Self, DecodeError> {
        match Self::read_as_sent(nest) {
            Some(v) => Ok(v),
            None => Self::read_checked(nest, what),
        }
    }

    /// The fastest path: the nest exactly as the kernel lays out its
    /// 64-bit counters, every field once, in number order, 8 bytes each
    /// (no padding attributes: none on machines with efficient unaligned
    /// access). Each header is compared whole; anything else is `None`.
    #[inline]
    fn read_as_sent(nest: &[u8]) -> Option<Self> {
        const N: usize = StatsField::ALL.len();
        const ATTR: usize = NLA_HEADER_SIZE + 8;
        let nest: &[u8; N * ATTR] = nest.try_into().ok()?;
        let mut values = [0u64; N];
        for (i, value) in values.iter_mut().enumerate() {
            let at = i * ATTR;
            // Length 12 and the field's number, in host order.
            let [l0, l1] = (ATTR as u16).to_ne_bytes();
            let [k0, k1] = (IPVS_STATS_ATTR_CONNS + i as u16).to_ne_bytes();
            let [h0, h1, h2, h3, v0, v1, v2, v3, v4, v5, v6, v7] =
                *nest[at..at + ATTR].first_chunk::<ATTR>()?;
            if [h0, h1, h2, h3] != [l0, l1, k0, k1] {
                return None;
            }
            *value = u64::from_ne_bytes([v0, v1, v2, v3, v4, v5, v6, v7]);
        }
        Some(StatsValues {
            values,
            present: (1 << N) - 1,
        })
    }

    /// Any other layout (the 32-bit nest, padding attributes, another
    /// order), with the owned parse's readers and errors.
    fn read_checked(nest: &[u8], what: &str) -> Result<Self, DecodeError> {
        let mut out = StatsValues::default();
        try_walk(nest, what, |kind, value| {
            if let Some(field) = StatsField::from_kind(kind) {
                let (_, v) = stats::read(field, value)?;
                let i = field.index();
                out.values[i] = v;
                out.present |= 1 << i;
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// One counter, if the kernel sent it.
    #[inline]
    pub fn get(&self, field: StatsField) -> Option<u64> {
        let i = field.index();
        (self.present & (1 << i) != 0).then_some(self.values[i])
    }
}

/// The owned parse's error for a destination attribute the fast readers
/// refused: the attribute is rebuilt and parsed the owned way, so the two
/// readings cannot disagree on what they say.
#[cold]
#[inline(never)]
fn dest_refusal(kind: u16, p: &[u8]) -> DecodeError {
    let mut attr = Vec::with_capacity(NLA_HEADER_SIZE + p.len());
    let len = u16::try_from(NLA_HEADER_SIZE + p.len()).unwrap_or(u16::MAX);
    attr.extend_from_slice(&len.to_ne_bytes());
    attr.extend_from_slice(&kind.to_ne_bytes());
    attr.extend_from_slice(p);
    match NlaBuffer::new_checked(&attr[..]).and_then(|nla| DestAttr::parse(&nla)) {
        Err(e) => e,
        Ok(_) => DecodeError::from(format!("invalid destination attribute {kind}")),
    }
}

/// Every value of a destination nest (`IPVS_CMD_ATTR_DEST`), read in one
/// pass; `None` for what the kernel did not send.
///
/// ```
/// use ipvsnl_wire::{write::push_attr, DestAttr, DestValues};
/// let mut nest = Vec::new();
/// push_attr(&mut nest, &DestAttr::Port(8080));
/// push_attr(&mut nest, &DestAttr::Weight(3));
/// let v = DestValues::read(&nest).unwrap();
/// assert_eq!((v.port, v.weight, v.address), (Some(8080), Some(3), None));
/// // A weight of two bytes is refused, and the error names it.
/// let bad = [6, 0, 4, 0, 1, 0, 0, 0];
/// let err = DestValues::read(&bad).unwrap_err();
/// assert!(err.to_string().contains("IPVS_DEST_ATTR_WEIGHT"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DestValues<'a> {
    /// `ADDR`, zero-padded to 16 bytes.
    pub address: Option<[u8; 16]>,
    /// `PORT`.
    pub port: Option<u16>,
    /// `FWD_METHOD`.
    pub forward_method: Option<u32>,
    /// `WEIGHT`.
    pub weight: Option<u32>,
    /// `U_THRESH`.
    pub upper_threshold: Option<u32>,
    /// `L_THRESH`.
    pub lower_threshold: Option<u32>,
    /// `ACTIVE_CONNS`.
    pub active_conns: Option<u32>,
    /// `INACT_CONNS`.
    pub inactive_conns: Option<u32>,
    /// `PERSIST_CONNS`.
    pub persistent_conns: Option<u32>,
    /// `ADDR_FAMILY` (absent or 0: the service's).
    pub address_family: Option<u16>,
    /// `TUN_TYPE`.
    pub tunnel_type: Option<u8>,
    /// `TUN_PORT`.
    pub tunnel_port: Option<u16>,
    /// `TUN_FLAGS`.
    pub tunnel_flags: Option<u16>,
    /// `STATS`: the 32-bit counters nest, unread.
    pub stats: Option<&'a [u8]>,
    /// `STATS64`: the 64-bit counters nest (kernel 4.1+), unread.
    pub stats64: Option<&'a [u8]>,
}

/// One attribute of a destination nest, decoded and width-checked: what
/// [`DestValues::visit`] hands over, one at a time, to a reader that puts
/// each value straight where it belongs (no intermediate record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DestValue<'a> {
    /// `ADDR`, zero-padded to 16 bytes.
    Address([u8; 16]),
    /// `PORT`.
    Port(u16),
    /// `FWD_METHOD`.
    ForwardMethod(u32),
    /// `WEIGHT`.
    Weight(u32),
    /// `U_THRESH`.
    UpperThreshold(u32),
    /// `L_THRESH`.
    LowerThreshold(u32),
    /// `ACTIVE_CONNS`.
    ActiveConns(u32),
    /// `INACT_CONNS`.
    InactiveConns(u32),
    /// `PERSIST_CONNS`.
    PersistentConns(u32),
    /// `ADDR_FAMILY`.
    AddressFamily(u16),
    /// `TUN_TYPE`.
    TunnelType(u8),
    /// `TUN_PORT`.
    TunnelPort(u16),
    /// `TUN_FLAGS`.
    TunnelFlags(u16),
    /// `STATS`: the 32-bit counters nest, unread.
    Stats(&'a [u8]),
    /// `STATS64`: the 64-bit counters nest, unread.
    Stats64(&'a [u8]),
}

impl<'a> DestValues<'a> {
    /// Reads a destination nest's payload.
    #[inline]
    pub fn read(nest: &'a [u8]) -> Result<Self, DecodeError> {
        let mut v = DestValues::default();
        Self::visit(nest, |value| match value {
            DestValue::Address(x) => v.address = Some(x),
            DestValue::Port(x) => v.port = Some(x),
            DestValue::ForwardMethod(x) => v.forward_method = Some(x),
            DestValue::Weight(x) => v.weight = Some(x),
            DestValue::UpperThreshold(x) => v.upper_threshold = Some(x),
            DestValue::LowerThreshold(x) => v.lower_threshold = Some(x),
            DestValue::ActiveConns(x) => v.active_conns = Some(x),
            DestValue::InactiveConns(x) => v.inactive_conns = Some(x),
            DestValue::PersistentConns(x) => v.persistent_conns = Some(x),
            DestValue::AddressFamily(x) => v.address_family = Some(x),
            DestValue::TunnelType(x) => v.tunnel_type = Some(x),
            DestValue::TunnelPort(x) => v.tunnel_port = Some(x),
            DestValue::TunnelFlags(x) => v.tunnel_flags = Some(x),
            DestValue::Stats(x) => v.stats = Some(x),
            DestValue::Stats64(x) => v.stats64 = Some(x),
        })?;
        Ok(v)
    }

    /// Walks a destination nest's payload once, handing each known
    /// attribute, decoded, to `each` in the order sent (unknown ones are
    /// skipped; a repeated one is handed over again). The first malformed
    /// attribute ends the walk with the owned parse's error.
    ///
    /// ```
    /// use ipvsnl_wire::{write::push_attr, DestAttr, DestValue, DestValues};
    /// let mut nest = Vec::new();
    /// push_attr(&mut nest, &DestAttr::Weight(3));
    /// let mut weight = 0;
    /// DestValues::visit(&nest, |v| {
    ///     if let DestValue::Weight(w) = v {
    ///         weight = w;
    ///     }
    /// })
    /// .unwrap();
    /// assert_eq!(weight, 3);
    /// ```
    #[inline(always)]
    pub fn visit(nest: &'a [u8], mut each: impl FnMut(DestValue<'a>)) -> Result<(), DecodeError> {
        try_walk(nest, "IPVS_CMD_ATTR_DEST", |kind, p| {
            // Widths checked without building an error; a refused one gets
            // the owned parse's error, out of line.
            let value = match kind {
                IPVS_DEST_ATTR_ADDR => address(p).map(DestValue::Address),
                IPVS_DEST_ATTR_PORT => array(p).map(|b| DestValue::Port(u16::from_be_bytes(b))),
                IPVS_DEST_ATTR_FWD_METHOD => {
                    array(p).map(|b| DestValue::ForwardMethod(u32::from_ne_bytes(b)))
                }
                IPVS_DEST_ATTR_WEIGHT => array(p).map(|b| DestValue::Weight(u32::from_ne_bytes(b))),
                IPVS_DEST_ATTR_U_THRESH => {
                    array(p).map(|b| DestValue::UpperThreshold(u32::from_ne_bytes(b)))
                }
                IPVS_DEST_ATTR_L_THRESH => {
                    array(p).map(|b| DestValue::LowerThreshold(u32::from_ne_bytes(b)))
                }
                IPVS_DEST_ATTR_ACTIVE_CONNS => {
                    array(p).map(|b| DestValue::ActiveConns(u32::from_ne_bytes(b)))
                }
                IPVS_DEST_ATTR_INACT_CONNS => {
                    array(p).map(|b| DestValue::InactiveConns(u32::from_ne_bytes(b)))
                }
                IPVS_DEST_ATTR_PERSIST_CONNS => {
                    array(p).map(|b| DestValue::PersistentConns(u32::from_ne_bytes(b)))
                }
                IPVS_DEST_ATTR_ADDR_FAMILY => {
                    array(p).map(|b| DestValue::AddressFamily(u16::from_ne_bytes(b)))
                }
                IPVS_DEST_ATTR_TUN_TYPE => array(p).map(|[b]| DestValue::TunnelType(b)),
                IPVS_DEST_ATTR_TUN_PORT => {
                    array(p).map(|b| DestValue::TunnelPort(u16::from_be_bytes(b)))
                }
                IPVS_DEST_ATTR_TUN_FLAGS => {
                    array(p).map(|b| DestValue::TunnelFlags(u16::from_ne_bytes(b)))
                }
                IPVS_DEST_ATTR_STATS => Some(DestValue::Stats(p)),
                IPVS_DEST_ATTR_STATS64 => Some(DestValue::Stats64(p)),
                _ => return Ok(()),
            };
            match value {
                Some(v) => {
                    each(v);
                    Ok(())
                }
                None => Err(dest_refusal(kind, p)),
            }
        })
    }

    /// The destination nest of a message's attribute bytes, if any.
    #[inline]
    pub fn find(attrs: &'a [u8]) -> Result<Option<Self>, DecodeError> {
        find_attr(attrs, IPVS_CMD_ATTR_DEST)?
            .map(Self::read)
            .transpose()
    }
}

/// Every value of a service nest (`IPVS_CMD_ATTR_SERVICE`), read in one
/// pass; the names are borrowed from the message.
///
/// ```
/// use ipvsnl_wire::{write::push_attr, ServiceAttr, ServiceValues};
/// let mut nest = Vec::new();
/// push_attr(&mut nest, &ServiceAttr::AddressFamily(2));
/// push_attr(&mut nest, &ServiceAttr::Scheduler("wlc".into()));
/// let v = ServiceValues::read(&nest).unwrap();
/// assert_eq!((v.address_family, v.scheduler, v.port), (Some(2), Some("wlc"), None));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServiceValues<'a> {
    /// `AF`.
    pub address_family: Option<u16>,
    /// `PROTOCOL`.
    pub protocol: Option<u16>,
    /// `ADDR`, zero-padded to 16 bytes.
    pub address: Option<[u8; 16]>,
    /// `PORT`.
    pub port: Option<u16>,
    /// `FWMARK`.
    pub fwmark: Option<u32>,
    /// `SCHED_NAME`, without its NUL.
    pub scheduler: Option<&'a str>,
    /// `FLAGS`: flags and mask.
    pub flags: Option<FlagsMask>,
    /// `TIMEOUT`.
    pub timeout: Option<u32>,
    /// `NETMASK`, its four raw bytes.
    pub netmask: Option<[u8; 4]>,
    /// `PE_NAME`, without its NUL.
    pub persistence_engine: Option<&'a str>,
    /// `STATS`: the 32-bit counters nest, unread.
    pub stats: Option<&'a [u8]>,
    /// `STATS64`: the 64-bit counters nest (kernel 4.1+), unread.
    pub stats64: Option<&'a [u8]>,
}

impl<'a> ServiceValues<'a> {
    /// Reads a service nest's payload.
    #[inline]
    pub fn read(nest: &'a [u8]) -> Result<Self, DecodeError> {
        use service::read as r;
        let mut v = ServiceValues::default();
        try_walk(nest, "IPVS_CMD_ATTR_SERVICE", |kind, p| {
            match kind {
                IPVS_SVC_ATTR_AF => v.address_family = Some(r::af(p)?),
                IPVS_SVC_ATTR_PROTOCOL => v.protocol = Some(r::protocol(p)?),
                IPVS_SVC_ATTR_ADDR => v.address = Some(r::addr(p)?),
                IPVS_SVC_ATTR_PORT => v.port = Some(r::port(p)?),
                IPVS_SVC_ATTR_FWMARK => v.fwmark = Some(r::fwmark(p)?),
                IPVS_SVC_ATTR_SCHED_NAME => v.scheduler = Some(r::sched_name(p)?),
                IPVS_SVC_ATTR_FLAGS => v.flags = Some(r::flags(p)?),
                IPVS_SVC_ATTR_TIMEOUT => v.timeout = Some(r::timeout(p)?),
                IPVS_SVC_ATTR_NETMASK => v.netmask = Some(r::netmask(p)?),
                IPVS_SVC_ATTR_PE_NAME => v.persistence_engine = Some(r::pe_name(p)?),
                IPVS_SVC_ATTR_STATS => v.stats = Some(p),
                IPVS_SVC_ATTR_STATS64 => v.stats64 = Some(p),
                _ => {}
            }
            Ok(())
        })?;
        Ok(v)
    }

    /// The service nest of a message's attribute bytes, if any.
    #[inline]
    pub fn find(attrs: &'a [u8]) -> Result<Option<Self>, DecodeError> {
        find_attr(attrs, IPVS_CMD_ATTR_SERVICE)?
            .map(Self::read)
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::push_attr;
    use crate::StatsAttr;

    /// A 64-bit counters nest as the kernel lays it out: fields 1..=10 in
    /// order, 8 bytes each; `order` permutes them.
    fn nest64(order: &[usize]) -> Vec<u8> {
        let mut nest = Vec::new();
        for &i in order {
            let f = StatsField::ALL[i];
            push_attr(&mut nest, &StatsAttr::U64(f, 1000 + i as u64));
        }
        nest
    }

    #[test]
    fn a_refused_destination_attribute_gets_the_owned_parse_error() {
        use crate::nest::parse_nest;
        // Every fixed-width destination attribute, three bytes long (no
        // attribute is); and an address of 17 bytes.
        for kind in IPVS_DEST_ATTR_ADDR..=IPVS_DEST_ATTR_TUN_FLAGS {
            if matches!(kind, IPVS_DEST_ATTR_STATS | IPVS_DEST_ATTR_STATS64) {
                continue;
            }
            let width = if kind == IPVS_DEST_ATTR_ADDR { 17 } else { 3 };
            let mut nest = Vec::new();
            nest.extend_from_slice(&(4 + width as u16).to_ne_bytes());
            nest.extend_from_slice(&kind.to_ne_bytes());
            nest.extend(std::iter::repeat_n(7u8, width));
            nest.resize((nest.len() + 3) & !3, 0);
            let ours = DestValues::read(&nest).unwrap_err().to_string();
            let owned = parse_nest::<DestAttr>(&nest, "IPVS_CMD_ATTR_DEST")
                .unwrap_err()
                .to_string();
            assert!(owned.contains(&ours), "kind {kind}: {ours:?} vs {owned:?}");
        }
    }

    #[test]
    fn counters_read_the_same_on_every_path() {
        let in_order: Vec<usize> = (0..10).collect();
        let kernel = nest64(&in_order);
        assert!(StatsValues::read_as_sent(&kernel).is_some());
        let fast = StatsValues::read(&kernel, "S").unwrap();
        assert_eq!(fast, StatsValues::read_checked(&kernel, "S").unwrap());
        for (i, f) in StatsField::ALL.into_iter().enumerate() {
            assert_eq!(fast.get(f), Some(1000 + i as u64));
        }
        // Another order: not the kernel's layout, the same values.
        let mut swapped = in_order.clone();
        swapped.swap(2, 7);
        let other = nest64(&swapped);
        assert!(StatsValues::read_as_sent(&other).is_none());
        assert_eq!(StatsValues::read(&other, "S").unwrap(), fast);
        // A padding attribute in front, then all ten: the same values.
        let mut padded = Vec::new();
        push_attr(&mut padded, &StatsAttr::Pad);
        padded.extend_from_slice(&kernel);
        assert!(StatsValues::read_as_sent(&padded).is_none());
        assert_eq!(StatsValues::read(&padded, "S").unwrap(), fast);
        // A 32-bit field on the well-formed path; a bad width refused by
        // the checked reading, with its name.
        let mut mixed = Vec::new();
        push_attr(&mut mixed, &StatsAttr::U32(StatsField::Conns, 7));
        assert_eq!(
            StatsValues::read(&mixed, "S")
                .unwrap()
                .get(StatsField::Conns),
            Some(7)
        );
        mixed[0] = 7; // CONNS with three bytes
        let err = StatsValues::read(&mixed[..7], "IPVS_DEST_ATTR_STATS").unwrap_err();
        assert!(err.to_string().contains("IPVS_STATS_ATTR_CONNS"), "{err}");
    }
}
