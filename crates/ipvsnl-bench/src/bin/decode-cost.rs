//! The listing's per-service decode work, replayed on captured kernel bytes
//! for measuring (not a timed test: `.ci/decode-cost` runs it under
//! valgrind and prints data accesses and instructions per service).
//!
//! Under qemu TCG, where the kernel benches run, a guest's cost follows its
//! memory accesses more than its instructions, so both are counted. Each
//! workload handles one service's worth of a 10,000 x 5 listing: a
//! destination dump datagram of five destinations (the captured 6.1 dump's
//! first destination, five addresses), or one service message.

use std::hint::black_box;

use ipvsnl_wire::write::{begin_ipvs_message, end_message};
use ipvsnl_wire::IpvsCommand;

use crate::decode::{self, Detail};
use crate::listing::push_service;
use crate::proto::frame::{self, Reply};
use crate::request::push_service_nest;
use crate::{AddressFamily, DestinationEntry, Protocol, ServiceKey, TableEntry};

/// The blocks of hex lines of a capture file, as bytes.
fn datagrams(hex: &str) -> Vec<Vec<u8>> {
    hex.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|block| {
            let digits: Vec<u8> = block
                .bytes()
                .filter(u8::is_ascii_hexdigit)
                .map(|c| (c as char).to_digit(16).unwrap_or(0) as u8)
                .collect();
            digits.chunks(2).map(|p| p[0] << 4 | p[1]).collect()
        })
        .collect()
}

/// The first message of a capture, with its family id, and the offset of
/// its first attribute of `header` (length and number, 4 bytes).
fn first_message(hex: &str, header: [u8; 4]) -> (Vec<u8>, u16, usize) {
    let d = datagrams(hex);
    let first = &d[0];
    let len = u32::from_ne_bytes([first[0], first[1], first[2], first[3]]) as usize;
    let family = u16::from_ne_bytes([first[4], first[5]]);
    let msg = first[..len].to_vec();
    let at = msg
        .windows(4)
        .position(|w| w == header)
        .expect("the captured message has the attribute");
    (msg, family, at)
}

/// A datagram of five destinations of distinct addresses.
fn destination_datagram() -> (Vec<u8>, u16) {
    let hex = include_str!("../../ipvsnl-wire/tests/data/6.1/dest-dump.hex");
    // IPVS_DEST_ATTR_ADDR: 20 bytes, attribute 1.
    let (msg, family, at) = first_message(hex, [20, 0, 1, 0]);
    let mut out = Vec::new();
    for i in 0..5u8 {
        let start = out.len();
        out.extend_from_slice(&msg);
        out[start + at + 7] = 10 + i;
    }
    (out, family)
}

/// Decodes every destination of a datagram into `out`, as a listing does.
fn decode_destinations(datagram: &[u8], family: u16, out: &mut Vec<DestinationEntry>) {
    for f in frame::frames(datagram, family) {
        if let Ok(Reply::Data { attrs, .. }) = f.map(|f| f.reply) {
            decode::push_destination(attrs, AddressFamily::Inet, Detail::Full, out)
                .expect("captured bytes decode");
        }
    }
}

/// The per-service work of `which` (see the module), `n` times.
fn run(which: &str, n: usize) {
    let key = ServiceKey::Inet {
        protocol: Protocol::Tcp,
        addr: [10, 0, 0, 1].into(),
        port: 80,
    };
    let (dests, family) = destination_datagram();
    match which {
        // Decode five destinations, counters included, into a list reused
        // from service to service.
        "destinations" => {
            let mut sum = 0u64;
            let mut out = Vec::with_capacity(5);
            for _ in 0..n {
                out.clear();
                decode_destinations(black_box(&dests), family, &mut out);
                sum += out.iter().map(|d| d.stats.conns).sum::<u64>();
            }
            black_box(sum);
        }
        // What a listing does per service: encode the dump request, decode
        // the destinations into the service's list, keep the lists.
        "listing" => {
            let mut tx = Vec::new();
            let mut all: Vec<Vec<DestinationEntry>> = Vec::with_capacity(n);
            for _ in 0..n {
                tx.clear();
                let m = begin_ipvs_message(&mut tx, family, 0x301, 7, IpvsCommand::GetDest);
                push_service_nest(&mut tx, &key, None);
                end_message(&mut tx, m);
                black_box(&tx);
                let mut out = Vec::with_capacity(frame::data_message_count(&dests));
                decode_destinations(black_box(&dests), family, &mut out);
                all.push(out);
            }
            black_box(&all);
        }
        // Decode one service message into a table entry (kept), as a
        // listing does.
        "service" => {
            let hex = include_str!("../../ipvsnl-wire/tests/data/6.1/service-dump.hex");
            // IPVS_SVC_ATTR_ADDR: 20 bytes, attribute 3.
            let (msg, family, at) = first_message(hex, [20, 0, 3, 0]);
            let mut datagram = Vec::new();
            let mut out: Vec<TableEntry> = Vec::with_capacity(n);
            for i in 0..n as u32 {
                datagram.clear();
                datagram.extend_from_slice(&msg);
                datagram[at + 4..at + 8].copy_from_slice(&i.to_be_bytes());
                for f in frame::frames(black_box(&datagram), family) {
                    if let Ok(Reply::Data { attrs, .. }) = f.map(|f| f.reply) {
                        push_service(attrs, Detail::Full, &mut out).expect("captured bytes decode");
                    }
                }
            }
            black_box(&out);
        }
        other => panic!("unknown workload {other:?}: destinations, listing or service"),
    }
}

/// Runs `IPVSNL_COST_WORKLOAD` (destinations, listing or service)
/// `IPVSNL_COST_N` times; `.ci/decode-cost` takes the difference of two
/// counts under valgrind, so the fixed costs cancel.
#[test]
#[ignore = "a measurement: run by .ci/decode-cost"]
fn listing_decode_cost() {
    let which = std::env::var("IPVSNL_COST_WORKLOAD").unwrap_or_else(|_| "listing".into());
    let n = std::env::var("IPVSNL_COST_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    run(&which, n);
}

#[test]
fn every_workload_runs_on_the_captured_bytes() {
    for which in ["destinations", "listing", "service"] {
        run(which, 2);
    }
    let (dests, family) = destination_datagram();
    let decoded: Vec<DestinationEntry> = frame::frames(&dests, family)
        .filter_map(|f| match f.map(|f| f.reply) {
            Ok(Reply::Data { attrs, .. }) => {
                decode::destination_reply(attrs, AddressFamily::Inet, Detail::Full).ok()
            }
            _ => None,
        })
        .collect();
    // Five distinct destinations, as the workloads assume.
    assert_eq!(decoded.len(), 5);
    let mut addrs: Vec<_> = decoded.iter().map(|d| d.destination.addr).collect();
    addrs.dedup();
    assert_eq!(addrs.len(), 5);
}
