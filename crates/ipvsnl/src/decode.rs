//! Kernel messages to the typed model. Pure: every function takes parsed
//! attributes and never panics on what the kernel sends.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipvsnl_wire::{DaemonAttr, DestAttr, IpvsAttr, ServiceAttr, StatsAttr, StatsField};

use crate::{
    AddressFamily, DaemonRole, Destination, DestinationEntry, Forward, Info, Netmask, Protocol,
    Scheduler, Service, ServiceEntry, ServiceFlags, ServiceKey, Stats, SyncDaemon, Timeouts,
    Tunnel, TunnelFlags, TunnelKind,
};

/// Why a reply could not be turned into the model.
pub(crate) type DecodeResult<T> = Result<T, String>;

fn ip_of(raw: [u8; 16], family: AddressFamily) -> IpAddr {
    match family {
        AddressFamily::Inet => IpAddr::V4(Ipv4Addr::new(raw[0], raw[1], raw[2], raw[3])),
        AddressFamily::Inet6 => IpAddr::V6(Ipv6Addr::from(raw)),
    }
}

/// Stats from `STATS64` if present, else from the 32-bit `STATS`.
fn stats_of(stats: Option<&Vec<StatsAttr>>, stats64: Option<&Vec<StatsAttr>>) -> Stats {
    let mut out = Stats::default();
    let Some(attrs) = stats64.or(stats) else {
        return out;
    };
    for (field, v) in attrs.iter().filter_map(StatsAttr::value) {
        let slot = match field {
            StatsField::Conns => &mut out.conns,
            StatsField::InPkts => &mut out.in_packets,
            StatsField::OutPkts => &mut out.out_packets,
            StatsField::InBytes => &mut out.in_bytes,
            StatsField::OutBytes => &mut out.out_bytes,
            StatsField::Cps => &mut out.cps,
            StatsField::InPps => &mut out.in_pps,
            StatsField::OutPps => &mut out.out_pps,
            StatsField::InBps => &mut out.in_bps,
            StatsField::OutBps => &mut out.out_bps,
            _ => continue,
        };
        *slot = v;
    }
    out
}

/// The service nest of a message's attributes.
pub(crate) fn service_nest(attrs: &[IpvsAttr]) -> DecodeResult<&[ServiceAttr]> {
    attrs
        .iter()
        .find_map(|a| match a {
            IpvsAttr::Service(s) => Some(s.as_slice()),
            _ => None,
        })
        .ok_or_else(|| "no IPVS_CMD_ATTR_SERVICE in the reply".to_owned())
}

/// A listed service.
pub(crate) fn service_entry(nest: &[ServiceAttr]) -> DecodeResult<ServiceEntry> {
    let (mut af, mut proto, mut addr, mut port, mut fwmark) = (None, None, None, None, None);
    let (mut sched, mut flags, mut timeout, mut netmask, mut pe) = (None, None, 0, None, None);
    let (mut stats, mut stats64) = (None, None);
    for a in nest {
        match a {
            ServiceAttr::AddressFamily(v) => af = Some(*v),
            ServiceAttr::Protocol(v) => proto = Some(*v),
            ServiceAttr::Address(v) => addr = Some(*v),
            ServiceAttr::Port(v) => port = Some(*v),
            ServiceAttr::Fwmark(v) => fwmark = Some(*v),
            ServiceAttr::Scheduler(v) => sched = Some(v.clone()),
            ServiceAttr::Flags(v) => flags = Some(v.flags),
            ServiceAttr::Timeout(v) => timeout = *v,
            ServiceAttr::Netmask(v) => netmask = Some(*v),
            ServiceAttr::PersistenceEngine(v) if !v.is_empty() => pe = Some(v.clone()),
            ServiceAttr::Stats(v) => stats = Some(v),
            ServiceAttr::Stats64(v) => stats64 = Some(v),
            _ => {}
        }
    }
    let raw_af = af.ok_or("service without IPVS_SVC_ATTR_AF")?;
    let family = AddressFamily::from_raw(raw_af)
        .ok_or_else(|| format!("service of unknown address family {raw_af}"))?;
    let key = match fwmark {
        Some(mark) if mark != 0 => ServiceKey::Fwmark { mark, family },
        _ => ServiceKey::Inet {
            protocol: Protocol::from_raw(proto.ok_or("service without IPVS_SVC_ATTR_PROTOCOL")?),
            addr: ip_of(addr.ok_or("service without IPVS_SVC_ATTR_ADDR")?, family),
            port: port.ok_or("service without IPVS_SVC_ATTR_PORT")?,
        },
    };
    let service = Service {
        key,
        scheduler: Scheduler::from_kernel(sched.unwrap_or_default()),
        flags: ServiceFlags::from_bits_retain(flags.unwrap_or(0)) - ServiceFlags::HASHED,
        timeout,
        netmask: netmask
            .map(|m| Netmask::from_wire(m, family))
            .unwrap_or_else(|| Netmask::host(family)),
        persistence_engine: pe,
    };
    Ok(ServiceEntry {
        service,
        stats: stats_of(stats, stats64),
    })
}

/// A listed destination of a service of `service_family`.
pub(crate) fn destination_entry(
    attrs: &[IpvsAttr],
    service_family: AddressFamily,
) -> DecodeResult<DestinationEntry> {
    let nest = attrs
        .iter()
        .find_map(|a| match a {
            IpvsAttr::Dest(d) => Some(d.as_slice()),
            _ => None,
        })
        .ok_or("no IPVS_CMD_ATTR_DEST in the reply")?;
    let (mut af, mut addr, mut port, mut fwd) = (None, None, None, 0);
    let (mut weight, mut upper, mut lower) = (0, 0, 0);
    let (mut active, mut inactive, mut persistent) = (0, 0, 0);
    let (mut tun_kind, mut tun_port, mut tun_flags) = (0, 0, 0);
    let (mut stats, mut stats64) = (None, None);
    for a in nest {
        match a {
            DestAttr::AddressFamily(v) => af = Some(*v),
            DestAttr::Address(v) => addr = Some(*v),
            DestAttr::Port(v) => port = Some(*v),
            DestAttr::ForwardMethod(v) => fwd = *v,
            DestAttr::Weight(v) => weight = *v,
            DestAttr::UpperThreshold(v) => upper = *v,
            DestAttr::LowerThreshold(v) => lower = *v,
            DestAttr::ActiveConns(v) => active = *v,
            DestAttr::InactiveConns(v) => inactive = *v,
            DestAttr::PersistentConns(v) => persistent = *v,
            DestAttr::TunnelType(v) => tun_kind = *v,
            DestAttr::TunnelPort(v) => tun_port = *v,
            DestAttr::TunnelFlags(v) => tun_flags = *v,
            DestAttr::Stats(v) => stats = Some(v),
            DestAttr::Stats64(v) => stats64 = Some(v),
            _ => {}
        }
    }
    // ADDR_FAMILY is absent before kernel 3.18 (and 0 means the service's).
    let family = match af {
        None | Some(0) => service_family,
        Some(raw) => AddressFamily::from_raw(raw)
            .ok_or_else(|| format!("destination of unknown address family {raw}"))?,
    };
    let tunnel = Tunnel {
        kind: TunnelKind::from_raw(tun_kind),
        port: tun_port,
        flags: TunnelFlags::from_bits_retain(tun_flags),
    };
    let destination = Destination {
        addr: ip_of(
            addr.ok_or("destination without IPVS_DEST_ATTR_ADDR")?,
            family,
        ),
        port: port.ok_or("destination without IPVS_DEST_ATTR_PORT")?,
        forward: Forward::from_raw(fwd, tunnel),
        weight,
        upper_threshold: upper,
        lower_threshold: lower,
    };
    Ok(DestinationEntry {
        destination,
        active_conns: active,
        inactive_conns: inactive,
        persistent_conns: persistent,
        stats: stats_of(stats, stats64),
    })
}

/// A listed sync daemon.
pub(crate) fn sync_daemon(attrs: &[IpvsAttr]) -> DecodeResult<SyncDaemon> {
    let nest = attrs
        .iter()
        .find_map(|a| match a {
            IpvsAttr::Daemon(d) => Some(d.as_slice()),
            _ => None,
        })
        .ok_or("no IPVS_CMD_ATTR_DAEMON in the reply")?;
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
    let state = state.ok_or("sync daemon without IPVS_DAEMON_ATTR_STATE")?;
    d.role = DaemonRole::from_raw(state).ok_or_else(|| format!("unknown daemon state {state}"))?;
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
        version: version.ok_or("info without IPVS_INFO_ATTR_VERSION")?,
        conn_tab_size: size.ok_or("info without IPVS_INFO_ATTR_CONN_TAB_SIZE")?,
    })
}
