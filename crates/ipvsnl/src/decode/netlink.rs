//! Kernel messages to the typed model: services, destinations, sync
//! daemons, timeouts and info from the attributes the wire crate reads
//! (the one-pass values for listings, the owned attributes for the small
//! replies). Never panics on what the kernel sends.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipvsnl_wire::{
    find_attr, DaemonAttr, DestValue, DestValues, IpvsAttr, ServiceValues, StatsField, StatsValues,
    IPVS_CMD_ATTR_DEST,
};

use super::detail::{DecodeResult, Detail};
use crate::{
    AddressFamily, DaemonRole, DecodeError, Destination, DestinationEntry, Forward, Info, Netmask,
    Protocol, Scheduler, Service, ServiceEntry, ServiceFlags, ServiceKey, Stats, SyncDaemon,
    Timeouts, Tunnel, TunnelFlags, TunnelKind,
};

/// `object` came without the required attribute `attr`.
#[cold]
fn missing(object: &'static str, attr: &'static str) -> DecodeError {
    DecodeError::Missing { object, attr }
}

/// Attribute `attr` holds `value`, which is none known.
#[cold]
fn unexpected(attr: &'static str, value: u32) -> DecodeError {
    DecodeError::UnexpectedValue { attr, value }
}

fn ip_of(raw: [u8; 16], family: AddressFamily) -> IpAddr {
    match family {
        AddressFamily::Inet => IpAddr::V4(Ipv4Addr::new(raw[0], raw[1], raw[2], raw[3])),
        AddressFamily::Inet6 => IpAddr::V6(Ipv6Addr::from(raw)),
    }
}

/// The model's counters from an object's two counter nests, each with its
/// name for errors, written into `out`: `STATS64` if the kernel sent it
/// (4.1+), else the 32-bit `STATS` (read only then); left as they are when
/// neither was sent or `detail` asks for settings only.
#[inline(always)]
fn read_stats(
    detail: Detail,
    stats64: (Option<&[u8]>, &'static str),
    stats: (Option<&[u8]>, &'static str),
    out: &mut Stats,
) -> DecodeResult<()> {
    let values = match (detail, stats64, stats) {
        (Detail::Settings, ..) | (_, (None, _), (None, _)) => return Ok(()),
        (_, (Some(nest), what), _) | (_, _, (Some(nest), what)) => {
            StatsValues::read(nest, what).map_err(|e| DecodeError::attribute_of(what, e))?
        }
    };
    let get = |f| values.get(f).unwrap_or(0);
    *out = Stats {
        conns: get(StatsField::Conns),
        in_packets: get(StatsField::InPkts),
        out_packets: get(StatsField::OutPkts),
        in_bytes: get(StatsField::InBytes),
        out_bytes: get(StatsField::OutBytes),
        cps: get(StatsField::Cps),
        in_pps: get(StatsField::InPps),
        out_pps: get(StatsField::OutPps),
        in_bps: get(StatsField::InBps),
        out_bps: get(StatsField::OutBps),
    };
    Ok(())
}

/// The service of a reply's attribute bytes (the reply to a get).
pub(crate) fn service_reply(attrs: &[u8], detail: Detail) -> DecodeResult<ServiceEntry> {
    let mut e = empty_service();
    fill_service(attrs, detail, &mut e)?;
    Ok(e)
}

/// A service entry to be filled by [`fill_service`].
pub(crate) fn empty_service() -> ServiceEntry {
    ServiceEntry::new(Service::new(ServiceKey::Fwmark {
        mark: 0,
        family: AddressFamily::Inet,
    }))
}

/// Fills `e` (as [`empty_service`] made it) from a service dump part's or
/// a get reply's attribute bytes, where it lies: a listing decodes tens of
/// thousands, and under emulation every copy of an entry costs. On error,
/// `e` is partly filled.
pub(crate) fn fill_service(attrs: &[u8], detail: Detail, e: &mut ServiceEntry) -> DecodeResult<()> {
    let v = ServiceValues::find(attrs)
        .map_err(|e| DecodeError::attribute_of("IPVS_CMD_ATTR_SERVICE", e))?
        .ok_or_else(|| missing("reply", "IPVS_CMD_ATTR_SERVICE"))?;
    let raw_af = v
        .address_family
        .ok_or_else(|| missing("service", "IPVS_SVC_ATTR_AF"))?;
    let family = AddressFamily::from_raw(raw_af)
        .ok_or_else(|| unexpected("IPVS_SVC_ATTR_AF", raw_af.into()))?;
    let s = &mut e.service;
    s.key = match v.fwmark {
        Some(mark) if mark != 0 => ServiceKey::Fwmark { mark, family },
        _ => ServiceKey::Inet {
            protocol: Protocol::from_raw(
                v.protocol
                    .ok_or_else(|| missing("service", "IPVS_SVC_ATTR_PROTOCOL"))?,
            ),
            addr: ip_of(
                v.address
                    .ok_or_else(|| missing("service", "IPVS_SVC_ATTR_ADDR"))?,
                family,
            ),
            port: v
                .port
                .ok_or_else(|| missing("service", "IPVS_SVC_ATTR_PORT"))?,
        },
    };
    s.scheduler = Scheduler::from_kernel(v.scheduler.unwrap_or_default());
    s.flags = ServiceFlags::from_bits_retain(v.flags.map_or(0, |f| f.flags)) - ServiceFlags::HASHED;
    s.timeout = v.timeout.unwrap_or(0);
    s.netmask = v
        .netmask
        .map(|m| Netmask::from_wire(m, family))
        .unwrap_or_else(|| Netmask::host(family));
    s.persistence_engine = v
        .persistence_engine
        .filter(|pe| !pe.is_empty())
        .map(str::to_owned);
    read_stats(
        detail,
        (v.stats64, "IPVS_SVC_ATTR_STATS64"),
        (v.stats, "IPVS_SVC_ATTR_STATS"),
        &mut e.stats,
    )
}

/// Appends the destination of a destination dump part's attribute bytes,
/// of a service of `service_family`, to `out` (nothing on error). The entry
/// is filled where it lies in `out`, each attribute's value put straight
/// into it as the nest is walked: a listing decodes tens of thousands, and
/// under emulation every copy of an entry costs.
pub(crate) fn push_destination(
    attrs: &[u8],
    service_family: AddressFamily,
    detail: Detail,
    out: &mut Vec<DestinationEntry>,
) -> DecodeResult<()> {
    let nest = find_attr(attrs, IPVS_CMD_ATTR_DEST)
        .map_err(|e| DecodeError::attribute_of("IPVS_CMD_ATTR_DEST", e))?
        .ok_or_else(|| missing("reply", "IPVS_CMD_ATTR_DEST"))?;
    let at = out.len();
    out.push(DestinationEntry::new(
        Destination::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0).with_weight(0),
    ));
    let filled = fill_destination(nest, service_family, detail, &mut out[at]);
    if filled.is_err() {
        out.truncate(at);
    }
    filled
}

/// Fills `e` from a destination nest.
#[inline]
fn fill_destination(
    nest: &[u8],
    service_family: AddressFamily,
    detail: Detail,
    e: &mut DestinationEntry,
) -> DecodeResult<()> {
    let (mut addr, mut port, mut raw_family) = (None, None, 0);
    let (mut forward, mut tunnel) = (0, Tunnel::default());
    let (mut stats, mut stats64) = (None, None);
    DestValues::visit(nest, |value| match value {
        DestValue::Address(v) => addr = Some(v),
        DestValue::Port(v) => port = Some(v),
        DestValue::ForwardMethod(v) => forward = v,
        DestValue::Weight(v) => e.destination.weight = v,
        DestValue::UpperThreshold(v) => e.destination.upper_threshold = v,
        DestValue::LowerThreshold(v) => e.destination.lower_threshold = v,
        DestValue::ActiveConns(v) => e.active_conns = v,
        DestValue::InactiveConns(v) => e.inactive_conns = v,
        DestValue::PersistentConns(v) => e.persistent_conns = v,
        DestValue::AddressFamily(v) => raw_family = v,
        DestValue::TunnelType(v) => tunnel.kind = TunnelKind::from_raw(v),
        DestValue::TunnelPort(v) => tunnel.port = v,
        DestValue::TunnelFlags(v) => tunnel.flags = TunnelFlags::from_bits_retain(v),
        DestValue::Stats(v) => stats = Some(v),
        DestValue::Stats64(v) => stats64 = Some(v),
        _ => {}
    })
    .map_err(|e| DecodeError::attribute_of("IPVS_CMD_ATTR_DEST", e))?;
    // ADDR_FAMILY is absent before kernel 3.18 (and 0 means the service's).
    let family = match raw_family {
        0 => service_family,
        raw => AddressFamily::from_raw(raw)
            .ok_or_else(|| unexpected("IPVS_DEST_ATTR_ADDR_FAMILY", raw.into()))?,
    };
    e.destination.addr = ip_of(
        addr.ok_or_else(|| missing("destination", "IPVS_DEST_ATTR_ADDR"))?,
        family,
    );
    e.destination.port = port.ok_or_else(|| missing("destination", "IPVS_DEST_ATTR_PORT"))?;
    e.destination.forward = Forward::from_kernel(forward, tunnel);
    read_stats(
        detail,
        (stats64, "IPVS_DEST_ATTR_STATS64"),
        (stats, "IPVS_DEST_ATTR_STATS"),
        &mut e.stats,
    )
}

/// The destination of a destination dump part's attribute bytes, of a
/// service of `service_family` (for tests: listings use
/// [`push_destination`]).
#[cfg(test)]
pub(crate) fn destination_reply(
    attrs: &[u8],
    service_family: AddressFamily,
    detail: Detail,
) -> DecodeResult<DestinationEntry> {
    let mut one = Vec::with_capacity(1);
    push_destination(attrs, service_family, detail, &mut one)?;
    one.pop().ok_or_else(|| "no destination".into())
}

/// A listed sync daemon.
pub(crate) fn sync_daemon(attrs: &[IpvsAttr]) -> DecodeResult<SyncDaemon> {
    let nest = attrs
        .iter()
        .find_map(|a| match a {
            IpvsAttr::Daemon(d) => Some(d.as_slice()),
            _ => None,
        })
        .ok_or_else(|| missing("reply", "IPVS_CMD_ATTR_DAEMON"))?;
    let mut state = None;
    let mut d = SyncDaemon::new(DaemonRole::Master, "");
    for a in nest {
        match a {
            DaemonAttr::State(v) => state = Some(*v),
            DaemonAttr::Interface(v) => d.interface = v.clone(),
            DaemonAttr::SyncId(v) => d.sync_id = *v,
            DaemonAttr::SyncMaxLen(v) => d.max_len = Some(*v),
            DaemonAttr::McastGroup(v) => d.group = Some(IpAddr::V4(Ipv4Addr::from(*v))),
            DaemonAttr::McastGroup6(v) => d.group = Some(IpAddr::V6(Ipv6Addr::from(*v))),
            DaemonAttr::McastPort(v) => d.port = Some(*v),
            DaemonAttr::McastTtl(v) => d.ttl = Some(*v),
            _ => {}
        }
    }
    let state = state.ok_or_else(|| missing("sync daemon", "IPVS_DAEMON_ATTR_STATE"))?;
    d.role =
        DaemonRole::from_raw(state).ok_or_else(|| unexpected("IPVS_DAEMON_ATTR_STATE", state))?;
    Ok(d)
}

/// The reply to `GET_CONFIG`.
pub(crate) fn timeouts(attrs: &[IpvsAttr]) -> Timeouts {
    let mut t = Timeouts::default();
    for a in attrs {
        match a {
            IpvsAttr::TimeoutTcp(v) => t.tcp = *v,
            IpvsAttr::TimeoutTcpFin(v) => t.tcp_fin = *v,
            IpvsAttr::TimeoutUdp(v) => t.udp = *v,
            _ => {}
        }
    }
    t
}

/// The reply to `GET_INFO`.
pub(crate) fn info(attrs: &[IpvsAttr]) -> DecodeResult<Info> {
    let mut version = None;
    let mut size = None;
    for a in attrs {
        match a {
            IpvsAttr::Version(v) => version = Some(*v),
            IpvsAttr::ConnTabSize(v) => size = Some(*v),
            _ => {}
        }
    }
    Ok(Info {
        version: version.ok_or_else(|| missing("info", "IPVS_INFO_ATTR_VERSION"))?,
        conn_tab_size: size.ok_or_else(|| missing("info", "IPVS_INFO_ATTR_CONN_TAB_SIZE"))?,
    })
}
