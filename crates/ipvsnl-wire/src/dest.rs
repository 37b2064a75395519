//! Destination (real server) attributes (`IPVS_DEST_ATTR_*`), nested in
//! `IPVS_CMD_ATTR_DEST`.

use netlink_packet_core::{DecodeError, DefaultNla, Nla, NlaBuffer, Parseable};

use crate::bytes::{addr16, u16_be, u16_ne, u32_ne, u8_of};
use crate::nest::{emit_nest, nest_len, parse_nest};
use crate::StatsAttr;

/// One attribute of a destination nest.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DestAttr {
    /// `ADDR` (1): real server address, network order, zero-padded to 16.
    Address([u8; 16]),
    /// `PORT` (2): real server port.
    Port(u16),
    /// `FWD_METHOD` (3): `IP_VS_CONN_F_*` forwarding method, host order.
    ForwardMethod(u32),
    /// `WEIGHT` (4): the kernel reads it as a signed int.
    Weight(u32),
    /// `U_THRESH` (5): upper connection threshold, 0 for none.
    UpperThreshold(u32),
    /// `L_THRESH` (6): lower connection threshold.
    LowerThreshold(u32),
    /// `ACTIVE_CONNS` (7, output only).
    ActiveConns(u32),
    /// `INACT_CONNS` (8, output only).
    InactiveConns(u32),
    /// `PERSIST_CONNS` (9, output only).
    PersistentConns(u32),
    /// `STATS` (10, output only).
    Stats(Vec<StatsAttr>),
    /// `ADDR_FAMILY` (11, kernel 3.18+): absent or 0 means the service's.
    AddressFamily(u16),
    /// `STATS64` (12, output only, kernel 4.1+).
    Stats64(Vec<StatsAttr>),
    /// `TUN_TYPE` (13, kernel 5.2+): 0 ipip, 1 gue, 2 gre.
    TunnelType(u8),
    /// `TUN_PORT` (14, kernel 5.2+): GUE port.
    TunnelPort(u16),
    /// `TUN_FLAGS` (15, kernel 5.3+): checksum flags, host order.
    TunnelFlags(u16),
    /// An attribute this crate does not know.
    Other(DefaultNla),
}

impl Nla for DestAttr {
    fn value_len(&self) -> usize {
        use DestAttr::*;
        match self {
            Address(_) => 16,
            Port(_) | AddressFamily(_) | TunnelPort(_) | TunnelFlags(_) => 2,
            TunnelType(_) => 1,
            ForwardMethod(_) | Weight(_) | UpperThreshold(_) | LowerThreshold(_)
            | ActiveConns(_) | InactiveConns(_) | PersistentConns(_) => 4,
            Stats(a) | Stats64(a) => nest_len(a),
            Other(nla) => nla.value_len(),
        }
    }

    fn kind(&self) -> u16 {
        use DestAttr::*;
        match self {
            Address(_) => 1,
            Port(_) => 2,
            ForwardMethod(_) => 3,
            Weight(_) => 4,
            UpperThreshold(_) => 5,
            LowerThreshold(_) => 6,
            ActiveConns(_) => 7,
            InactiveConns(_) => 8,
            PersistentConns(_) => 9,
            Stats(_) => 10,
            AddressFamily(_) => 11,
            Stats64(_) => 12,
            TunnelType(_) => 13,
            TunnelPort(_) => 14,
            TunnelFlags(_) => 15,
            Other(nla) => nla.kind(),
        }
    }

    fn emit_value(&self, buf: &mut [u8]) {
        use DestAttr::*;
        match self {
            Address(a) => buf.copy_from_slice(a),
            Port(v) | TunnelPort(v) => buf.copy_from_slice(&v.to_be_bytes()),
            AddressFamily(v) | TunnelFlags(v) => buf.copy_from_slice(&v.to_ne_bytes()),
            TunnelType(v) => buf[0] = *v,
            ForwardMethod(v) | Weight(v) | UpperThreshold(v) | LowerThreshold(v)
            | ActiveConns(v) | InactiveConns(v) | PersistentConns(v) => {
                buf.copy_from_slice(&v.to_ne_bytes())
            }
            Stats(a) | Stats64(a) => emit_nest(a, buf),
            Other(nla) => nla.emit_value(buf),
        }
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Parseable<NlaBuffer<&'a T>> for DestAttr {
    fn parse(buf: &NlaBuffer<&'a T>) -> Result<Self, DecodeError> {
        use DestAttr::*;
        let v = buf.value();
        Ok(match buf.kind() {
            1 => Address(addr16(v, "IPVS_DEST_ATTR_ADDR")?),
            2 => Port(u16_be(v, "IPVS_DEST_ATTR_PORT")?),
            3 => ForwardMethod(u32_ne(v, "IPVS_DEST_ATTR_FWD_METHOD")?),
            4 => Weight(u32_ne(v, "IPVS_DEST_ATTR_WEIGHT")?),
            5 => UpperThreshold(u32_ne(v, "IPVS_DEST_ATTR_U_THRESH")?),
            6 => LowerThreshold(u32_ne(v, "IPVS_DEST_ATTR_L_THRESH")?),
            7 => ActiveConns(u32_ne(v, "IPVS_DEST_ATTR_ACTIVE_CONNS")?),
            8 => InactiveConns(u32_ne(v, "IPVS_DEST_ATTR_INACT_CONNS")?),
            9 => PersistentConns(u32_ne(v, "IPVS_DEST_ATTR_PERSIST_CONNS")?),
            10 => Stats(parse_nest(v, "IPVS_DEST_ATTR_STATS")?),
            11 => AddressFamily(u16_ne(v, "IPVS_DEST_ATTR_ADDR_FAMILY")?),
            12 => Stats64(parse_nest(v, "IPVS_DEST_ATTR_STATS64")?),
            13 => TunnelType(u8_of(v, "IPVS_DEST_ATTR_TUN_TYPE")?),
            14 => TunnelPort(u16_be(v, "IPVS_DEST_ATTR_TUN_PORT")?),
            15 => TunnelFlags(u16_ne(v, "IPVS_DEST_ATTR_TUN_FLAGS")?),
            _ => Other(DefaultNla::parse(buf)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_attribute_round_trips() {
        use DestAttr::*;
        let mut addr = [0; 16];
        addr[0] = 0x20;
        let attrs = vec![
            AddressFamily(10),
            Address(addr),
            Port(8443),
            ForwardMethod(2),
            Weight(1),
            TunnelType(1),
            TunnelPort(6080),
            TunnelFlags(2),
            UpperThreshold(100),
            LowerThreshold(10),
            ActiveConns(3),
            InactiveConns(4),
            PersistentConns(5),
            Stats(vec![]),
            Stats64(vec![]),
            Other(DefaultNla::new(200, vec![1])),
        ];
        let mut out = vec![0; nest_len(&attrs)];
        emit_nest(&attrs, &mut out);
        let back: Vec<DestAttr> = parse_nest(&out, "DEST").unwrap();
        assert_eq!(back, attrs);
    }

    #[test]
    fn ports_are_big_endian_and_tunnel_flags_host_order() {
        let attrs = vec![DestAttr::TunnelPort(6080), DestAttr::TunnelFlags(2)];
        let mut out = vec![0; nest_len(&attrs)];
        emit_nest(&attrs, &mut out);
        assert_eq!(&out[4..6], &[0x17, 0xc0]);
        assert_eq!(&out[12..14], &2u16.to_ne_bytes());
    }
}
