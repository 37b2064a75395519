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
    use crate::transport::frame::{self, Reply};
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
            4 => Forward::Other(5 + r.below(3) as u32),
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

    /// The request as bytes, then back through the framing to attributes.
    fn through_bytes(req: &Request) -> Vec<IpvsAttr> {
        let mut bytes = Vec::new();
        frame::push_request(
            &mut bytes,
            0x1234,
            7,
            NLM_F_REQUEST | NLM_F_ACK,
            req.to_message(),
        );
        let frames = frame::frames(&bytes, 0x1234).unwrap();
        assert_eq!(frames.len(), 1);
        match frames[0].reply {
            Reply::Data { command, attrs } => frame::decode(command, attrs).unwrap().attrs,
            ref other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_model_value_round_trips_through_the_wire() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let s = service(&mut r);
            for req in [
                Request::AddService(s.clone()),
                Request::EditService(s.clone()),
            ] {
                let attrs = through_bytes(&req);
                let back = service_nest(&attrs).and_then(service_entry).unwrap();
                assert_eq!(back.service, s);
            }
            let d = destination(&mut r, s.key.family());
            for req in [
                Request::AddDestination(s.key, d),
                Request::EditDestination(s.key, d),
            ] {
                let attrs = through_bytes(&req);
                let back = destination_entry(&attrs, s.key.family()).unwrap();
                assert_eq!(back.destination, d);
                // The service key travels with it.
                // (A key-only nest has no scheduler etc.; the key decodes.)
                let k = service_nest(&attrs).and_then(service_entry).unwrap();
                assert_eq!(k.service.key, s.key);
            }
            let y = daemon(&mut r);
            let back = sync_daemon(&through_bytes(&Request::StartDaemon(y.clone()))).unwrap();
            assert_eq!(back, y);
            let t = Timeouts::new(r.u32(), r.u32(), r.u32());
            assert_eq!(timeouts(&through_bytes(&Request::SetTimeouts(t))), t);
        }
    }

    /// Runs every decoder on whatever parses; none may panic.
    fn decode_everything(datagram: &[u8]) {
        let Ok(frames) = frame::frames(datagram, 0x1234) else {
            return;
        };
        for f in frames {
            if let Reply::Data { command, attrs } = f.reply {
                if let Ok(m) = frame::decode(command, attrs) {
                    let _ = service_nest(&m.attrs).and_then(service_entry);
                    let _ = destination_entry(&m.attrs, AddressFamily::Inet);
                    let _ = destination_entry(&m.attrs, AddressFamily::Inet6);
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
                0 => Request::AddService(s),
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
