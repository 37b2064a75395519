//! The listing's decode work per service, replayed on captured kernel
//! bytes through the library's public protocol core (not a timed run:
//! `scripts/measure/decode-cost` runs it under valgrind and prints data accesses and
//! instructions per service).
//!
//! `decode-cost WORKLOAD N` runs `WORKLOAD` N times:
//!
//! * `destinations`: split a destination dump datagram of five
//!   destinations (the captured 6.1 dump's first destination, five
//!   addresses) by their headers and decode each message with the wire
//!   crate's `IpvsMessage::parse_with_param` (the library's framing is
//!   not public: the `listing` workload goes through it);
//! * `listing`: what a listing does per service through the public
//!   machines: a `Session::call` dump of the service's destinations
//!   (request encoded by the machine's writer, the captured datagram and
//!   `NLMSG_DONE` fed back), each message decoded as above and kept;
//! * `service`: one service message split and decoded.
//!
//! The library's own listing decode (into `DestinationEntry` and
//! `TableEntry`) is not public, so these count the public decode path,
//! not `Client::table`'s.
//!
//! Under qemu TCG, where the kernel benches run, a guest's cost follows
//! its memory accesses more than its instructions, so `scripts/measure/decode-cost`
//! counts both.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Duration;

use ipvsnl::proto::{CallKind, Input, Machine, Poll, Replies, Session};
use ipvsnl::wire::netlink_packet_core::{ParseableParametrized, NLMSG_DONE, NLMSG_ERROR};
use ipvsnl::wire::netlink_packet_generic::GenlHeader;
use ipvsnl::wire::write::{begin_ipvs_message, end_message};
use ipvsnl::wire::{
    IpvsCommand, IpvsMessage, IPVS_CMD_ATTR_SERVICE, IPVS_SVC_ATTR_ADDR, IPVS_SVC_ATTR_AF,
    IPVS_SVC_ATTR_PORT, IPVS_SVC_ATTR_PROTOCOL,
};
use ipvsnl_bench::plain::attrs::{begin_nest, end_nest, put_attr};

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
    let hex = include_str!("../../../ipvsnl-wire/tests/data/6.1/dest-dump.hex");
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

/// `GENL_ID_CTRL`: the generic-netlink controller's message type.
const GENL_ID_CTRL: u16 = 0x10;

/// The attributes of an IPVS message of `command`, parsed.
fn decode(command: u8, attrs: &[u8]) -> Result<IpvsMessage, ipvsnl::DecodeError> {
    let header = GenlHeader {
        cmd: command,
        version: 1,
    };
    IpvsMessage::parse_with_param(attrs, header).map_err(|e| e.to_string().into())
}

/// Decodes every IPVS message (of type `family`) of a datagram into
/// `out`, split by their headers.
fn decode_all(datagram: &[u8], family: u16, out: &mut Vec<IpvsMessage>) {
    let mut rest = datagram;
    while let Some(&[l0, l1, l2, l3, t0, t1, ..]) = rest.get(..16) {
        let len = u32::from_ne_bytes([l0, l1, l2, l3]) as usize;
        let Some(payload) = rest.get(16..len) else {
            break;
        };
        if u16::from_ne_bytes([t0, t1]) == family && payload.len() >= 4 {
            out.push(decode(payload[0], &payload[4..]).expect("captured bytes decode"));
        }
        rest = rest.get((len.max(16) + 3) & !3..).unwrap_or_default();
    }
}

/// The replies of one dump, decoded and kept.
#[derive(Default)]
struct Decoded(Vec<IpvsMessage>);

impl Replies for Decoded {
    fn message(&mut self, command: u8, attrs: &[u8]) -> Result<(), ipvsnl::DecodeError> {
        self.0.push(decode(command, attrs)?);
        Ok(())
    }
    fn restart(&mut self) {
        self.0.clear();
    }
    fn datagram(&mut self, datagram: &[u8]) {
        // Room for every data message of the datagram (a dump part's
        // destinations, not its NLMSG_DONE), counted by their headers.
        let mut count = 0;
        let mut rest = datagram;
        while let Some(&[l0, l1, l2, l3, t0, t1]) = rest.get(..6) {
            let len = u32::from_ne_bytes([l0, l1, l2, l3]) as usize;
            count += usize::from(u16::from_ne_bytes([t0, t1]) >= 0x10);
            rest = rest.get((len.max(16) + 3) & !3..).unwrap_or_default();
        }
        self.0.reserve(count);
    }
}

/// `datagram` with every message's sequence number set to `seq`.
fn renumbered(datagram: &[u8], seq: u32, into: &mut Vec<u8>) {
    into.clear();
    into.extend_from_slice(datagram);
    let mut at = 0;
    while at + 16 <= into.len() {
        let len = u32::from_ne_bytes([into[at], into[at + 1], into[at + 2], into[at + 3]]) as usize;
        into[at + 8..at + 12].copy_from_slice(&seq.to_ne_bytes());
        at += (len.max(16) + 3) & !3;
    }
}

/// A netlink message of `kind` with a 4-byte code as its payload (an ACK
/// or `NLMSG_DONE`), and `extra` before it (a family reply).
fn control(kind: u16, seq: u32, extra: &[u8]) -> Vec<u8> {
    let mut out = extra.to_vec();
    let pad = if kind == NLMSG_ERROR { 16 } else { 0 };
    out.extend_from_slice(&(20u32 + pad).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&2u16.to_ne_bytes()); // NLM_F_MULTI
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(&0i32.to_ne_bytes());
    out.resize(out.len() + pad as usize, 0);
    out
}

/// Resolves the family in `session` from a scripted controller reply.
fn resolve(session: &mut Session, family: u16) {
    let mut lookup = session.resolve_family();
    let mut seq = 0;
    loop {
        match lookup.poll() {
            Poll::Transmit(bytes) => {
                seq = u32::from_ne_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
                lookup.handle(Input::Sent);
            }
            Poll::Receive(_) => {
                // CTRL_CMD_NEWFAMILY with CTRL_ATTR_FAMILY_ID, then the ACK.
                let mut reply = Vec::new();
                reply.extend_from_slice(&28u32.to_ne_bytes());
                reply.extend_from_slice(&GENL_ID_CTRL.to_ne_bytes());
                reply.extend_from_slice(&0u16.to_ne_bytes());
                reply.extend_from_slice(&seq.to_ne_bytes());
                reply.extend_from_slice(&0u32.to_ne_bytes());
                reply.extend_from_slice(&[1, 2, 0, 0, 6, 0, 1, 0]);
                reply.extend_from_slice(&family.to_ne_bytes());
                reply.extend_from_slice(&[0, 0]);
                let datagram = control(NLMSG_ERROR, seq, &reply);
                lookup.handle(Input::Datagram(&datagram));
            }
            _ => break,
        }
    }
    assert_eq!(lookup.result().map(|r| r.ok()), Some(Some(family)));
}

/// The per-service work of `which` (see the module), `n` times.
fn run(which: &str, n: usize) -> Result<(), String> {
    let (dests, family) = destination_datagram();
    match which {
        "destinations" => {
            let mut out = Vec::with_capacity(5);
            for _ in 0..n {
                out.clear();
                decode_all(black_box(&dests), family, &mut out);
                black_box(&out);
            }
        }
        "listing" => {
            let mut session = Session::new(Duration::from_secs(1));
            resolve(&mut session, family);
            let mut all: Vec<Vec<IpvsMessage>> = Vec::with_capacity(n);
            let mut rx = Vec::new();
            let write = |out: &mut Vec<u8>, family: u16, seq: u32, flags: u16| {
                let m = begin_ipvs_message(out, family, flags, seq, IpvsCommand::GetDest);
                let nest = begin_nest(out, IPVS_CMD_ATTR_SERVICE);
                put_attr(out, IPVS_SVC_ATTR_AF, &2u16.to_ne_bytes());
                put_attr(out, IPVS_SVC_ATTR_PROTOCOL, &6u16.to_ne_bytes());
                put_attr(
                    out,
                    IPVS_SVC_ATTR_ADDR,
                    &[10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                );
                put_attr(out, IPVS_SVC_ATTR_PORT, &80u16.to_be_bytes());
                end_nest(out, nest);
                end_message(out, m);
            };
            for _ in 0..n {
                let mut call = session.call(CallKind::Dump, write, Decoded::default());
                let mut seq = 0;
                let mut fed = 0;
                loop {
                    match call.poll() {
                        Poll::Transmit(bytes) => {
                            seq = u32::from_ne_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
                            black_box(bytes);
                            call.handle(Input::Sent);
                        }
                        Poll::Receive(_) => {
                            if fed == 0 {
                                renumbered(black_box(&dests), seq, &mut rx);
                            } else {
                                rx = control(NLMSG_DONE, seq, &[]);
                            }
                            fed += 1;
                            call.handle(Input::Datagram(&rx));
                        }
                        _ => break,
                    }
                }
                call.result()
                    .unwrap_or(Err(ipvsnl::proto::Failure::Overrun))
                    .map_err(|e| format!("replayed dump: {e:?}"))?;
                all.push(std::mem::take(&mut call.replies().0));
            }
            if all.iter().any(|d| d.len() != 5) {
                return Err("a replayed dump did not give five destinations".into());
            }
            black_box(&all);
        }
        "service" => {
            let hex = include_str!("../../../ipvsnl-wire/tests/data/6.1/service-dump.hex");
            // IPVS_SVC_ATTR_ADDR: 20 bytes, attribute 3.
            let (msg, family, at) = first_message(hex, [20, 0, 3, 0]);
            let mut datagram = Vec::new();
            let mut out = Vec::with_capacity(n);
            for i in 0..n as u32 {
                datagram.clear();
                datagram.extend_from_slice(&msg);
                datagram[at + 4..at + 8].copy_from_slice(&i.to_be_bytes());
                decode_all(black_box(&datagram), family, &mut out);
            }
            black_box(&out);
        }
        other => {
            return Err(format!(
                "unknown workload {other:?}: destinations, listing or service"
            ))
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "listing".into());
    let n = args.next().and_then(|v| v.parse().ok()).unwrap_or(1000);
    match run(&which, n) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("decode-cost: {e}");
            ExitCode::FAILURE
        }
    }
}
