//! Emit and parse of a 10,000-service dump: kernel-shaped NEW_SERVICE
//! messages (the attribute set and order of the kernel's service dump, with
//! STATS and STATS64), each in its netlink and generic-netlink headers as a
//! dump delivers them. Figures are per message (Throughput::Elements).
//! `parse` builds the owned attribute lists; `parse_values` reads each
//! service nest in one pass with the values instead.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ipvsnl_wire::netlink_packet_core::{
    NetlinkBuffer, NetlinkMessage, NetlinkPayload, NLM_F_MULTIPART,
};
use ipvsnl_wire::netlink_packet_generic::GenlMessage;
use ipvsnl_wire::{
    FlagsMask, IpvsAttr, IpvsCommand, IpvsMessage, ServiceAttr, ServiceValues, StatsAttr,
    StatsField, StatsValues,
};

const SERVICES: usize = 10_000;
const FAMILY: u16 = 0x25;

fn stats(seed: u64, wide: bool) -> Vec<StatsAttr> {
    StatsField::ALL
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let v = seed.wrapping_mul(2654435761).wrapping_add(i as u64 * 977);
            // In STATS the byte counters are 64-bit, the rest 32-bit.
            let bytes = matches!(f, StatsField::InBytes | StatsField::OutBytes);
            if wide || bytes {
                StatsAttr::U64(*f, v)
            } else {
                StatsAttr::U32(*f, v as u32)
            }
        })
        .collect()
}

fn service_message(i: usize) -> IpvsMessage {
    let mut addr = [0u8; 16];
    addr[..4].copy_from_slice(&[10, (i >> 16) as u8, (i >> 8) as u8, i as u8]);
    let mut nest = vec![
        ServiceAttr::AddressFamily(2),
        ServiceAttr::Protocol(6),
        ServiceAttr::Address(addr),
        ServiceAttr::Port(80 + (i % 3) as u16),
        ServiceAttr::Scheduler(["wlc", "rr", "mh"][i % 3].to_owned()),
    ];
    if i % 10 == 3 {
        nest.push(ServiceAttr::PersistenceEngine("sip".into()));
    }
    nest.extend([
        ServiceAttr::Flags(FlagsMask::replace(0x2 | (i % 2) as u32)),
        ServiceAttr::Timeout(if i % 2 == 1 { 300 } else { 0 }),
        ServiceAttr::Netmask([255, 255, 255, 255]),
        ServiceAttr::Stats(stats(i as u64, false)),
        ServiceAttr::Stats64(stats(i as u64, true)),
    ]);
    IpvsMessage::new(IpvsCommand::NewService, vec![IpvsAttr::Service(nest)])
}

fn frame(msg: IpvsMessage, seq: u32) -> NetlinkMessage<GenlMessage<IpvsMessage>> {
    let mut genl = GenlMessage::from_payload(msg);
    genl.set_resolved_family_id(FAMILY);
    let mut nl = NetlinkMessage::from(genl);
    nl.header.flags = NLM_F_MULTIPART;
    nl.header.sequence_number = seq;
    nl.header.port_number = 4242;
    nl.finalize();
    nl
}

fn emit_all(msgs: &[NetlinkMessage<GenlMessage<IpvsMessage>>], out: &mut Vec<u8>) {
    out.clear();
    for m in msgs {
        let start = out.len();
        out.resize(start + m.buffer_len(), 0);
        m.serialize(&mut out[start..]);
    }
}

/// The netlink messages of a dump's bytes, one by one.
fn messages(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut off = 0;
    std::iter::from_fn(move || {
        let rest = bytes.get(off..).filter(|r| !r.is_empty())?;
        let len = NetlinkBuffer::new_checked(rest).expect("header").length() as usize;
        off += (len + 3) & !3;
        Some(&rest[..len])
    })
}

fn parse_all(bytes: &[u8]) -> usize {
    let mut n = 0;
    for m in messages(bytes) {
        let msg = NetlinkMessage::<GenlMessage<IpvsMessage>>::deserialize(m)
            .expect("kernel-shaped message parses");
        if let NetlinkPayload::InnerMessage(g) = msg.payload {
            n += g.payload.attrs.len();
        }
    }
    n
}

/// The same messages read in one pass each ([`ServiceValues`]), the 64-bit
/// counters included.
fn values_all(bytes: &[u8]) -> usize {
    let mut n = 0;
    for m in messages(bytes) {
        let v = ServiceValues::find(&m[20..])
            .expect("kernel-shaped message parses")
            .expect("a service nest");
        let stats = StatsValues::read(v.stats64.expect("stats64"), "STATS64").expect("counters");
        black_box(
            StatsField::ALL
                .iter()
                .map(|f| stats.get(*f).unwrap_or(0))
                .fold(0u64, u64::wrapping_add),
        );
        n += usize::from(v.address_family.is_some() && v.scheduler.is_some());
    }
    n
}

fn bench(c: &mut Criterion) {
    let msgs: Vec<_> = (0..SERVICES)
        .map(|i| frame(service_message(i), 1))
        .collect();
    let mut bytes = Vec::new();
    emit_all(&msgs, &mut bytes);
    assert_eq!(parse_all(&bytes), SERVICES);
    assert_eq!(values_all(&bytes), SERVICES);
    let mut g = c.benchmark_group("service_dump_10k");
    g.throughput(Throughput::Elements(SERVICES as u64));
    g.bench_function("emit", |b| {
        let mut out = Vec::with_capacity(bytes.len());
        b.iter(|| {
            emit_all(black_box(&msgs), &mut out);
            black_box(out.len())
        })
    });
    g.bench_function("parse", |b| {
        b.iter(|| black_box(parse_all(black_box(&bytes))))
    });
    g.bench_function("parse_values", |b| {
        b.iter(|| black_box(values_all(black_box(&bytes))))
    });
    g.bench_function("build_and_emit", |b| {
        b.iter_batched(
            || (),
            |()| {
                let msgs: Vec<_> = (0..SERVICES)
                    .map(|i| frame(service_message(i), 1))
                    .collect();
                let mut out = Vec::new();
                emit_all(&msgs, &mut out);
                out.len()
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
    eprintln!(
        "dump: {SERVICES} messages, {} bytes ({} per message)",
        bytes.len(),
        bytes.len() / SERVICES
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
