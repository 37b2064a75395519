//! Top-level attributes of an IPVS message (`IPVS_CMD_ATTR_*`, and the
//! `IPVS_INFO_ATTR_*` that replace them in a `GET_INFO` reply).

use netlink_packet_core::{DecodeError, DefaultNla, Nla, NlaBuffer, Parseable};

use crate::bytes::u32_ne;
use crate::consts::*;
use crate::nest::{emit_nest, nest_len, parse_nest};
use crate::{DaemonAttr, DestAttr, IpvsCommand, ServiceAttr};

/// One top-level attribute of an IPVS message.
///
/// The numbering depends on the command: in a [`IpvsCommand::SetInfo`]
/// message (the reply to `GET_INFO`) attributes 1 and 2 are the
/// `IPVS_INFO_ATTR_*`, elsewhere they are the service and destination
/// nests. [`IpvsAttr::parse_for`] takes the command for that reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IpvsAttr {
    /// `SERVICE` (1).
    Service(Vec<ServiceAttr>),
    /// `DEST` (2).
    Dest(Vec<DestAttr>),
    /// `DAEMON` (3).
    Daemon(Vec<DaemonAttr>),
    /// `TIMEOUT_TCP` (4), seconds.
    TimeoutTcp(u32),
    /// `TIMEOUT_TCP_FIN` (5), seconds.
    TimeoutTcpFin(u32),
    /// `TIMEOUT_UDP` (6), seconds.
    TimeoutUdp(u32),
    /// `IPVS_INFO_ATTR_VERSION` (1 in a `SET_INFO` message).
    Version(u32),
    /// `IPVS_INFO_ATTR_CONN_TAB_SIZE` (2 in a `SET_INFO` message).
    ConnTabSize(u32),
    /// An attribute this crate does not know.
    Other(DefaultNla),
}

impl IpvsAttr {
    /// Parses one attribute of a message whose command is `command`.
    pub fn parse_for<T: AsRef<[u8]> + ?Sized>(
        buf: &NlaBuffer<&T>,
        command: IpvsCommand,
    ) -> Result<Self, DecodeError> {
        use IpvsAttr::*;
        let v = buf.value();
        if command == IpvsCommand::SetInfo {
            return Ok(match buf.kind() {
                IPVS_INFO_ATTR_VERSION => Version(u32_ne(v, "IPVS_INFO_ATTR_VERSION")?),
                IPVS_INFO_ATTR_CONN_TAB_SIZE => {
                    ConnTabSize(u32_ne(v, "IPVS_INFO_ATTR_CONN_TAB_SIZE")?)
                }
                _ => Other(DefaultNla::parse(buf)?),
            });
        }
        Ok(match buf.kind() {
            IPVS_CMD_ATTR_SERVICE => Service(parse_nest(v, "IPVS_CMD_ATTR_SERVICE")?),
            IPVS_CMD_ATTR_DEST => Dest(parse_nest(v, "IPVS_CMD_ATTR_DEST")?),
            IPVS_CMD_ATTR_DAEMON => Daemon(parse_nest(v, "IPVS_CMD_ATTR_DAEMON")?),
            IPVS_CMD_ATTR_TIMEOUT_TCP => TimeoutTcp(u32_ne(v, "IPVS_CMD_ATTR_TIMEOUT_TCP")?),
            IPVS_CMD_ATTR_TIMEOUT_TCP_FIN => {
                TimeoutTcpFin(u32_ne(v, "IPVS_CMD_ATTR_TIMEOUT_TCP_FIN")?)
            }
            IPVS_CMD_ATTR_TIMEOUT_UDP => TimeoutUdp(u32_ne(v, "IPVS_CMD_ATTR_TIMEOUT_UDP")?),
            _ => Other(DefaultNla::parse(buf)?),
        })
    }
}

impl Nla for IpvsAttr {
    #[inline]
    fn value_len(&self) -> usize {
        use IpvsAttr::*;
        match self {
            Service(a) => nest_len(a),
            Dest(a) => nest_len(a),
            Daemon(a) => nest_len(a),
            TimeoutTcp(_) | TimeoutTcpFin(_) | TimeoutUdp(_) | Version(_) | ConnTabSize(_) => 4,
            Other(nla) => nla.value_len(),
        }
    }

    #[inline]
    fn kind(&self) -> u16 {
        use IpvsAttr::*;
        match self {
            Service(_) => IPVS_CMD_ATTR_SERVICE,
            Dest(_) => IPVS_CMD_ATTR_DEST,
            Daemon(_) => IPVS_CMD_ATTR_DAEMON,
            TimeoutTcp(_) => IPVS_CMD_ATTR_TIMEOUT_TCP,
            TimeoutTcpFin(_) => IPVS_CMD_ATTR_TIMEOUT_TCP_FIN,
            TimeoutUdp(_) => IPVS_CMD_ATTR_TIMEOUT_UDP,
            Version(_) => IPVS_INFO_ATTR_VERSION,
            ConnTabSize(_) => IPVS_INFO_ATTR_CONN_TAB_SIZE,
            Other(nla) => nla.kind(),
        }
    }

    #[inline]
    fn emit_value(&self, buf: &mut [u8]) {
        use IpvsAttr::*;
        match self {
            Service(a) => emit_nest(a, buf),
            Dest(a) => emit_nest(a, buf),
            Daemon(a) => emit_nest(a, buf),
            TimeoutTcp(v) | TimeoutTcpFin(v) | TimeoutUdp(v) | Version(v) | ConnTabSize(v) => {
                buf.copy_from_slice(&v.to_ne_bytes())
            }
            Other(nla) => nla.emit_value(buf),
        }
    }
}
