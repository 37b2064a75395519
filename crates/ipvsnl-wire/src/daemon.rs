//! Sync daemon attributes (`IPVS_DAEMON_ATTR_*`), nested in
//! `IPVS_CMD_ATTR_DAEMON`.

use netlink_packet_core::{DecodeError, DefaultNla, Nla, NlaBuffer, Parseable};

use crate::bytes::{addr16, emit_string, raw4, string, string_len, u16_ne, u32_ne, u8_of};
use crate::consts::*;

/// One attribute of a sync daemon nest.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DaemonAttr {
    /// `STATE` (1): 1 master, 2 backup.
    State(u32),
    /// `MCAST_IFN` (2): multicast interface name.
    Interface(String),
    /// `SYNC_ID` (3).
    SyncId(u32),
    /// `SYNC_MAXLEN` (4, kernel 4.3+): maximum sync message length.
    SyncMaxLen(u16),
    /// `MCAST_GROUP` (5, kernel 4.3+): IPv4 group, network order.
    McastGroup([u8; 4]),
    /// `MCAST_GROUP6` (6, kernel 4.3+): IPv6 group.
    McastGroup6([u8; 16]),
    /// `MCAST_PORT` (7, kernel 4.3+): UDP port in **host** order, unlike
    /// every other port of the family.
    McastPort(u16),
    /// `MCAST_TTL` (8, kernel 4.3+).
    McastTtl(u8),
    /// An attribute this crate does not know.
    Other(DefaultNla),
}

impl Nla for DaemonAttr {
    #[inline]
    fn value_len(&self) -> usize {
        use DaemonAttr::*;
        match self {
            State(_) | SyncId(_) | McastGroup(_) => 4,
            Interface(s) => string_len(s),
            SyncMaxLen(_) | McastPort(_) => 2,
            McastGroup6(_) => 16,
            McastTtl(_) => 1,
            Other(nla) => nla.value_len(),
        }
    }

    #[inline]
    fn kind(&self) -> u16 {
        use DaemonAttr::*;
        match self {
            State(_) => IPVS_DAEMON_ATTR_STATE,
            Interface(_) => IPVS_DAEMON_ATTR_MCAST_IFN,
            SyncId(_) => IPVS_DAEMON_ATTR_SYNC_ID,
            SyncMaxLen(_) => IPVS_DAEMON_ATTR_SYNC_MAXLEN,
            McastGroup(_) => IPVS_DAEMON_ATTR_MCAST_GROUP,
            McastGroup6(_) => IPVS_DAEMON_ATTR_MCAST_GROUP6,
            McastPort(_) => IPVS_DAEMON_ATTR_MCAST_PORT,
            McastTtl(_) => IPVS_DAEMON_ATTR_MCAST_TTL,
            Other(nla) => nla.kind(),
        }
    }

    #[inline]
    fn emit_value(&self, buf: &mut [u8]) {
        use DaemonAttr::*;
        match self {
            State(v) | SyncId(v) => buf.copy_from_slice(&v.to_ne_bytes()),
            Interface(s) => emit_string(s, buf),
            SyncMaxLen(v) | McastPort(v) => buf.copy_from_slice(&v.to_ne_bytes()),
            McastGroup(a) => buf.copy_from_slice(a),
            McastGroup6(a) => buf.copy_from_slice(a),
            McastTtl(v) => buf[0] = *v,
            Other(nla) => nla.emit_value(buf),
        }
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Parseable<NlaBuffer<&'a T>> for DaemonAttr {
    fn parse(buf: &NlaBuffer<&'a T>) -> Result<Self, DecodeError> {
        use DaemonAttr::*;
        let v = buf.value();
        Ok(match buf.kind() {
            IPVS_DAEMON_ATTR_STATE => State(u32_ne(v, "IPVS_DAEMON_ATTR_STATE")?),
            IPVS_DAEMON_ATTR_MCAST_IFN => Interface(string(v, "IPVS_DAEMON_ATTR_MCAST_IFN")?),
            IPVS_DAEMON_ATTR_SYNC_ID => SyncId(u32_ne(v, "IPVS_DAEMON_ATTR_SYNC_ID")?),
            IPVS_DAEMON_ATTR_SYNC_MAXLEN => SyncMaxLen(u16_ne(v, "IPVS_DAEMON_ATTR_SYNC_MAXLEN")?),
            IPVS_DAEMON_ATTR_MCAST_GROUP => McastGroup(raw4(v, "IPVS_DAEMON_ATTR_MCAST_GROUP")?),
            IPVS_DAEMON_ATTR_MCAST_GROUP6 => {
                McastGroup6(addr16(v, "IPVS_DAEMON_ATTR_MCAST_GROUP6")?)
            }
            IPVS_DAEMON_ATTR_MCAST_PORT => McastPort(u16_ne(v, "IPVS_DAEMON_ATTR_MCAST_PORT")?),
            IPVS_DAEMON_ATTR_MCAST_TTL => McastTtl(u8_of(v, "IPVS_DAEMON_ATTR_MCAST_TTL")?),
            _ => Other(DefaultNla::parse(buf)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nest::{emit_nest, nest_len, parse_nest};

    #[test]
    fn every_attribute_round_trips_and_port_is_host_order() {
        use DaemonAttr::*;
        let attrs = vec![
            State(2),
            Interface("eth1".into()),
            SyncId(9),
            SyncMaxLen(1400),
            McastGroup6([0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x81]),
            McastGroup([224, 0, 0, 81]),
            McastPort(9999),
            McastTtl(3),
        ];
        let mut out = vec![0; nest_len(&attrs)];
        emit_nest(&attrs, &mut out);
        let back: Vec<DaemonAttr> = parse_nest(&out, "DAEMON").unwrap();
        assert_eq!(back, attrs);
        // MCAST_PORT: header at 64, value at 68.
        let at = out.len() - 16 + 4;
        assert_eq!(&out[at..at + 2], &9999u16.to_ne_bytes());
    }
}
