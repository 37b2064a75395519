//! `plain-client save`: the table dumped and printed as `ipvsadm -S -n`
//! prints it.

use std::io::{self, Write};
use std::net::{Ipv4Addr, Ipv6Addr};

use ipvsnl::wire::{
    IpvsCommand, IPVS_CMD_ATTR_DEST, IPVS_CMD_ATTR_SERVICE, IPVS_SVC_ATTR_FLAGS,
    IPVS_SVC_ATTR_NETMASK, IPVS_SVC_ATTR_SCHED_NAME, IPVS_SVC_ATTR_TIMEOUT,
};
use ipvsnl_bench::plain::attrs::{each_attr, get_u32};
use ipvsnl_bench::plain::listing::{
    parse_dest, parse_service_key, PlainDest, PlainDumper, PlainService,
};

/// `IP_VS_SVC_F_PERSISTENT`.
const PERSISTENT: u32 = 0x1;
/// `IP_VS_SVC_F_ONEPACKET`.
const ONEPACKET: u32 = 0x4;
/// `AF_INET6`.
const AF_INET6: u16 = 10;

/// A listed service: its key and what `-S` prints of it.
struct Listed {
    key: PlainService,
    scheduler: String,
    flags: u32,
    timeout: u32,
    netmask: u32,
}

fn parse_service(nest: &[u8]) -> Listed {
    let mut s = Listed {
        key: parse_service_key(nest),
        scheduler: String::new(),
        flags: 0,
        timeout: 0,
        netmask: u32::MAX,
    };
    each_attr(nest, |t, p| match t {
        IPVS_SVC_ATTR_SCHED_NAME => {
            let name = p.split(|&b| b == 0).next().unwrap_or_default();
            s.scheduler = String::from_utf8_lossy(name).into_owned();
        }
        IPVS_SVC_ATTR_FLAGS => s.flags = get_u32(p),
        IPVS_SVC_ATTR_TIMEOUT => s.timeout = get_u32(p),
        IPVS_SVC_ATTR_NETMASK => s.netmask = get_u32(p),
        _ => {}
    });
    s
}

/// `addr:port`, IPv6 in brackets.
fn addr_port(af: u16, addr: &[u8; 16], port: u16) -> String {
    if af == AF_INET6 {
        format!("[{}]:{port}", Ipv6Addr::from(*addr))
    } else {
        format!(
            "{}:{port}",
            Ipv4Addr::new(addr[0], addr[1], addr[2], addr[3])
        )
    }
}

/// The service switch and name: `-t 10.0.0.1:80`, `-f 5`, ...
fn service_name(k: &PlainService) -> String {
    if k.fwmark != 0 {
        let six = if k.af == AF_INET6 { " -6" } else { "" };
        return format!("-f {}{six}", k.fwmark);
    }
    let switch = match k.protocol {
        17 => "-u",
        132 => "--sctp-service",
        _ => "-t",
    };
    format!(
        "{switch} {}",
        addr_port(k.af, &k.addr, u16::from_be_bytes(k.port))
    )
}

/// Dumps the table on `sock` and prints it to `out`.
pub(crate) fn save(sock: netlink_sys::Socket, family: u16, out: &mut impl Write) -> io::Result<()> {
    let mut d = PlainDumper::on(sock, family);
    let mut services = Vec::new();
    d.dump(IpvsCommand::GetService, None, |attrs| {
        each_attr(attrs, |t, p| {
            if t == IPVS_CMD_ATTR_SERVICE {
                services.push(parse_service(p));
            }
        })
    })?;
    // ipvsadm's order: fwmark, family, protocol, address, port.
    services.sort_by(|a, b| {
        let key = |s: &Listed| {
            (
                s.key.fwmark,
                s.key.af,
                s.key.protocol,
                s.key.addr,
                s.key.port,
            )
        };
        key(a).cmp(&key(b))
    });
    let mut dests: Vec<PlainDest> = Vec::new();
    for s in &services {
        let name = service_name(&s.key);
        write!(out, "-A {name} -s {}", s.scheduler)?;
        if s.flags & PERSISTENT != 0 {
            write!(out, " -p {}", s.timeout)?;
            if s.key.af == AF_INET6 {
                if s.netmask != 128 {
                    write!(out, " -M {}", s.netmask)?;
                }
            } else if s.netmask != u32::MAX {
                write!(out, " -M {}", Ipv4Addr::from(s.netmask.to_ne_bytes()))?;
            }
        }
        if s.flags & ONEPACKET != 0 {
            write!(out, " -o")?;
        }
        writeln!(out)?;
        dests.clear();
        d.dump(IpvsCommand::GetDest, Some(&s.key), |attrs| {
            each_attr(attrs, |t, p| {
                if t == IPVS_CMD_ATTR_DEST {
                    dests.push(parse_dest(p));
                }
            })
        })?;
        dests.sort_by_key(|d| (d.addr, d.port));
        for dst in &dests {
            let af = if dst.af == 0 { s.key.af } else { dst.af };
            let forward = match dst.fwd_method & 7 {
                0 => "-m",
                2 => "-i",
                _ => "-g",
            };
            write!(
                out,
                "-a {name} -r {} {forward} -w {}",
                addr_port(af, &dst.addr, dst.port),
                dst.weight
            )?;
            if dst.fwd_method & 7 == 2 {
                write!(out, " --tun-type ipip")?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}
