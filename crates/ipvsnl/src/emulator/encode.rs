//! The kernel's replies as bytes: the attribute sets of
//! `ip_vs_genl_fill_service`, `..._fill_dest`, `..._dump_daemon`, the
//! info and config replies, the controller's family reply, errors, ACKs
//! and `NLMSG_DONE`. Port ids are the requester's; every ACK and error is
//! capped (the library's sockets set `NETLINK_CAP_ACK`).

use ipvsnl_wire::netlink_packet_core::{NLMSG_DONE, NLMSG_ERROR, NLM_F_MULTIPART};
use ipvsnl_wire::write::{begin_nest, end_nest, NestStart};

use ipvsnl_wire::*;

use super::table::{Daemon, Dest, Svc, Times, AF_INET};
use crate::Stats;

/// `NLM_F_CAPPED`: the error message carries the request's header only.
const NLM_F_CAPPED: u16 = 0x100;
/// `IP_VS_SVC_F_HASHED`, set on every service the kernel shows.
pub(crate) const HASHED: u32 = 0x2;

/// A message being written.
pub(crate) struct Msg {
    at: usize,
}

/// Starts a message (header, then for a generic one the family header).
pub(crate) fn begin(
    out: &mut Vec<u8>,
    kind: u16,
    flags: u16,
    seq: u32,
    pid: u32,
    genl: Option<(u8, u8)>,
) -> Msg {
    let at = out.len();
    out.extend_from_slice(&0u32.to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&flags.to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&pid.to_ne_bytes());
    if let Some((cmd, version)) = genl {
        out.extend_from_slice(&[cmd, version, 0, 0]);
    }
    Msg { at }
}

/// Ends a message (writes its length).
pub(crate) fn end(out: &mut [u8], m: Msg) {
    let len = (out.len() - m.at) as u32;
    out[m.at..m.at + 4].copy_from_slice(&len.to_ne_bytes());
}

/// One attribute.
pub(crate) fn put(out: &mut Vec<u8>, kind: u16, value: &[u8]) {
    out.extend_from_slice(&((4 + value.len()) as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(value);
    let pad = (4 - value.len() % 4) % 4;
    out.extend_from_slice(&[0; 3][..pad]);
}

fn put_u32(out: &mut Vec<u8>, kind: u16, v: u32) {
    put(out, kind, &v.to_ne_bytes());
}

fn put_str(out: &mut Vec<u8>, kind: u16, s: &str) {
    let len = s.len() + 1;
    out.extend_from_slice(&((4 + len) as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(s.as_bytes());
    let pad = (4 - len % 4) % 4;
    out.extend_from_slice(&[0; 4][..1 + pad]);
}

fn nest(out: &mut Vec<u8>, kind: u16) -> NestStart {
    begin_nest(out, kind)
}

/// An `NLMSG_ERROR` for the request headed `request` (16 bytes): an ACK
/// when `errno` is 0.
pub(crate) fn error(out: &mut Vec<u8>, request: &[u8], errno: i32, pid: u32) {
    let seq = u32::from_ne_bytes(request[8..12].try_into().unwrap_or([0; 4]));
    let m = begin(out, NLMSG_ERROR, NLM_F_CAPPED, seq, pid, None);
    out.extend_from_slice(&(-errno).to_ne_bytes());
    out.extend_from_slice(&request[..16]);
    end(out, m);
}

/// A dump's `NLMSG_DONE` (its payload the int 0).
pub(crate) fn done(out: &mut Vec<u8>, seq: u32, pid: u32) {
    let m = begin(out, NLMSG_DONE, NLM_F_MULTIPART, seq, pid, None);
    out.extend_from_slice(&0i32.to_ne_bytes());
    end(out, m);
}

/// The `STATS` and `STATS64` nests (numbers 10 and 12, for services and
/// destinations alike) of counters all zero.
const ZERO_STATS: [u8; 216] = zero_stats();

const fn zero_stats() -> [u8; 216] {
    let mut b = [0u8; 216];
    // STATS: 92 bytes; eight u32 attributes (8 bytes) and the two byte
    // counts (4 and 5) as u64 (12 bytes).
    b[0] = 92;
    b[2] = 10;
    let mut at = 4;
    let mut kind = 1;
    while kind <= 10 {
        let len = if kind == 4 || kind == 5 { 12 } else { 8 };
        b[at] = len;
        b[at + 2] = kind;
        at += len as usize;
        kind += 1;
    }
    // STATS64: 124 bytes, ten u64 attributes.
    b[at] = 124;
    b[at + 2] = 12;
    at += 4;
    let mut kind = 1;
    while kind <= 10 {
        b[at] = 12;
        b[at + 2] = kind;
        at += 12;
        kind += 1;
    }
    b
}

/// A message written on the stack, appended at once: a listing writes
/// tens of thousands, and small appends to a growing vector cost more
/// than the writing.
struct Stack {
    buf: [u8; 512],
    at: usize,
}

impl Stack {
    fn new() -> Self {
        Stack {
            buf: [0; 512],
            at: 0,
        }
    }

    fn bytes(&mut self, v: &[u8]) {
        self.buf[self.at..self.at + v.len()].copy_from_slice(v);
        self.at += v.len();
    }

    /// An attribute of at most 16 bytes (padding is left zero).
    fn put(&mut self, kind: u16, v: &[u8]) {
        self.bytes(&((4 + v.len()) as u16).to_ne_bytes());
        self.bytes(&kind.to_ne_bytes());
        self.bytes(v);
        self.at += (4 - v.len() % 4) % 4;
    }

    fn u32(&mut self, kind: u16, v: u32) {
        self.put(kind, &v.to_ne_bytes());
    }

    /// Starts a nest; [`end_nest`](Self::end_nest) writes its length.
    fn nest(&mut self, kind: u16) -> usize {
        let at = self.at;
        self.put(kind, &[]);
        at
    }

    fn end_nest(&mut self, at: usize) {
        let len = (self.at - at) as u16;
        self.buf[at..at + 2].copy_from_slice(&len.to_ne_bytes());
    }

    /// The two stats nests: `STATS` (32-bit counters but the byte
    /// counts) and `STATS64`.
    fn stats(&mut self, kind32: u16, kind64: u16, s: &Stats) {
        if *s == Stats::default() && (kind32, kind64) == (10, 12) {
            // Most of a test's counters are zero: the nests are a copy.
            self.bytes(&ZERO_STATS);
            return;
        }
        let fields = [
            s.conns,
            s.in_packets,
            s.out_packets,
            s.in_bytes,
            s.out_bytes,
            s.cps,
            s.in_pps,
            s.out_pps,
            s.in_bps,
            s.out_bps,
        ];
        let n = self.nest(kind32);
        for (i, v) in fields.iter().enumerate() {
            let kind = i as u16 + 1;
            if kind == IPVS_STATS_ATTR_INBYTES || kind == IPVS_STATS_ATTR_OUTBYTES {
                self.put(kind, &v.to_ne_bytes());
            } else {
                self.u32(kind, *v as u32);
            }
        }
        self.end_nest(n);
        let n = self.nest(kind64);
        for (i, v) in fields.iter().enumerate() {
            self.put(i as u16 + 1, &v.to_ne_bytes());
        }
        self.end_nest(n);
    }

    /// Appends the message (its length written first).
    fn finish(&mut self, out: &mut Vec<u8>) {
        let len = self.at as u32;
        self.buf[..4].copy_from_slice(&len.to_ne_bytes());
        out.extend_from_slice(&self.buf[..self.at]);
    }

    fn header(&mut self, kind: u16, flags: u16, seq: u32, pid: u32, cmd: u8) {
        self.bytes(&0u32.to_ne_bytes());
        self.bytes(&kind.to_ne_bytes());
        self.bytes(&flags.to_ne_bytes());
        self.bytes(&seq.to_ne_bytes());
        self.bytes(&pid.to_ne_bytes());
        self.bytes(&[cmd, 1, 0, 0]);
    }
}

/// A service message (`NEW_SERVICE`), as a dump part (`flags`
/// `NLM_F_MULTI`) or a get's reply (0).
pub(crate) fn service(out: &mut Vec<u8>, family: u16, flags: u16, seq: u32, pid: u32, s: &Svc) {
    let mut m = Stack::new();
    m.header(family, flags, seq, pid, IpvsCommand::NewService.into());
    let n = m.nest(IPVS_CMD_ATTR_SERVICE);
    m.put(IPVS_SVC_ATTR_AF, &s.id.af.to_ne_bytes());
    if s.id.fwmark != 0 {
        m.u32(IPVS_SVC_ATTR_FWMARK, s.id.fwmark);
    } else {
        m.put(IPVS_SVC_ATTR_PROTOCOL, &s.id.protocol.to_ne_bytes());
        m.put(IPVS_SVC_ATTR_ADDR, &s.id.addr);
        m.put(IPVS_SVC_ATTR_PORT, &s.id.port.to_be_bytes());
    }
    // Names are at most 15 characters (the policy): with their NUL, 16.
    let mut name = [0u8; 16];
    let sched = &s.sched.as_bytes()[..s.sched.len().min(15)];
    name[..sched.len()].copy_from_slice(sched);
    m.put(IPVS_SVC_ATTR_SCHED_NAME, &name[..sched.len() + 1]);
    if let Some(pe) = &s.pe {
        let mut name = [0u8; 16];
        let pe = &pe.as_bytes()[..pe.len().min(15)];
        name[..pe.len()].copy_from_slice(pe);
        m.put(IPVS_SVC_ATTR_PE_NAME, &name[..pe.len() + 1]);
    }
    let mut flags = [0u8; 8];
    flags[..4].copy_from_slice(&(s.flags | HASHED).to_ne_bytes());
    flags[4..].copy_from_slice(&u32::MAX.to_ne_bytes());
    m.put(IPVS_SVC_ATTR_FLAGS, &flags);
    m.u32(IPVS_SVC_ATTR_TIMEOUT, s.timeout);
    m.put(IPVS_SVC_ATTR_NETMASK, &s.netmask);
    m.stats(IPVS_SVC_ATTR_STATS, IPVS_SVC_ATTR_STATS64, &s.stats);
    m.end_nest(n);
    m.finish(out);
}

/// A destination dump part (`NEW_DEST`).
pub(crate) fn dest(out: &mut Vec<u8>, family: u16, seq: u32, pid: u32, d: &Dest) {
    let mut m = Stack::new();
    m.header(
        family,
        NLM_F_MULTIPART,
        seq,
        pid,
        IpvsCommand::NewDest.into(),
    );
    let n = m.nest(IPVS_CMD_ATTR_DEST);
    m.put(IPVS_DEST_ATTR_ADDR, &d.addr);
    m.put(IPVS_DEST_ATTR_PORT, &d.port.to_be_bytes());
    m.u32(IPVS_DEST_ATTR_FWD_METHOD, d.fwd);
    m.u32(IPVS_DEST_ATTR_WEIGHT, d.weight as u32);
    m.put(IPVS_DEST_ATTR_TUN_TYPE, &[d.tun_type]);
    m.put(IPVS_DEST_ATTR_TUN_PORT, &d.tun_port.to_be_bytes());
    m.put(IPVS_DEST_ATTR_TUN_FLAGS, &d.tun_flags.to_ne_bytes());
    m.u32(IPVS_DEST_ATTR_U_THRESH, d.u_thresh);
    m.u32(IPVS_DEST_ATTR_L_THRESH, d.l_thresh);
    m.u32(IPVS_DEST_ATTR_ACTIVE_CONNS, d.active);
    m.u32(IPVS_DEST_ATTR_INACT_CONNS, d.inactive);
    m.u32(IPVS_DEST_ATTR_PERSIST_CONNS, d.persistent);
    m.stats(IPVS_DEST_ATTR_STATS, IPVS_DEST_ATTR_STATS64, &d.stats);
    m.put(IPVS_DEST_ATTR_ADDR_FAMILY, &d.af.to_ne_bytes());
    m.end_nest(n);
    m.finish(out);
}

/// A sync daemon dump part (`NEW_DAEMON`).
pub(crate) fn daemon(out: &mut Vec<u8>, family: u16, seq: u32, pid: u32, d: &Daemon) {
    let m = begin(
        out,
        family,
        NLM_F_MULTIPART,
        seq,
        pid,
        Some((IpvsCommand::NewDaemon.into(), 1)),
    );
    let n = nest(out, IPVS_CMD_ATTR_DAEMON);
    put_u32(out, IPVS_DAEMON_ATTR_STATE, d.state);
    put_str(out, IPVS_DAEMON_ATTR_MCAST_IFN, &d.ifname);
    put_u32(out, IPVS_DAEMON_ATTR_SYNC_ID, d.sync_id);
    put(out, IPVS_DAEMON_ATTR_SYNC_MAXLEN, &d.max_len.to_ne_bytes());
    put(out, IPVS_DAEMON_ATTR_MCAST_PORT, &d.port.to_ne_bytes());
    put(out, IPVS_DAEMON_ATTR_MCAST_TTL, &[d.ttl]);
    if d.group_af == AF_INET {
        put(out, IPVS_DAEMON_ATTR_MCAST_GROUP, &d.group[..4]);
    } else {
        put(out, IPVS_DAEMON_ATTR_MCAST_GROUP6, &d.group);
    }
    end_nest(out, n);
    end(out, m);
}

/// `GET_INFO`'s reply (`SET_INFO`).
pub(crate) fn info(out: &mut Vec<u8>, family: u16, seq: u32, pid: u32, conn_tab_size: u32) {
    let m = begin(
        out,
        family,
        0,
        seq,
        pid,
        Some((IpvsCommand::SetInfo.into(), 1)),
    );
    put_u32(out, IPVS_INFO_ATTR_VERSION, 0x0001_0201);
    put_u32(out, IPVS_INFO_ATTR_CONN_TAB_SIZE, conn_tab_size);
    end(out, m);
}

/// `GET_CONFIG`'s reply (`SET_CONFIG`).
pub(crate) fn config(out: &mut Vec<u8>, family: u16, seq: u32, pid: u32, t: &Times) {
    let m = begin(
        out,
        family,
        0,
        seq,
        pid,
        Some((IpvsCommand::SetConfig.into(), 1)),
    );
    put_u32(out, IPVS_CMD_ATTR_TIMEOUT_TCP, t.tcp);
    put_u32(out, IPVS_CMD_ATTR_TIMEOUT_TCP_FIN, t.tcp_fin);
    put_u32(out, IPVS_CMD_ATTR_TIMEOUT_UDP, t.udp);
    end(out, m);
}

/// The controller's `NEWFAMILY` reply for the IPVS family.
pub(crate) fn family(out: &mut Vec<u8>, seq: u32, pid: u32, id: u16) {
    const GENL_ID_CTRL: u16 = 0x10;
    let m = begin(out, GENL_ID_CTRL, 0, seq, pid, Some((1, 2)));
    put_str(out, 2, IPVS_GENL_NAME); // CTRL_ATTR_FAMILY_NAME
    put(out, 1, &id.to_ne_bytes()); // CTRL_ATTR_FAMILY_ID
    put_u32(out, 3, 1); // CTRL_ATTR_VERSION
    put_u32(out, 4, 0); // CTRL_ATTR_HDRSIZE
    put_u32(out, 5, 6); // CTRL_ATTR_MAXATTR
    end(out, m);
}
