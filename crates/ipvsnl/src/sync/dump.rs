//! The fast listing: one service dump, then one destination dump per
//! service, on the client's one socket, decoded straight from the kernel's
//! bytes into the model (no intermediate attribute lists).
//!
//! One dump at a time: the kernel answers a second dump request on a socket
//! whose first dump is unfinished with `EBUSY`. The first part of a dump is
//! produced while the request is being sent, so a service with a few
//! destinations costs one `sendmsg` and one `recvmsg`. The kernel sizes the
//! parts from the reader's buffer: the client's page-sized receive buffer
//! keeps them small, which measured faster than big ones.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipvsnl_wire::netlink_packet_core::{NLMSG_DONE, NLMSG_ERROR, NLM_F_DUMP, NLM_F_REQUEST};

use crate::pipeline::{attr, begin, end};
use crate::request::addr_bytes;
use crate::{
    AddressFamily, Client, Destination, DestinationEntry, Error, Forward, Netmask, Protocol,
    RequestKind, Scheduler, Service, ServiceEntry, ServiceFlags, ServiceKey, Stats, TableEntry,
    Tunnel, TunnelFlags, TunnelKind,
};

const GET_SERVICE: u8 = 4;
const GET_DEST: u8 = 8;

impl Client {
    /// Every service with its destinations, like [`Client::table`], decoded
    /// straight from the kernel's messages: the listing the sync engine
    /// uses.
    pub fn list_table(&mut self) -> Result<Vec<TableEntry>, Error> {
        self.list_table_where(|_| true)
    }

    /// Every service, and the destinations of those `wanted` accepts (the
    /// others are listed with none).
    pub fn list_table_where(
        &mut self,
        mut wanted: impl FnMut(&ServiceKey) -> bool,
    ) -> Result<Vec<TableEntry>, Error> {
        let services = self.list_services()?;
        let mut out = Vec::with_capacity(services.len());
        for service in services {
            let destinations = if wanted(&service.service.key) {
                self.list_destinations(&service.service.key)?
            } else {
                Vec::new()
            };
            out.push(TableEntry {
                service,
                destinations,
            });
        }
        Ok(out)
    }

    /// Every service (one dump), decoded directly.
    pub(crate) fn list_services(&mut self) -> Result<Vec<ServiceEntry>, Error> {
        let kind = RequestKind::ListServices;
        let mut out = Vec::new();
        self.dump(kind, GET_SERVICE, None, |attrs| {
            let nest = find(attrs, 1)?.ok_or("no IPVS_CMD_ATTR_SERVICE in the reply")?;
            out.push(service_entry(nest)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// The destinations of one service (one dump), decoded directly.
    pub(crate) fn list_destinations(
        &mut self,
        key: &ServiceKey,
    ) -> Result<Vec<DestinationEntry>, Error> {
        let kind = RequestKind::ListDestinations;
        let family = key.family();
        let mut out = Vec::new();
        self.dump(kind, GET_DEST, Some(key), |attrs| {
            let nest = find(attrs, 2)?.ok_or("no IPVS_CMD_ATTR_DEST in the reply")?;
            out.push(destination_entry(nest, family)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// Sends one dump request and hands each message's attributes to
    /// `each`, until `NLMSG_DONE`.
    fn dump(
        &mut self,
        kind: RequestKind,
        cmd: u8,
        key: Option<&ServiceKey>,
        mut each: impl FnMut(&[u8]) -> Result<(), String>,
    ) -> Result<(), Error> {
        let family = self.family_id()?;
        let seq = self.next_seq();
        let target = || key.map(ToString::to_string).unwrap_or_default();
        self.tx.clear();
        let tx = &mut self.tx;
        tx.extend_from_slice(&0u32.to_ne_bytes());
        tx.extend_from_slice(&family.to_ne_bytes());
        tx.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
        tx.extend_from_slice(&seq.to_ne_bytes());
        tx.extend_from_slice(&0u32.to_ne_bytes());
        tx.extend_from_slice(&[cmd, ipvsnl_wire::IPVS_GENL_VERSION, 0, 0]);
        if let Some(k) = key {
            let nest = begin(tx, 1);
            key_attrs(tx, k);
            end(tx, nest);
        }
        let len = tx.len() as u32;
        tx[..4].copy_from_slice(&len.to_ne_bytes());
        self.sock
            .send(&self.tx)
            .map_err(|e| self.io_error(kind, e))?;
        loop {
            let n = self.recv(kind)?;
            let mut at = 0;
            let buf = &self.rx[..n];
            while at + 16 <= n {
                let h = &buf[at..];
                let len = u32::from_ne_bytes([h[0], h[1], h[2], h[3]]) as usize;
                if len < 16 || at + len > n {
                    return Err(Error::Decode {
                        kind,
                        detail: format!("bad netlink message length {len} at byte {at}"),
                    });
                }
                let msg_type = u16::from_ne_bytes([h[4], h[5]]);
                let msg_seq = u32::from_ne_bytes([h[8], h[9], h[10], h[11]]);
                let payload = &h[16..len];
                at += (len + 3) & !3;
                if msg_seq != seq {
                    continue; // a late reply to an earlier, abandoned request
                }
                match msg_type {
                    NLMSG_DONE => return Ok(()),
                    NLMSG_ERROR => {
                        let code = payload
                            .get(..4)
                            .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                            .unwrap_or(-libc::EIO);
                        if code != 0 {
                            return Err(Error::kernel(kind, target(), code.saturating_abs()));
                        }
                    }
                    t if t == family => {
                        let attrs = payload.get(4..).ok_or_else(|| Error::Decode {
                            kind,
                            detail: "IPVS message too short".into(),
                        })?;
                        each(attrs).map_err(|detail| Error::Decode { kind, detail })?;
                    }
                    _ => {}
                }
            }
        }
    }
}

fn key_attrs(out: &mut Vec<u8>, k: &ServiceKey) {
    match k {
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => {
            attr(out, 1, &AddressFamily::of(addr).to_raw().to_ne_bytes());
            attr(out, 2, &protocol.to_raw().to_ne_bytes());
            attr(out, 3, &addr_bytes(addr));
            attr(out, 4, &port.to_be_bytes());
        }
        ServiceKey::Fwmark { mark, family } => {
            attr(out, 1, &family.to_raw().to_ne_bytes());
            attr(out, 5, &mark.to_ne_bytes());
        }
    }
}

/// Walks the attributes of `buf`, calling `f(type, value)` for each.
fn walk<'a>(mut buf: &'a [u8], mut f: impl FnMut(u16, &'a [u8])) -> Result<(), String> {
    while buf.len() >= 4 {
        let len = u16::from_ne_bytes([buf[0], buf[1]]) as usize;
        let kind = u16::from_ne_bytes([buf[2], buf[3]]) & 0x3fff;
        if len < 4 || len > buf.len() {
            return Err(format!("malformed attribute (length {len})"));
        }
        f(kind, &buf[4..len]);
        buf = &buf[((len + 3) & !3).min(buf.len())..];
    }
    Ok(())
}

fn find(buf: &[u8], kind: u16) -> Result<Option<&[u8]>, String> {
    let mut found = None;
    walk(buf, |k, v| {
        if k == kind && found.is_none() {
            found = Some(v);
        }
    })?;
    Ok(found)
}

fn u16_of(v: &[u8]) -> Option<u16> {
    Some(u16::from_ne_bytes(v.get(..2)?.try_into().ok()?))
}

fn be16_of(v: &[u8]) -> Option<u16> {
    Some(u16::from_be_bytes(v.get(..2)?.try_into().ok()?))
}

fn u32_of(v: &[u8]) -> Option<u32> {
    Some(u32::from_ne_bytes(v.get(..4)?.try_into().ok()?))
}

fn ip_of(v: &[u8], family: AddressFamily) -> Option<IpAddr> {
    match family {
        AddressFamily::Inet => {
            let b: [u8; 4] = v.get(..4)?.try_into().ok()?;
            Some(IpAddr::V4(Ipv4Addr::from(b)))
        }
        AddressFamily::Inet6 => {
            let b: [u8; 16] = v.get(..16)?.try_into().ok()?;
            Some(IpAddr::V6(Ipv6Addr::from(b)))
        }
    }
}

/// Counters from a `STATS64` nest (u64 values) or a `STATS` one (u32).
fn stats_of(nest: &[u8], wide: bool) -> Stats {
    let mut s = Stats::default();
    let _ = walk(nest, |k, v| {
        let val = if wide {
            v.get(..8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_ne_bytes)
        } else {
            u32_of(v).map(u64::from)
        };
        let Some(val) = val else { return };
        let slot = match k {
            1 => &mut s.conns,
            2 => &mut s.in_packets,
            3 => &mut s.out_packets,
            4 => &mut s.in_bytes,
            5 => &mut s.out_bytes,
            6 => &mut s.cps,
            7 => &mut s.in_pps,
            8 => &mut s.out_pps,
            9 => &mut s.in_bps,
            10 => &mut s.out_bps,
            _ => return,
        };
        *slot = val;
    });
    s
}

fn service_entry(nest: &[u8]) -> Result<ServiceEntry, String> {
    let (mut af, mut proto, mut addr, mut port, mut fwmark) = (None, None, None, None, None);
    let (mut sched, mut flags, mut timeout, mut netmask, mut pe) = (None, 0, 0, None, None);
    let (mut stats, mut stats64) = (None, None);
    walk(nest, |k, v| match k {
        1 => af = u16_of(v),
        2 => proto = u16_of(v),
        3 => addr = Some(v),
        4 => port = be16_of(v),
        5 => fwmark = u32_of(v),
        6 => sched = Some(v),
        7 => flags = u32_of(v).unwrap_or(0),
        8 => timeout = u32_of(v).unwrap_or(0),
        9 => netmask = v.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok()),
        10 => stats = Some(v),
        11 => pe = Some(v),
        12 => stats64 = Some(v),
        _ => {}
    })?;
    let raw_af = af.ok_or("service without IPVS_SVC_ATTR_AF")?;
    let family = AddressFamily::from_raw(raw_af)
        .ok_or_else(|| format!("service of unknown address family {raw_af}"))?;
    let key = match fwmark {
        Some(mark) if mark != 0 => ServiceKey::Fwmark { mark, family },
        _ => ServiceKey::Inet {
            protocol: Protocol::from_raw(proto.ok_or("service without IPVS_SVC_ATTR_PROTOCOL")?),
            addr: addr
                .and_then(|a| ip_of(a, family))
                .ok_or("service without a valid IPVS_SVC_ATTR_ADDR")?,
            port: port.ok_or("service without IPVS_SVC_ATTR_PORT")?,
        },
    };
    let text = |v: &[u8]| {
        let v = v.split(|b| *b == 0).next().unwrap_or_default();
        String::from_utf8_lossy(v).into_owned()
    };
    let pe = pe.map(text).filter(|s| !s.is_empty());
    let service = Service {
        key,
        scheduler: Scheduler::from_kernel(sched.map(text).unwrap_or_default()),
        flags: ServiceFlags::from_bits_retain(flags) - ServiceFlags::HASHED,
        timeout,
        netmask: netmask
            .map(|m| Netmask::from_wire(m, family))
            .unwrap_or_else(|| Netmask::host(family)),
        persistence_engine: pe,
    };
    let stats = match (stats64, stats) {
        (Some(n), _) => stats_of(n, true),
        (None, Some(n)) => stats_of(n, false),
        _ => Stats::default(),
    };
    Ok(ServiceEntry { service, stats })
}

fn destination_entry(
    nest: &[u8],
    service_family: AddressFamily,
) -> Result<DestinationEntry, String> {
    let (mut af, mut addr, mut port, mut fwd) = (None, None, None, 0);
    let (mut weight, mut upper, mut lower) = (0, 0, 0);
    let (mut active, mut inactive, mut persistent) = (0, 0, 0);
    let (mut tun_kind, mut tun_port, mut tun_flags) = (0, 0, 0);
    let (mut stats, mut stats64) = (None, None);
    walk(nest, |k, v| match k {
        1 => addr = Some(v),
        2 => port = be16_of(v),
        3 => fwd = u32_of(v).unwrap_or(0),
        4 => weight = u32_of(v).unwrap_or(0),
        5 => upper = u32_of(v).unwrap_or(0),
        6 => lower = u32_of(v).unwrap_or(0),
        7 => active = u32_of(v).unwrap_or(0),
        8 => inactive = u32_of(v).unwrap_or(0),
        9 => persistent = u32_of(v).unwrap_or(0),
        10 => stats = Some(v),
        11 => af = u16_of(v),
        12 => stats64 = Some(v),
        13 => tun_kind = v.first().copied().unwrap_or(0),
        14 => tun_port = be16_of(v).unwrap_or(0),
        15 => tun_flags = u16_of(v).unwrap_or(0),
        _ => {}
    })?;
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
        addr: addr
            .and_then(|a| ip_of(a, family))
            .ok_or("destination without a valid IPVS_DEST_ATTR_ADDR")?,
        port: port.ok_or("destination without IPVS_DEST_ATTR_PORT")?,
        forward: Forward::from_raw(fwd, tunnel),
        weight,
        upper_threshold: upper,
        lower_threshold: lower,
    };
    let stats = match (stats64, stats) {
        (Some(n), _) => stats_of(n, true),
        (None, Some(n)) => stats_of(n, false),
        _ => Stats::default(),
    };
    Ok(DestinationEntry {
        destination,
        active_conns: active,
        inactive_conns: inactive,
        persistent_conns: persistent,
        stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::frame;
    use ipvsnl_wire::{DestAttr, IpvsAttr, IpvsMessage, ServiceAttr, StatsAttr};

    /// The attributes (after the genl header) of a message built with the
    /// wire crate, as the kernel would send them.
    fn attrs_of(msg: IpvsMessage) -> Vec<u8> {
        let mut v = Vec::new();
        frame::push_request(&mut v, 0x30, 1, 0, msg);
        v.split_off(20)
    }

    #[test]
    fn decodes_what_the_generic_decoder_decodes() {
        let svc = IpvsMessage::new(
            ipvsnl_wire::IpvsCommand::NewService,
            vec![IpvsAttr::Service(vec![
                ServiceAttr::AddressFamily(10),
                ServiceAttr::Protocol(17),
                ServiceAttr::Address("2001:db8::1".parse::<Ipv6Addr>().unwrap().octets()),
                ServiceAttr::Port(53),
                ServiceAttr::Scheduler("mh".into()),
                ServiceAttr::PersistenceEngine("sip".into()),
                ServiceAttr::Flags(ipvsnl_wire::FlagsMask::replace(0x1 | 0x2 | 0x10)),
                ServiceAttr::Timeout(300),
                ServiceAttr::Netmask(64u32.to_ne_bytes()),
                ServiceAttr::Stats64(vec![StatsAttr::U64(ipvsnl_wire::StatsField::Conns, 7)]),
            ])],
        );
        let got = service_entry(find(&attrs_of(svc.clone()), 1).unwrap().unwrap()).unwrap();
        let want = crate::decode::service_nest(&svc.attrs)
            .and_then(crate::decode::service_entry)
            .unwrap();
        assert_eq!(got, want);
        assert_eq!(got.stats.conns, 7);
        let dest = IpvsMessage::new(
            ipvsnl_wire::IpvsCommand::NewDest,
            vec![IpvsAttr::Dest(vec![
                DestAttr::Address([172, 16, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
                DestAttr::Port(8080),
                DestAttr::ForwardMethod(2),
                DestAttr::Weight(4),
                DestAttr::UpperThreshold(100),
                DestAttr::LowerThreshold(10),
                DestAttr::ActiveConns(3),
                DestAttr::InactiveConns(2),
                DestAttr::PersistentConns(1),
                DestAttr::AddressFamily(2),
                DestAttr::TunnelType(1),
                DestAttr::TunnelPort(6080),
                DestAttr::TunnelFlags(1),
            ])],
        );
        let got = destination_entry(
            find(&attrs_of(dest.clone()), 2).unwrap().unwrap(),
            AddressFamily::Inet6,
        )
        .unwrap();
        let want = crate::decode::destination_entry(&dest.attrs, AddressFamily::Inet6).unwrap();
        assert_eq!(got, want);
        assert_eq!(got.active_conns, 3);
    }

    #[test]
    fn malformed_attributes_are_errors_not_panics() {
        assert!(walk(&[8, 0, 1, 0, 1], |_, _| {}).is_err());
        assert!(walk(&[2, 0, 1, 0], |_, _| {}).is_err());
        assert!(service_entry(&[]).is_err());
        assert!(destination_entry(&[], AddressFamily::Inet).is_err());
    }
}
