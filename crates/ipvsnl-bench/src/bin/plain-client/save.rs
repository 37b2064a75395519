//! `plain-client save`: the table listed and printed as `ipvsadm -S -n`
//! prints it, the way a tight hand-written client does the same kernel
//! work as our `ipvsadm -S -n` (the library's settings listing): one
//! netlink service dump for every service's settings (on a socket of its
//! own, read with 32 KiB: see the library's `service_dumps.rs`), one
//! `IP_VS_SO_GET_SERVICES` for the destination counts, then one
//! `IP_VS_SO_GET_DESTS` per IPv4 service (a netlink destination dump per
//! IPv6 one); sorted as ipvsadm sorts (its comparators, glibc's merge
//! sort), printed with hand-written number formatting into a buffer
//! written out every 64 KiB (as our ipvsadm's is since 2026-12-07; written
//! once before).
//!
//! Before (to 2026-12-02) it dumped every service's destinations by
//! netlink and printed with `write!`: 0.832 s for 10,000 x 5 in
//! benches/RESULTS.md, of which 0.239 s user.

use std::io::{self, Write};
use std::net::Ipv6Addr;

use ipvsnl::wire::{
    IpvsCommand, IPVS_CMD_ATTR_DEST, IPVS_CMD_ATTR_SERVICE, IPVS_SVC_ATTR_FLAGS,
    IPVS_SVC_ATTR_NETMASK, IPVS_SVC_ATTR_SCHED_NAME, IPVS_SVC_ATTR_TIMEOUT,
};
use ipvsnl_bench::plain::attrs::{each_attr, get_u32};
use ipvsnl_bench::plain::listing::{parse_dest, parse_service_key, PlainDumper, PlainService};
use ipvsnl_bench::plain::{socket, sockopt};

/// `IP_VS_SVC_F_PERSISTENT`.
const PERSISTENT: u32 = 0x1;
/// `IP_VS_SVC_F_ONEPACKET`.
const ONEPACKET: u32 = 0x4;
/// `AF_INET6`.
const AF_INET6: u16 = 10;

/// A listed service: its key and what `-S` prints of it.
struct Listed {
    key: PlainService,
    scheduler: [u8; 16],
    scheduler_len: usize,
    flags: u32,
    timeout: u32,
    netmask: u32,
}

fn parse_service(nest: &[u8]) -> Listed {
    let mut s = Listed {
        key: parse_service_key(nest),
        scheduler: [0; 16],
        scheduler_len: 0,
        flags: 0,
        timeout: 0,
        netmask: u32::MAX,
    };
    each_attr(nest, |t, p| match t {
        IPVS_SVC_ATTR_SCHED_NAME => {
            let name = p.split(|&b| b == 0).next().unwrap_or_default();
            let n = name.len().min(16);
            s.scheduler[..n].copy_from_slice(&name[..n]);
            s.scheduler_len = n;
        }
        IPVS_SVC_ATTR_FLAGS => s.flags = get_u32(p),
        IPVS_SVC_ATTR_TIMEOUT => s.timeout = get_u32(p),
        IPVS_SVC_ATTR_NETMASK => s.netmask = get_u32(p),
        _ => {}
    });
    s
}

/// Appends `n` in decimal.
fn put_u32(out: &mut Vec<u8>, mut n: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// Appends an IPv4 address (its bytes in network order) dotted.
fn put_ipv4(out: &mut Vec<u8>, a: [u8; 4]) {
    for (n, o) in a.into_iter().enumerate() {
        if n > 0 {
            out.push(b'.');
        }
        if o >= 100 {
            out.push(b'0' + o / 100);
        }
        if o >= 10 {
            out.push(b'0' + o / 10 % 10);
        }
        out.push(b'0' + o % 10);
    }
}

/// Appends `addr:port`, IPv6 in brackets.
fn put_addr_port(out: &mut Vec<u8>, af: u16, addr: &[u8; 16], port: u16) {
    if af == AF_INET6 {
        // Rare in the bench's tables: the standard formatting will do.
        let _ = write!(out, "[{}]", Ipv6Addr::from(*addr));
    } else {
        put_ipv4(out, [addr[0], addr[1], addr[2], addr[3]]);
    }
    out.push(b':');
    put_u32(out, u32::from(port));
}

/// Appends the service switch and name: `-t 10.0.0.1:80`, `-f 5`, ...
fn put_service_name(out: &mut Vec<u8>, k: &PlainService) {
    if k.fwmark != 0 {
        out.extend_from_slice(b"-f ");
        let _ = write!(out, "{}", k.fwmark as i32);
        if k.af == AF_INET6 {
            out.extend_from_slice(b" -6");
        }
        return;
    }
    out.extend_from_slice(match k.protocol {
        17 => b"-u ",
        132 => b"--sctp-service ",
        _ => b"-t ",
    });
    put_addr_port(out, k.af, &k.addr, u16::from_be_bytes(k.port));
}

/// The `-A` line of a service.
fn put_service(out: &mut Vec<u8>, s: &Listed, name: &[u8]) {
    out.extend_from_slice(b"-A ");
    out.extend_from_slice(name);
    out.extend_from_slice(b" -s ");
    out.extend_from_slice(&s.scheduler[..s.scheduler_len]);
    if s.flags & PERSISTENT != 0 {
        out.extend_from_slice(b" -p ");
        put_u32(out, s.timeout);
        if s.key.af == AF_INET6 {
            if s.netmask != 128 {
                out.extend_from_slice(b" -M ");
                put_u32(out, s.netmask);
            }
        } else if s.netmask != u32::MAX {
            out.extend_from_slice(b" -M ");
            put_ipv4(out, s.netmask.to_be_bytes());
        }
    }
    if s.flags & ONEPACKET != 0 {
        out.extend_from_slice(b" -o");
    }
    out.push(b'\n');
}

/// One destination as `-S` needs it.
#[derive(Clone, Copy)]
struct Dest {
    af: u16,
    addr: [u8; 16],
    port: u16,
    fwd_method: u32,
    weight: i32,
}

/// The `-a` line of a destination of the service called `name`.
fn put_dest(out: &mut Vec<u8>, name: &[u8], d: &Dest) {
    out.extend_from_slice(b"-a ");
    out.extend_from_slice(name);
    out.extend_from_slice(b" -r ");
    put_addr_port(out, d.af, &d.addr, d.port);
    out.extend_from_slice(match d.fwd_method & 7 {
        0 => b" -m -w ",
        2 => b" -i -w ",
        _ => b" -g -w ",
    });
    if d.weight < 0 {
        out.push(b'-');
    }
    put_u32(out, d.weight.unsigned_abs());
    if d.fwd_method & 7 == 2 {
        out.extend_from_slice(b" --tun-type ipip");
    }
    out.push(b'\n');
}

/// glibc's `qsort` on this platform: a top-down merge sort (left half of
/// n/2 elements, ties from the left), `tmp` as its buffer.
fn msort<T: Copy>(v: &mut [T], tmp: &mut [T], cmp: &impl Fn(&T, &T) -> i32) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    msort(&mut v[..n1], tmp, cmp);
    msort(&mut v[n1..], tmp, cmp);
    let (mut i, mut j, mut k) = (0, n1, 0);
    while i < n1 && j < n {
        if cmp(&v[i], &v[j]) <= 0 {
            tmp[k] = v[i];
            i += 1;
        } else {
            tmp[k] = v[j];
            j += 1;
        }
        k += 1;
    }
    while i < n1 {
        tmp[k] = v[i];
        i += 1;
        k += 1;
    }
    v[..k].copy_from_slice(&tmp[..k]);
}

/// An address's first 32-bit word, or its four, in host order.
fn words(af: u16, a: &[u8; 16]) -> ([u32; 4], usize) {
    let w = |i: usize| u32::from_be_bytes([a[i], a[i + 1], a[i + 2], a[i + 3]]);
    (
        [w(0), w(4), w(8), w(12)],
        if af == AF_INET6 { 4 } else { 1 },
    )
}

/// ipvsadm's service comparator (differences as `int`).
fn cmp_services(a: &PlainService, b: &PlainService) -> i32 {
    let r = a.fwmark.wrapping_sub(b.fwmark) as i32;
    if r != 0 {
        return r;
    }
    let r = i32::from(a.af) - i32::from(b.af);
    if r != 0 {
        return r;
    }
    let r = i32::from(a.protocol) - i32::from(b.protocol);
    if r != 0 {
        return r;
    }
    let ((wa, n), (wb, _)) = (words(a.af, &a.addr), words(b.af, &b.addr));
    for i in 0..n {
        let r = wa[i].wrapping_sub(wb[i]) as i32;
        if r != 0 {
            return r;
        }
    }
    i32::from(u16::from_be_bytes(a.port)) - i32::from(u16::from_be_bytes(b.port))
}

/// ipvsadm's destination comparator (the first one's family).
fn cmp_dests(a: &Dest, b: &Dest) -> i32 {
    let ((wa, n), (wb, _)) = (words(a.af, &a.addr), words(b.af, &b.addr));
    for i in 0..n {
        let r = wa[i].wrapping_sub(wb[i]) as i32;
        if r != 0 {
            return r;
        }
    }
    i32::from(a.port) - i32::from(b.port)
}

/// The socket-option copy of service `k`: in the kernel's order, which a
/// service dump of an unchanged table follows (`at`), else searched.
fn copy_of<'a>(
    copies: &'a [sockopt::ServiceEntry],
    at: usize,
    k: &PlainService,
) -> Option<&'a sockopt::ServiceEntry> {
    let same = |c: &sockopt::ServiceEntry| {
        let addr = [k.addr[0], k.addr[1], k.addr[2], k.addr[3]];
        c.fwmark == k.fwmark
            && (k.fwmark != 0
                || (c.protocol == k.protocol
                    && c.addr.to_ne_bytes() == addr
                    && c.port.to_ne_bytes() == k.port))
    };
    match copies.get(at) {
        Some(c) if same(c) => Some(c),
        _ => copies.iter().find(|c| same(c)),
    }
}

/// Lists the table on `sock` (and a socket of its service dump) and
/// prints it to `out`.
pub(crate) fn save(sock: netlink_sys::Socket, family: u16, out: &mut impl Write) -> io::Result<()> {
    let mut d = PlainDumper::on(sock, family);
    // The service dump on a socket of its own read with 32 KiB, as the
    // library's: larger parts, fewer walks of the kernel's service hash.
    let mut service_dump = PlainDumper::with_buffer(socket::open()?, family, 32 << 10);
    let mut services = Vec::new();
    service_dump.dump(IpvsCommand::GetService, None, |attrs| {
        each_attr(attrs, |t, p| {
            if t == IPVS_CMD_ATTR_SERVICE {
                services.push(parse_service(p));
            }
        })
    })?;
    let fd = sockopt::open()?;
    let copies = sockopt::services(&fd)?;
    // Each service's copy, found in the kernel's order (IPv4 services of
    // the dump; IPv6 ones have none).
    let mut at = 0;
    let copy: Vec<Option<&sockopt::ServiceEntry>> = services
        .iter()
        .map(|s| {
            if s.key.af == AF_INET6 {
                return None;
            }
            let c = copy_of(&copies, at, &s.key);
            at += 1;
            c
        })
        .collect();
    // ipvsadm's order: its comparator, by glibc's qsort (a merge sort),
    // as a C client sorting for ipvsadm's output does.
    let mut order: Vec<u32> = (0..services.len() as u32).collect();
    let mut tmp = order.clone();
    msort(&mut order, &mut tmp, &|&a, &b| {
        cmp_services(&services[a as usize].key, &services[b as usize].key)
    });
    // The text goes out in blocks as it is made, as our ipvsadm's does
    // (held whole, 56 bytes a line, it cost the process a page fault
    // every 4 KiB of it).
    let mut text: Vec<u8> = Vec::with_capacity(BLOCK + (4 << 10));
    let mut name = Vec::with_capacity(64);
    let mut buf = Vec::new();
    let mut raw = Vec::new();
    let mut dests: Vec<Dest> = Vec::new();
    let mut dest_tmp: Vec<Dest> = Vec::new();
    for &i in &order {
        let s = &services[i as usize];
        name.clear();
        put_service_name(&mut name, &s.key);
        put_service(&mut text, s, &name);
        dests.clear();
        match copy[i as usize] {
            Some(c) => {
                raw.clear();
                sockopt::dests(&fd, c, &mut buf, &mut raw)?;
                dests.extend(raw.iter().map(|e| {
                    let mut addr = [0u8; 16];
                    addr[..4].copy_from_slice(&e.addr.to_ne_bytes());
                    Dest {
                        af: s.key.af,
                        addr,
                        port: u16::from_be(e.port),
                        fwd_method: e.conn_flags,
                        weight: e.weight,
                    }
                }));
            }
            None => d.dump(IpvsCommand::GetDest, Some(&s.key), |attrs| {
                each_attr(attrs, |t, p| {
                    if t == IPVS_CMD_ATTR_DEST {
                        let e = parse_dest(p);
                        dests.push(Dest {
                            af: if e.af == 0 { s.key.af } else { e.af },
                            addr: e.addr,
                            port: e.port,
                            fwd_method: e.fwd_method,
                            weight: e.weight as i32,
                        });
                    }
                })
            })?,
        }
        dest_tmp.clear();
        dest_tmp.extend_from_slice(&dests);
        msort(&mut dests, &mut dest_tmp, &cmp_dests);
        for dst in &dests {
            put_dest(&mut text, &name, dst);
        }
        if text.len() >= BLOCK {
            out.write_all(&text)?;
            text.clear();
        }
    }
    out.write_all(&text)
}

/// How much text is gathered before it is written.
const BLOCK: usize = 64 << 10;
