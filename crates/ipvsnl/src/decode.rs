//! Kernel messages to the typed model: the one place that turns what the
//! wire crate reads into services, destinations and the rest. Pure: every
//! function takes parsed attributes (the one-pass values for listings, the
//! owned attributes for the small replies) and never panics on what the
//! kernel sends.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipvsnl_wire::netlink_packet_core::DecodeError;
use ipvsnl_wire::{
    find_attr, DaemonAttr, DestValue, DestValues, IpvsAttr, ServiceValues, StatsField, StatsValues,
    IPVS_CMD_ATTR_DEST,
};

use crate::{
    AddressFamily, DaemonRole, Destination, DestinationEntry, Forward, Info, Netmask, Protocol,
    Scheduler, Service, ServiceEntry, ServiceFlags, ServiceKey, Stats, SyncDaemon, Timeouts,
    Tunnel, TunnelFlags, TunnelKind,
};

/// Why a reply could not be turned into the model.
pub(crate) type DecodeResult<T> = Result<T, String>;

/// How much of a listed service or destination to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detail {
    /// Everything, counters included.
    Full,
    /// Settings and connection counts, not the traffic counters (left at
    /// zero): what the sync engine plans with.
    Settings,
}

/// The wire crate's error (it names the attribute) as this module's.
fn wire(e: DecodeError) -> String {
    e.to_string()
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
    stats64: (Option<&[u8]>, &str),
    stats: (Option<&[u8]>, &str),
    out: &mut Stats,
) -> DecodeResult<()> {
    let values = match (detail, stats64, stats) {
        (Detail::Settings, ..) | (_, (None, _), (None, _)) => return Ok(()),
        (_, (Some(nest), what), _) | (_, _, (Some(nest), what)) => StatsValues::read(nest, what),
    }
    .map_err(wire)?;
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
        .map_err(wire)?
        .ok_or("no IPVS_CMD_ATTR_SERVICE in the reply")?;
    let raw_af = v.address_family.ok_or("service without IPVS_SVC_ATTR_AF")?;
    let family = AddressFamily::from_raw(raw_af)
        .ok_or_else(|| format!("service of unknown address family {raw_af}"))?;
    let s = &mut e.service;
    s.key = match v.fwmark {
        Some(mark) if mark != 0 => ServiceKey::Fwmark { mark, family },
        _ => ServiceKey::Inet {
            protocol: Protocol::from_raw(
                v.protocol.ok_or("service without IPVS_SVC_ATTR_PROTOCOL")?,
            ),
            addr: ip_of(
                v.address.ok_or("service without IPVS_SVC_ATTR_ADDR")?,
                family,
            ),
            port: v.port.ok_or("service without IPVS_SVC_ATTR_PORT")?,
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
        .map_err(wire)?
        .ok_or("no IPVS_CMD_ATTR_DEST in the reply")?;
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
    .map_err(wire)?;
    // ADDR_FAMILY is absent before kernel 3.18 (and 0 means the service's).
    let family = match raw_family {
        0 => service_family,
        raw => AddressFamily::from_raw(raw)
            .ok_or_else(|| format!("destination of unknown address family {raw}"))?,
    };
    e.destination.addr = ip_of(
        addr.ok_or("destination without IPVS_DEST_ATTR_ADDR")?,
        family,
    );
    e.destination.port = port.ok_or("destination without IPVS_DEST_ATTR_PORT")?;
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
    one.pop().ok_or_else(|| "no destination".to_owned())
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

/// `/proc/net/ip_vs_stats`: two rows of five upper-case hex numbers (the
/// counters, then the rates) under their column titles.
pub(crate) fn proc_stats(text: &str) -> DecodeResult<Stats> {
    let mut rows = text.lines().filter_map(|line| {
        let fields: Vec<u64> = line
            .split_whitespace()
            .map(|w| u64::from_str_radix(w, 16).ok())
            .collect::<Option<_>>()?;
        (fields.len() == 5).then_some(fields)
    });
    let (Some(counts), Some(rates)) = (rows.next(), rows.next()) else {
        return Err(format!(
            "ip_vs_stats: expected two rows of five hex numbers, got {text:?}"
        ));
    };
    Ok(Stats {
        conns: counts[0],
        in_packets: counts[1],
        out_packets: counts[2],
        in_bytes: counts[3],
        out_bytes: counts[4],
        cps: rates[0],
        in_pps: rates[1],
        out_pps: rates[2],
        in_bps: rates[3],
        out_bps: rates[4],
    })
}

#[cfg(test)]
mod tests {
    //! Round trips of every model value through the request encoder, the
    //! bytes, the framing and this decoder, on seeded random values; and
    //! arbitrary or mutated bytes that must never panic.

    use std::net::{Ipv4Addr, Ipv6Addr};

    use ipvsnl_wire::netlink_packet_core::{NLM_F_ACK, NLM_F_REQUEST};

    use super::*;
    use crate::proto::frame::{self, Reply};
    use crate::{Request, SCHED_NAME_MAX};

    /// xorshift64*: small, seeded, reproducible.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn bool(&mut self) -> bool {
            self.next() & 1 == 1
        }
        fn u16(&mut self) -> u16 {
            self.next() as u16
        }
        fn u32(&mut self) -> u32 {
            // Favour the edges, where encodings break.
            match self.below(8) {
                0 => 0,
                1 => u32::MAX,
                2 => 1,
                _ => self.next() as u32,
            }
        }
        fn name(&mut self, max: usize) -> String {
            let len = 1 + self.below(max as u64) as usize;
            (0..len)
                .map(|_| (b'a' + self.below(26) as u8) as char)
                .collect()
        }
        fn addr(&mut self, family: AddressFamily) -> IpAddr {
            match family {
                AddressFamily::Inet => IpAddr::V4(Ipv4Addr::from(self.next() as u32)),
                _ => IpAddr::V6(Ipv6Addr::from(
                    (u128::from(self.next()) << 64) | u128::from(self.next()),
                )),
            }
        }
        fn family(&mut self) -> AddressFamily {
            if self.bool() {
                AddressFamily::Inet
            } else {
                AddressFamily::Inet6
            }
        }
    }

    fn key(r: &mut Rng) -> ServiceKey {
        let family = r.family();
        if r.below(4) == 0 {
            return ServiceKey::Fwmark {
                mark: r.u32().max(1),
                family,
            };
        }
        let protocol = match r.below(4) {
            0 => Protocol::Tcp,
            1 => Protocol::Udp,
            2 => Protocol::Sctp,
            _ => Protocol::from_raw(r.u16()),
        };
        ServiceKey::Inet {
            protocol,
            addr: r.addr(family),
            port: r.u16(),
        }
    }

    fn service(r: &mut Rng) -> Service {
        let key = key(r);
        let named: Vec<Scheduler> = Scheduler::named().collect();
        let scheduler = if r.bool() {
            named[r.below(named.len() as u64) as usize].clone()
        } else {
            Scheduler::new(&r.name(SCHED_NAME_MAX)).unwrap()
        };
        let netmask = match key.family() {
            AddressFamily::Inet => {
                let prefix = r.below(33) as u32;
                Netmask::V4(Ipv4Addr::from(
                    u32::MAX.checked_shl(32 - prefix).unwrap_or(0),
                ))
            }
            _ => Netmask::V6(1 + r.below(128) as u8),
        };
        Service {
            key,
            scheduler,
            flags: ServiceFlags::from_bits_retain(r.u32()) - ServiceFlags::HASHED,
            timeout: r.u32(),
            netmask,
            persistence_engine: r.bool().then(|| r.name(crate::PE_NAME_MAX)),
        }
    }

    fn destination(r: &mut Rng, service_family: AddressFamily) -> Destination {
        let forward = match r.below(7) {
            0 => Forward::Masquerade,
            1 => Forward::Local,
            2 => Forward::Route,
            3 => Forward::Bypass,
            4 => Forward::from_kernel(5 + r.below(3) as u32, Tunnel::ipip()),
            _ => Forward::Tunnel(Tunnel {
                kind: TunnelKind::from_raw(r.below(256) as u8),
                port: r.u16(),
                flags: TunnelFlags::from_bits_retain(r.u16()),
            }),
        };
        let family = if forward.tunnel().is_some() {
            r.family()
        } else {
            service_family
        };
        Destination {
            addr: r.addr(family),
            port: r.u16(),
            forward,
            weight: r.u32(),
            upper_threshold: r.u32(),
            lower_threshold: r.u32(),
        }
    }

    fn daemon(r: &mut Rng) -> SyncDaemon {
        let mut d = SyncDaemon::new(
            if r.bool() {
                DaemonRole::Master
            } else {
                DaemonRole::Backup
            },
            r.name(crate::IFNAME_MAX),
        )
        .with_sync_id(r.u32());
        if r.bool() {
            d = d.with_max_len(r.u16());
        }
        if r.bool() {
            let fam = r.family();
            d = d.with_group(r.addr(fam));
        }
        if r.bool() {
            d = d.with_port(r.u16());
        }
        if r.bool() {
            d = d.with_ttl(r.next() as u8);
        }
        d
    }

    /// The request as bytes (the direct encoder the pipeline uses, byte
    /// for byte the generic one), then back through the framing: the
    /// command and the attribute bytes.
    fn through_bytes(req: &Request) -> (u8, Vec<u8>) {
        let mut bytes = Vec::new();
        crate::request::encode(&mut bytes, 0x1234, 7, NLM_F_REQUEST | NLM_F_ACK, req);
        let frames = frame::all_frames(&bytes, 0x1234).unwrap();
        assert_eq!(frames.len(), 1);
        match frames[0].reply {
            Reply::Data { command, attrs } => (command, attrs.to_vec()),
            ref other => panic!("{other:?}"),
        }
    }

    /// The same, parsed into owned attributes (for the small replies).
    fn owned(req: &Request) -> Vec<IpvsAttr> {
        let (command, attrs) = through_bytes(req);
        frame::decode(command, &attrs).unwrap().attrs
    }

    #[test]
    fn a_refused_destination_leaves_the_list_as_it_was() {
        use ipvsnl_wire::write::{begin_nest, end_nest, push_attr};
        use ipvsnl_wire::DestAttr;
        let attrs = |with_address: bool| {
            let mut out = Vec::new();
            let nest = begin_nest(&mut out, IPVS_CMD_ATTR_DEST);
            if with_address {
                push_attr(
                    &mut out,
                    &DestAttr::Address([10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
                );
            }
            push_attr(&mut out, &DestAttr::Port(80));
            push_attr(&mut out, &DestAttr::Weight(7));
            end_nest(&mut out, nest);
            out
        };
        let mut list = Vec::new();
        push_destination(&attrs(true), AddressFamily::Inet, Detail::Full, &mut list).unwrap();
        let err = push_destination(&attrs(false), AddressFamily::Inet, Detail::Full, &mut list)
            .unwrap_err();
        assert!(err.contains("IPVS_DEST_ATTR_ADDR"), "{err}");
        assert_eq!(list.len(), 1);
        assert_eq!(
            list[0].destination.addr,
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))
        );
        assert_eq!(
            (list[0].destination.port, list[0].destination.weight),
            (80, 7)
        );
    }

    #[test]
    fn every_model_value_round_trips_through_the_wire() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let s = service(&mut r);
            for req in [
                Request::AddService(Box::new(s.clone())),
                Request::EditService(Box::new(s.clone())),
            ] {
                let (_, attrs) = through_bytes(&req);
                assert_eq!(service_reply(&attrs, Detail::Full).unwrap().service, s);
            }
            let d = destination(&mut r, s.key.family());
            for req in [
                Request::AddDestination(s.key, d),
                Request::EditDestination(s.key, d),
            ] {
                let (_, attrs) = through_bytes(&req);
                let back = destination_reply(&attrs, s.key.family(), Detail::Full).unwrap();
                assert_eq!(back.destination, d);
                // The service key travels with it.
                // (A key-only nest has no scheduler etc.; the key decodes.)
                assert_eq!(
                    service_reply(&attrs, Detail::Full).unwrap().service.key,
                    s.key
                );
            }
            let y = daemon(&mut r);
            let back = sync_daemon(&owned(&Request::StartDaemon(y.clone()))).unwrap();
            assert_eq!(back, y);
            let t = Timeouts::new(r.u32(), r.u32(), r.u32());
            assert_eq!(timeouts(&owned(&Request::SetTimeouts(t))), t);
        }
    }

    #[test]
    fn listed_values_keep_counters_and_fall_back_to_32_bit_stats() {
        use ipvsnl_wire::{DestAttr, IpvsCommand, IpvsMessage, ServiceAttr, StatsAttr};
        let bytes_of = |msg: IpvsMessage| {
            let mut v = Vec::new();
            frame::push_request(&mut v, 0x30, 1, 0, msg);
            v.split_off(20)
        };
        let svc = bytes_of(IpvsMessage::new(
            IpvsCommand::NewService,
            vec![IpvsAttr::Service(vec![
                ServiceAttr::AddressFamily(10),
                ServiceAttr::Fwmark(9),
                ServiceAttr::Scheduler("mh".into()),
                ServiceAttr::PersistenceEngine(String::new()),
                ServiceAttr::Flags(ipvsnl_wire::FlagsMask::replace(0x1 | 0x2)),
                ServiceAttr::Stats(vec![StatsAttr::U32(StatsField::Conns, 5)]),
                ServiceAttr::Stats64(vec![StatsAttr::U64(StatsField::Conns, 7)]),
            ])],
        ));
        let e = service_reply(&svc, Detail::Full).unwrap();
        assert_eq!(e.service.key, ServiceKey::fwmark(9, AddressFamily::Inet6));
        assert_eq!(e.service.flags, ServiceFlags::PERSISTENT);
        assert_eq!(e.service.persistence_engine, None);
        assert_eq!(e.service.netmask, Netmask::host(AddressFamily::Inet6));
        assert_eq!(e.stats.conns, 7, "STATS64 wins");
        let dest = bytes_of(IpvsMessage::new(
            IpvsCommand::NewDest,
            vec![IpvsAttr::Dest(vec![
                DestAttr::Address([172, 16, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
                DestAttr::Port(8080),
                DestAttr::ActiveConns(3),
                DestAttr::Stats(vec![StatsAttr::U64(StatsField::InBytes, 1 << 40)]),
            ])],
        ));
        // No ADDR_FAMILY (before kernel 3.18): the service's.
        let e = destination_reply(&dest, AddressFamily::Inet, Detail::Full).unwrap();
        assert_eq!(e.destination.addr, IpAddr::V4(Ipv4Addr::new(172, 16, 0, 9)));
        assert_eq!((e.active_conns, e.stats.in_bytes), (3, 1 << 40));
        // Settings only: the same but for the traffic counters.
        let bare = destination_reply(&dest, AddressFamily::Inet, Detail::Settings).unwrap();
        assert_eq!((bare.destination, bare.active_conns), (e.destination, 3));
        assert_eq!(bare.stats, Stats::default());
        let bare = service_reply(&svc, Detail::Settings).unwrap();
        assert_eq!(
            bare.service.key,
            ServiceKey::fwmark(9, AddressFamily::Inet6)
        );
        assert_eq!(bare.stats.conns, 0);
        assert!(service_reply(&dest, Detail::Full).is_err());
        assert!(destination_reply(&svc, AddressFamily::Inet, Detail::Full).is_err());
        // A bad width is an error naming the attribute, not a panic.
        let mut bad = dest.clone();
        // PORT's header follows the nest's (4) and ADDR (20); length 6 -> 5.
        bad[24..26].copy_from_slice(&5u16.to_ne_bytes());
        let err = destination_reply(&bad, AddressFamily::Inet, Detail::Full).unwrap_err();
        assert!(err.contains("IPVS_DEST_ATTR_PORT"), "{err}");
    }

    /// Runs every decoder on whatever parses; none may panic.
    fn decode_everything(datagram: &[u8]) {
        let Ok(frames) = frame::all_frames(datagram, 0x1234) else {
            return;
        };
        for f in frames {
            if let Reply::Data { command, attrs } = f.reply {
                let _ = service_reply(attrs, Detail::Full);
                let _ = destination_reply(attrs, AddressFamily::Inet, Detail::Full);
                let _ = destination_reply(attrs, AddressFamily::Inet6, Detail::Full);
                if let Ok(m) = frame::decode(command, attrs) {
                    let _ = sync_daemon(&m.attrs);
                    let _ = info(&m.attrs);
                    let _ = timeouts(&m.attrs);
                }
            }
        }
    }

    #[test]
    fn arbitrary_and_mutated_bytes_never_panic() {
        let mut r = Rng(42);
        for _ in 0..20_000 {
            let len = r.below(200) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| r.next() as u8).collect();
            decode_everything(&bytes);
        }
        // Valid requests with a few bytes flipped, truncated or extended:
        // these reach deep into the nests.
        for _ in 0..5000 {
            let s = service(&mut r);
            let d = destination(&mut r, s.key.family());
            let req = match r.below(3) {
                0 => Request::AddService(Box::new(s)),
                1 => Request::AddDestination(s.key, d),
                _ => Request::StartDaemon(daemon(&mut r)),
            };
            let mut bytes = Vec::new();
            frame::push_request(&mut bytes, 0x1234, 1, NLM_F_REQUEST, req.to_message());
            for _ in 0..1 + r.below(4) {
                let i = r.below(bytes.len() as u64) as usize;
                bytes[i] = r.next() as u8;
            }
            match r.below(3) {
                0 => bytes.truncate(r.below(bytes.len() as u64 + 1) as usize),
                1 => bytes.extend((0..r.below(16)).map(|_| r.next() as u8)),
                _ => {}
            }
            decode_everything(&bytes);
        }
    }

    #[test]
    fn proc_stats_reads_both_rows() {
        let text = "   Total Incoming Outgoing         Incoming         Outgoing\n   Conns  Packets  Packets            Bytes            Bytes\n       3       1E        0              8D0                0\n\n Conns/s   Pkts/s   Pkts/s          Bytes/s          Bytes/s\n       1        2        0               FF                0\n";
        let s = proc_stats(text).unwrap();
        assert_eq!((s.conns, s.in_packets, s.out_packets), (3, 30, 0));
        assert_eq!((s.in_bytes, s.out_bytes), (0x8d0, 0));
        assert_eq!((s.cps, s.in_pps, s.in_bps), (1, 2, 255));
        assert!(proc_stats("").is_err());
        assert!(proc_stats("1 2 3 4 5\n").is_err());
    }
}
