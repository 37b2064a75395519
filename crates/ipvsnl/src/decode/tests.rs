//! Unit tests of the reply decoders. Round trips of every model value through the request encoder, the
//! bytes, the framing and this decoder, on seeded random values; and
//! arbitrary or mutated bytes that must never panic.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipvsnl_wire::netlink_packet_core::{NLM_F_ACK, NLM_F_REQUEST};
use ipvsnl_wire::{IpvsAttr, StatsField, IPVS_CMD_ATTR_DEST};

use super::*;
use crate::proto::frame::{self, Reply};
use crate::{
    AddressFamily, DaemonRole, Destination, Forward, Netmask, Protocol, Scheduler, Service,
    ServiceFlags, ServiceKey, Stats, SyncDaemon, Timeouts, Tunnel, TunnelFlags, TunnelKind,
};
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
    let err =
        push_destination(&attrs(false), AddressFamily::Inet, Detail::Full, &mut list).unwrap_err();
    assert_eq!(
        err,
        crate::DecodeError::Missing {
            object: "destination",
            attr: "IPVS_DEST_ATTR_ADDR"
        }
    );
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
            Request::add_service(s.clone()),
            Request::edit_service(s.clone()),
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
    assert_eq!(err.attribute(), Some("IPVS_CMD_ATTR_DEST"), "{err}");
    assert!(err.to_string().contains("IPVS_DEST_ATTR_PORT"), "{err}");
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
            0 => Request::add_service(s),
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
