//! The wire crate on bytes captured from real kernels (Debian 6.1 and 6.12,
//! see data/extract.py and tests/kernel_api/capture.rs of the workspace): every
//! datagram parses, the typed values are the state ipvsadm created, and
//! emitting what was parsed gives back the kernel's bytes exactly. Then
//! arbitrary and mutated bytes, which must never panic.

use ipvsnl_wire::netlink_packet_core::{
    NetlinkBuffer, NetlinkMessage, NetlinkPayload, ParseableParametrized, NLM_F_MULTIPART,
};
use ipvsnl_wire::netlink_packet_generic::{GenlHeader, GenlMessage};
use ipvsnl_wire::{
    DaemonAttr, DestAttr, FlagsMask, IpvsAttr, IpvsCommand, IpvsMessage, ServiceAttr, StatsAttr,
    StatsField,
};

type Msg = NetlinkMessage<GenlMessage<IpvsMessage>>;

struct Fixture {
    kernel: &'static str,
    name: &'static str,
    hex: &'static str,
}

macro_rules! fixtures {
    ($($k:literal / $n:literal),* $(,)?) => {
        &[$(Fixture { kernel: $k, name: $n, hex: include_str!(concat!("data/", $k, "/", $n, ".hex")) }),*]
    };
}

mod kernel_bytes {
    mod values;
}

const FIXTURES: &[Fixture] = fixtures![
    "6.1" / "service-dump",
    "6.1" / "service-get",
    "6.1" / "dest-dump",
    "6.1" / "info",
    "6.1" / "config",
    "6.1" / "daemon-dump",
    "6.12" / "service-dump",
    "6.12" / "service-get",
    "6.12" / "dest-dump",
    "6.12" / "info",
    "6.12" / "config",
    "6.12" / "daemon-dump",
];

fn datagrams(hex: &str) -> Vec<Vec<u8>> {
    hex.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|block| {
            let s: String = block.split_whitespace().collect();
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        })
        .collect()
}

/// Splits a datagram into its netlink messages (the exact bytes of each).
fn split(datagram: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut off = 0;
    while off < datagram.len() {
        let len = NetlinkBuffer::new_checked(&datagram[off..])
            .unwrap()
            .length() as usize;
        out.push(&datagram[off..off + len]);
        off += (len + 3) & !3;
    }
    out
}

/// Parses every message of a fixture, checking the byte-exact round trip,
/// and returns the IPVS messages with their netlink flags.
fn parse_fixture(f: &Fixture) -> (Vec<(u16, IpvsMessage)>, usize) {
    let mut ipvs = Vec::new();
    let mut control = 0;
    for d in datagrams(f.hex) {
        for bytes in split(&d) {
            let msg = Msg::deserialize(bytes)
                .unwrap_or_else(|e| panic!("{} {}: {e:?}", f.kernel, f.name));
            let mut again = vec![0; msg.buffer_len()];
            msg.serialize(&mut again);
            assert_eq!(
                again, bytes,
                "{} {}: emit(parse(bytes)) != bytes",
                f.kernel, f.name
            );
            match msg.payload {
                NetlinkPayload::InnerMessage(g) => {
                    assert_eq!(g.header.version, 1);
                    ipvs.push((msg.header.flags, g.payload));
                }
                NetlinkPayload::Done(_) | NetlinkPayload::Error(_) => control += 1,
                other => panic!("{} {}: unexpected {other:?}", f.kernel, f.name),
            }
        }
    }
    (ipvs, control)
}

fn fixture(kernel: &str, name: &str) -> (Vec<(u16, IpvsMessage)>, usize) {
    parse_fixture(
        FIXTURES
            .iter()
            .find(|f| f.kernel == kernel && f.name == name)
            .unwrap(),
    )
}

fn addr(bytes: &[u8]) -> [u8; 16] {
    let mut a = [0; 16];
    a[..bytes.len()].copy_from_slice(bytes);
    a
}

const V6_1: [u8; 16] = [0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

fn zero_stats(nest: &[StatsAttr], wide: bool) {
    let fields: Vec<StatsField> = nest
        .iter()
        .filter_map(|a| a.value())
        .map(|(f, _)| f)
        .collect();
    assert_eq!(fields, StatsField::ALL.to_vec());
    for a in nest {
        match a {
            StatsAttr::U64(f, 0) => assert!(
                wide || matches!(f, StatsField::InBytes | StatsField::OutBytes),
                "{f:?} is 64-bit in STATS"
            ),
            StatsAttr::U32(f, 0) => assert!(!wide, "{f:?} is 32-bit in STATS64"),
            other => panic!("unexpected {other:?}"),
        }
    }
}

fn service_nest(m: &IpvsMessage) -> &[ServiceAttr] {
    assert_eq!(m.command, IpvsCommand::NewService);
    match m.attrs.as_slice() {
        [IpvsAttr::Service(nest)] => nest,
        other => panic!("{other:?}"),
    }
}

/// The kernel's TCP 10.0.0.1:80 service (`-s wrr -p 600 -M 255.255.255.0 --pe sip`).
fn check_web(nest: &[ServiceAttr]) {
    use ServiceAttr::*;
    assert_eq!(
        nest[..9],
        [
            AddressFamily(2),
            Protocol(6),
            Address(addr(&[10, 0, 0, 1])),
            Port(80),
            Scheduler("wrr".into()),
            PersistenceEngine("sip".into()),
            Flags(FlagsMask::replace(0x1 | 0x2)),
            Timeout(600),
            Netmask([255, 255, 255, 0]),
        ]
    );
    match &nest[9..] {
        [Stats(s), Stats64(s64)] => {
            zero_stats(s, false);
            zero_stats(s64, true);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_fixture_round_trips_byte_for_byte() {
    for f in FIXTURES {
        let (ipvs, control) = parse_fixture(f);
        assert!(!ipvs.is_empty(), "{} {}", f.kernel, f.name);
        assert_eq!(control, 1, "{} {}: one DONE or ACK", f.kernel, f.name);
    }
}

#[test]
fn service_dump_and_get() {
    use ServiceAttr::*;
    for k in ["6.1", "6.12"] {
        let (msgs, _) = fixture(k, "service-dump");
        assert_eq!(msgs.len(), 3);
        assert!(msgs.iter().all(|(flags, _)| flags & NLM_F_MULTIPART != 0));
        let nests: Vec<&[ServiceAttr]> = msgs.iter().map(|(_, m)| service_nest(m)).collect();
        let find = |pred: &dyn Fn(&[ServiceAttr]) -> bool| {
            *nests.iter().find(|n| pred(n)).expect("service in the dump")
        };
        check_web(find(&|n| n.contains(&Port(80))));
        let dns = find(&|n| n.contains(&Port(53)));
        assert_eq!(
            dns[..8],
            [
                AddressFamily(10),
                Protocol(17),
                Address(V6_1),
                Port(53),
                Scheduler("sh".into()),
                // HASHED | ONEPACKET | SCHED1 (sh-fallback) | SCHED2 (sh-port)
                Flags(FlagsMask::replace(0x1e)),
                Timeout(0),
                // IPv6 "netmask": a host-order prefix length.
                Netmask(128u32.to_ne_bytes()),
            ]
        );
        let mark = find(&|n| n.contains(&Fwmark(7)));
        assert_eq!(
            mark[..6],
            [
                AddressFamily(10),
                Fwmark(7),
                Scheduler("mh".into()),
                Flags(FlagsMask::replace(0x1 | 0x2 | 0x8)),
                Timeout(30),
                Netmask(96u32.to_ne_bytes()),
            ]
        );
        let (get, acks) = fixture(k, "service-get");
        assert_eq!((get.len(), acks), (1, 1));
        assert_eq!(
            get[0].0 & NLM_F_MULTIPART,
            0,
            "a get's reply is no dump part"
        );
        check_web(service_nest(&get[0].1));
    }
}

#[test]
fn destination_dump() {
    use DestAttr::*;
    for k in ["6.1", "6.12"] {
        let (msgs, _) = fixture(k, "dest-dump");
        assert_eq!(msgs.len(), 4);
        let mut seen = Vec::new();
        for (_, m) in &msgs {
            assert_eq!(m.command, IpvsCommand::NewDest);
            let [IpvsAttr::Dest(nest)] = m.attrs.as_slice() else {
                panic!("{m:?}")
            };
            let get = |kind: u16| {
                nest.iter()
                    .find(|a| ipvsnl_wire::netlink_packet_core::Nla::kind(*a) == kind)
                    .unwrap_or_else(|| panic!("dest attr {kind} missing in {nest:?}"))
                    .clone()
            };
            assert_eq!(get(11), AddressFamily(2));
            for kind in [7, 8, 9] {
                assert!(matches!(
                    get(kind),
                    ActiveConns(0) | InactiveConns(0) | PersistentConns(0)
                ));
            }
            let (Stats(s), Stats64(s64)) = (get(10), get(12)) else {
                panic!()
            };
            zero_stats(&s, false);
            zero_stats(&s64, true);
            seen.push((
                get(1),
                get(2),
                get(3),
                get(4),
                get(5),
                get(6),
                get(13),
                get(14),
                get(15),
            ));
        }
        // Newest first, as ipvsadm added them.
        assert_eq!(
            seen,
            vec![
                (
                    Address(addr(&[10, 1, 0, 4])),
                    Port(80),
                    ForwardMethod(2),
                    Weight(1),
                    UpperThreshold(0),
                    LowerThreshold(0),
                    TunnelType(2),
                    TunnelPort(0),
                    TunnelFlags(1)
                ),
                (
                    Address(addr(&[10, 1, 0, 3])),
                    Port(80),
                    ForwardMethod(2),
                    Weight(1),
                    UpperThreshold(0),
                    LowerThreshold(0),
                    TunnelType(1),
                    TunnelPort(6080),
                    TunnelFlags(1)
                ),
                (
                    Address(addr(&[10, 1, 0, 2])),
                    Port(80),
                    ForwardMethod(3),
                    Weight(0),
                    UpperThreshold(0),
                    LowerThreshold(0),
                    TunnelType(0),
                    TunnelPort(0),
                    TunnelFlags(0)
                ),
                (
                    Address(addr(&[10, 1, 0, 1])),
                    Port(8080),
                    ForwardMethod(0),
                    Weight(3),
                    UpperThreshold(100),
                    LowerThreshold(10),
                    TunnelType(0),
                    TunnelPort(0),
                    TunnelFlags(0)
                ),
            ]
        );
    }
}

#[test]
fn info_config_and_daemons() {
    for k in ["6.1", "6.12"] {
        let (info, _) = fixture(k, "info");
        assert_eq!(info[0].1.command, IpvsCommand::SetInfo);
        assert_eq!(
            info[0].1.attrs,
            vec![IpvsAttr::Version(0x010201), IpvsAttr::ConnTabSize(4096)]
        );
        let (config, _) = fixture(k, "config");
        assert_eq!(config[0].1.command, IpvsCommand::SetConfig);
        assert_eq!(
            config[0].1.attrs,
            vec![
                IpvsAttr::TimeoutTcp(10),
                IpvsAttr::TimeoutTcpFin(20),
                IpvsAttr::TimeoutUdp(30)
            ]
        );
        let (daemons, _) = fixture(k, "daemon-dump");
        let nests: Vec<&Vec<DaemonAttr>> = daemons
            .iter()
            .map(|(_, m)| {
                assert_eq!(m.command, IpvsCommand::NewDaemon);
                match m.attrs.as_slice() {
                    [IpvsAttr::Daemon(n)] => n,
                    other => panic!("{other:?}"),
                }
            })
            .collect();
        use DaemonAttr::*;
        assert_eq!(
            *nests[0],
            vec![
                State(1),
                Interface("lo".into()),
                SyncId(5),
                SyncMaxLen(1000),
                McastPort(7777),
                McastTtl(2),
                McastGroup([224, 0, 0, 99]),
            ]
        );
        // The backup lists the kernel's defaults; maxlen comes from lo's MTU.
        assert_eq!(nests[1][..3], [State(2), Interface("lo".into()), SyncId(6)]);
        assert_eq!(
            nests[1][4..],
            [McastPort(8848), McastTtl(1), McastGroup([224, 0, 0, 81])]
        );
        assert!(matches!(nests[1][3], SyncMaxLen(n) if n > 1000));
    }
}

/// Emitting the typed values rebuilds the kernel's message exactly, i.e.
/// the other direction of the round trip starts from values, not bytes.
#[test]
fn values_emit_to_the_kernel_bytes() {
    for f in FIXTURES {
        for d in datagrams(f.hex) {
            for bytes in split(&d) {
                let msg = Msg::deserialize(bytes).unwrap();
                let NetlinkPayload::InnerMessage(g) = &msg.payload else {
                    continue;
                };
                // Rebuild from the parsed values alone.
                let rebuilt = IpvsMessage::new(g.payload.command, g.payload.attrs.clone());
                let mut genl = GenlMessage::from_payload(rebuilt);
                genl.set_resolved_family_id(msg.header.message_type);
                let mut nl = NetlinkMessage::from(genl);
                nl.header.flags = msg.header.flags;
                nl.header.sequence_number = msg.header.sequence_number;
                nl.header.port_number = msg.header.port_number;
                nl.finalize();
                let mut out = vec![0; nl.buffer_len()];
                nl.serialize(&mut out);
                assert_eq!(out, bytes, "{} {}", f.kernel, f.name);
            }
        }
    }
}

/// xorshift64, for the random and mutated bytes.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn arbitrary_and_mutated_bytes_never_panic() {
    let mut r = Rng(0x1234_5678_9abc_def1);
    for _ in 0..20_000 {
        let len = (r.next() % 160) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| r.next() as u8).collect();
        for cmd in [1u8, 5, 9, 12, 14, 99] {
            let _ = IpvsMessage::parse_with_param(&bytes[..], GenlHeader { cmd, version: 1 });
        }
        let _ = Msg::deserialize(&bytes);
    }
    let messages = fixture_messages();
    for _ in 0..20_000 {
        let mut m = messages[(r.next() % messages.len() as u64) as usize].clone();
        for _ in 0..1 + r.next() % 4 {
            let i = (r.next() % m.len() as u64) as usize;
            m[i] = r.next() as u8;
        }
        if r.next() % 3 == 1 {
            m.truncate((r.next() % (m.len() as u64 + 1)) as usize);
        }
        let _ = Msg::deserialize(&m);
        if m.len() > 20 {
            let _ = IpvsMessage::parse_with_param(
                &m[20..],
                GenlHeader {
                    cmd: m[16],
                    version: 1,
                },
            );
        }
    }
}

/// The IPVS messages of every fixture: (command, attribute bytes).
fn fixture_messages() -> Vec<Vec<u8>> {
    FIXTURES
        .iter()
        .flat_map(|f| datagrams(f.hex))
        .flat_map(|d| {
            split(&d)
                .into_iter()
                .map(<[u8]>::to_vec)
                .collect::<Vec<_>>()
        })
        .collect()
}
