//! The plain listing: a raw socket read with a 4 KiB buffer, one service
//! dump keeping each service's key, then one destination dump per
//! service, each destination parsed into a plain struct pushed onto one
//! `Vec`: what a hand-written C client does.

use std::hint::black_box;
use std::io;

use ipvsnl::wire::netlink_packet_core::{NLMSG_DONE, NLMSG_ERROR, NLM_F_DUMP, NLM_F_REQUEST};
use ipvsnl::wire::{
    IpvsCommand, IPVS_CMD_ATTR_DEST, IPVS_CMD_ATTR_SERVICE, IPVS_DEST_ATTR_ACTIVE_CONNS,
    IPVS_DEST_ATTR_ADDR, IPVS_DEST_ATTR_ADDR_FAMILY, IPVS_DEST_ATTR_FWD_METHOD,
    IPVS_DEST_ATTR_INACT_CONNS, IPVS_DEST_ATTR_L_THRESH, IPVS_DEST_ATTR_PERSIST_CONNS,
    IPVS_DEST_ATTR_PORT, IPVS_DEST_ATTR_STATS64, IPVS_DEST_ATTR_U_THRESH, IPVS_DEST_ATTR_WEIGHT,
    IPVS_GENL_VERSION, IPVS_STATS_ATTR_CONNS, IPVS_STATS_ATTR_OUTBPS, IPVS_SVC_ATTR_ADDR,
    IPVS_SVC_ATTR_AF, IPVS_SVC_ATTR_FWMARK, IPVS_SVC_ATTR_PORT, IPVS_SVC_ATTR_PROTOCOL,
};

use super::attrs::{
    each_attr, get_addr, get_u16, get_u32, get_u64, put_attr, GENL_HDRLEN, NLMSG_HDRLEN,
};

/// A service's key, as the kernel sent it.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlainService {
    /// Address family (`AF_INET`, `AF_INET6`).
    pub af: u16,
    /// IP protocol number (6 TCP, 17 UDP, 132 SCTP).
    pub protocol: u16,
    /// The address, IPv4 in the first 4 bytes.
    pub addr: [u8; 16],
    /// Network order, as on the wire.
    pub port: [u8; 2],
    /// 0: keyed by protocol, address and port.
    pub fwmark: u32,
    /// Its destinations in [`PlainTable::dests`].
    pub first_dest: u32,
    /// How many destinations it has.
    pub dest_count: u32,
}

/// One destination, as a plain C client keeps it.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlainDest {
    /// Address family (`AF_INET`, `AF_INET6`).
    pub af: u16,
    /// The address, IPv4 in the first 4 bytes.
    pub addr: [u8; 16],
    /// The port, host order.
    pub port: u16,
    /// `IP_VS_CONN_F_*` forwarding method.
    pub fwd_method: u32,
    /// Scheduling weight.
    pub weight: u32,
    /// Upper connection threshold (0: none).
    pub u_thresh: u32,
    /// Lower connection threshold.
    pub l_thresh: u32,
    /// Active connections.
    pub active_conns: u32,
    /// Inactive connections.
    pub inact_conns: u32,
    /// Persistent connections.
    pub persist_conns: u32,
    /// `IPVS_STATS_ATTR_CONNS` .. `IPVS_STATS_ATTR_OUTBPS` of the STATS64 nest.
    pub stats: [u64; 10],
}

/// A listed table: services, and their destinations in one list.
pub struct PlainTable {
    /// The services, in the kernel's order.
    pub services: Vec<PlainService>,
    /// Every service's destinations, one after the other.
    pub dests: Vec<PlainDest>,
}

/// A service's key from a service nest.
pub fn parse_service_key(nest: &[u8]) -> PlainService {
    let mut s = PlainService::default();
    each_attr(nest, |t, p| match t {
        IPVS_SVC_ATTR_AF => s.af = get_u16(p),
        IPVS_SVC_ATTR_PROTOCOL => s.protocol = get_u16(p),
        IPVS_SVC_ATTR_ADDR => s.addr = get_addr(p),
        IPVS_SVC_ATTR_PORT => {
            if let Some(b) = p.get(..2) {
                s.port = [b[0], b[1]];
            }
        }
        IPVS_SVC_ATTR_FWMARK => s.fwmark = get_u32(p),
        _ => {}
    });
    s
}

/// One destination from a destination nest.
pub fn parse_dest(nest: &[u8]) -> PlainDest {
    let mut d = PlainDest::default();
    each_attr(nest, |t, p| match t {
        IPVS_DEST_ATTR_ADDR => d.addr = get_addr(p),
        IPVS_DEST_ATTR_PORT => d.port = p.get(..2).map_or(0, |b| u16::from_be_bytes([b[0], b[1]])),
        IPVS_DEST_ATTR_FWD_METHOD => d.fwd_method = get_u32(p),
        IPVS_DEST_ATTR_WEIGHT => d.weight = get_u32(p),
        IPVS_DEST_ATTR_U_THRESH => d.u_thresh = get_u32(p),
        IPVS_DEST_ATTR_L_THRESH => d.l_thresh = get_u32(p),
        IPVS_DEST_ATTR_ACTIVE_CONNS => d.active_conns = get_u32(p),
        IPVS_DEST_ATTR_INACT_CONNS => d.inact_conns = get_u32(p),
        IPVS_DEST_ATTR_PERSIST_CONNS => d.persist_conns = get_u32(p),
        IPVS_DEST_ATTR_ADDR_FAMILY => d.af = get_u16(p),
        IPVS_DEST_ATTR_STATS64 => each_attr(p, |t, p| {
            if (IPVS_STATS_ATTR_CONNS..=IPVS_STATS_ATTR_OUTBPS).contains(&t) {
                d.stats[usize::from(t - IPVS_STATS_ATTR_CONNS)] = get_u64(p);
            }
        }),
        _ => {}
    });
    d
}

/// A raw generic-netlink socket with a 4 KiB receive buffer.
pub struct PlainDumper {
    sock: netlink_sys::Socket,
    family: u16,
    seq: u32,
    req: Vec<u8>,
    buf: Vec<u8>,
}

impl PlainDumper {
    /// A dumper on a new socket in the caller's namespace.
    pub fn new(family: u16) -> io::Result<Self> {
        Ok(Self::on(super::socket::open()?, family))
    }

    /// A dumper on `sock`, reading 4 KiB at a time.
    pub fn on(sock: netlink_sys::Socket, family: u16) -> Self {
        Self::with_buffer(sock, family, 4096)
    }

    /// A dumper on `sock`, reading `bytes` at a time (the kernel sizes
    /// the socket's dump parts by the largest read, up to 32 KiB).
    pub fn with_buffer(sock: netlink_sys::Socket, family: u16, bytes: usize) -> Self {
        PlainDumper {
            sock,
            family,
            seq: 0,
            req: Vec::with_capacity(128),
            buf: vec![0; bytes],
        }
    }

    /// Sends a dump request of `command` (with the key nest of `key`) and
    /// hands the attributes of every reply to `each`, until `NLMSG_DONE`.
    pub fn dump(
        &mut self,
        command: IpvsCommand,
        key: Option<&PlainService>,
        mut each: impl FnMut(&[u8]),
    ) -> io::Result<()> {
        self.seq += 1;
        let seq = self.seq;
        let req = &mut self.req;
        req.clear();
        req.extend_from_slice(&0u32.to_ne_bytes());
        req.extend_from_slice(&self.family.to_ne_bytes());
        req.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
        req.extend_from_slice(&seq.to_ne_bytes());
        req.extend_from_slice(&0u32.to_ne_bytes());
        req.extend_from_slice(&[command.into(), IPVS_GENL_VERSION, 0, 0]);
        if let Some(k) = key {
            let nest = req.len();
            put_attr(req, IPVS_CMD_ATTR_SERVICE, &[]);
            put_attr(req, IPVS_SVC_ATTR_AF, &k.af.to_ne_bytes());
            if k.fwmark != 0 {
                put_attr(req, IPVS_SVC_ATTR_FWMARK, &k.fwmark.to_ne_bytes());
            } else {
                put_attr(req, IPVS_SVC_ATTR_PROTOCOL, &k.protocol.to_ne_bytes());
                put_attr(req, IPVS_SVC_ATTR_ADDR, &k.addr);
                put_attr(req, IPVS_SVC_ATTR_PORT, &k.port);
            }
            let len = (req.len() - nest) as u16;
            req[nest..nest + 2].copy_from_slice(&len.to_ne_bytes());
        }
        let len = req.len() as u32;
        req[..4].copy_from_slice(&len.to_ne_bytes());
        self.sock.send(req, 0)?;
        loop {
            let n = self.sock.recv(&mut &mut self.buf[..], 0)?;
            let buf = &self.buf[..n.min(self.buf.len())];
            let mut at = 0;
            while at + NLMSG_HDRLEN <= buf.len() {
                let len = get_u32(&buf[at..]) as usize;
                if len < NLMSG_HDRLEN || at + len > buf.len() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "truncated message",
                    ));
                }
                let msg = &buf[at..at + len];
                at += (len + 3) & !3;
                if get_u32(&msg[8..]) != seq {
                    continue;
                }
                let kind = get_u16(&msg[4..]);
                let code = get_u32(&msg[NLMSG_HDRLEN..]) as i32;
                if kind == NLMSG_DONE {
                    return if code < 0 {
                        Err(io::Error::from_raw_os_error(-code))
                    } else {
                        Ok(())
                    };
                } else if kind == NLMSG_ERROR {
                    if code < 0 {
                        return Err(io::Error::from_raw_os_error(-code));
                    }
                } else if kind == self.family && len >= NLMSG_HDRLEN + GENL_HDRLEN {
                    each(&msg[NLMSG_HDRLEN + GENL_HDRLEN..]);
                }
            }
        }
    }
}

/// The plain listing with `d`: one service dump, then one destination
/// dump per service.
pub fn list(d: &mut PlainDumper) -> io::Result<PlainTable> {
    let mut services = Vec::new();
    d.dump(IpvsCommand::GetService, None, |attrs| {
        each_attr(attrs, |t, p| {
            if t == IPVS_CMD_ATTR_SERVICE {
                services.push(parse_service_key(p));
            }
        })
    })?;
    let mut dests = Vec::new();
    for s in &mut services {
        s.first_dest = dests.len() as u32;
        d.dump(IpvsCommand::GetDest, Some(s), |attrs| {
            each_attr(attrs, |t, p| {
                if t == IPVS_CMD_ATTR_DEST {
                    dests.push(parse_dest(p));
                }
            })
        })?;
        s.dest_count = dests.len() as u32 - s.first_dest;
    }
    Ok(black_box(PlainTable { services, dests }))
}
