//! Scratch probe (not for merging): facts about the older socket-option
//! interface and the parts of a service dump.

mod common;
mod rawnl;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use ipvsnl::{Client, Service, ServiceKey};
use ipvsnl_wire::{IpvsCommand, IpvsMessage};

const BASE: i32 = 64 + 1024 + 64;
const GET_INFO: i32 = BASE + 1;
const GET_SERVICES: i32 = BASE + 2;
const ENTRY: usize = 104;

fn udp() -> OwnedFd {
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    assert!(fd >= 0);
    unsafe { OwnedFd::from_raw_fd(fd) }
}

fn get(fd: &OwnedFd, opt: i32, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_IP,
            opt,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(len as usize)
}

fn info(fd: &OwnedFd) -> [u32; 3] {
    let mut b = [0u8; 12];
    let n = get(fd, GET_INFO, &mut b).unwrap();
    println!("GET_INFO len {n}");
    [0, 4, 8].map(|o| u32::from_ne_bytes(b[o..o + 4].try_into().unwrap()))
}

fn services(fd: &OwnedFd, slots: usize) -> io::Result<Vec<String>> {
    let mut b = vec![0u8; 8 + ENTRY * slots];
    b[..4].copy_from_slice(&(slots as u32).to_ne_bytes());
    let n = get(fd, GET_SERVICES, &mut b)?;
    let header = u32::from_ne_bytes(b[..4].try_into().unwrap());
    println!("GET_SERVICES slots {slots} len {n} header {header}");
    let mut out = Vec::new();
    for e in b[8..].chunks(ENTRY) {
        let proto = u16::from_ne_bytes(e[0..2].try_into().unwrap());
        let addr = std::net::Ipv4Addr::from(<[u8; 4]>::try_from(&e[4..8]).unwrap());
        let port = u16::from_be_bytes(e[8..10].try_into().unwrap());
        let mark = u32::from_ne_bytes(e[12..16].try_into().unwrap());
        let sched: String = e[16..32]
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as char)
            .collect();
        let dests = u32::from_ne_bytes(e[44..48].try_into().unwrap());
        out.push(format!(
            "{proto} {addr}:{port} fwm {mark} {sched:?} dests {dests}"
        ));
    }
    Ok(out)
}

fn add(c: &mut Client, k: ServiceKey) {
    c.add_service(&Service::new(k)).unwrap();
}

/// Dumps the services on a fresh socket reading `bufsize` bytes a time;
/// returns the datagrams' (length, data messages, done?).
fn dump_parts(bufsize: usize) -> Vec<(usize, usize, bool)> {
    let mut raw = rawnl::RawNl::open().unwrap();
    let req = raw.request_bytes(IpvsMessage::new(IpvsCommand::GetService, vec![]), true);
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_GENERIC,
        )
    };
    assert!(fd >= 0);
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    let rc = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            req.as_ptr().cast(),
            req.len(),
            0,
            &addr as *const libc::sockaddr_nl as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    assert!(rc >= 0);
    let mut parts = Vec::new();
    loop {
        let mut buf = vec![0u8; bufsize];
        let n = unsafe {
            libc::recv(
                fd.as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_TRUNC,
            )
        };
        assert!(n >= 0);
        let n = n as usize;
        let mut off = 0;
        let mut data = 0;
        let mut done = false;
        while off + 16 <= n.min(bufsize) {
            let len = u32::from_ne_bytes(buf[off..off + 4].try_into().unwrap()) as usize;
            let ty = u16::from_ne_bytes(buf[off + 4..off + 6].try_into().unwrap());
            if ty == libc::NLMSG_DONE as u16 || ty == libc::NLMSG_ERROR as u16 {
                done = true;
            } else {
                data += 1;
            }
            if len == 0 {
                break;
            }
            off += (len + 3) & !3;
        }
        parts.push((n, data, done));
        if done {
            return parts;
        }
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn probe_sockopt_counts_and_parts() {
    common::fresh_netns();
    let mut c = Client::new().unwrap();
    let fd = udp();
    println!("empty: info {:?}", info(&fd));
    for i in 1..=3u8 {
        add(&mut c, ServiceKey::tcp([10, 0, 0, i].into(), 80));
    }
    add(&mut c, ServiceKey::udp([10, 0, 0, 9].into(), 53));
    for m in 1..=2 {
        add(&mut c, ServiceKey::fwmark(m, ipvsnl::AddressFamily::Inet));
    }
    for i in 1..=2u16 {
        add(
            &mut c,
            ServiceKey::tcp(
                std::net::Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, i).into(),
                80,
            ),
        );
    }
    add(&mut c, ServiceKey::fwmark(7, ipvsnl::AddressFamily::Inet6));
    println!("4 v4 + 2 v4 fwm + 2 v6 + 1 v6 fwm: info {:?}", info(&fd));
    for s in services(&fd, 10).unwrap() {
        println!("  {s}");
    }
    println!("3 slots: {:?}", services(&fd, 3));
    println!("0 slots: {:?}", services(&fd, 0));
    // A wrong length.
    let mut b = vec![0u8; 8 + ENTRY * 2];
    b[..4].copy_from_slice(&3u32.to_ne_bytes());
    println!("length mismatch: {:?}", get(&fd, GET_SERVICES, &mut b));
    let mut b = vec![0u8; 4];
    println!("short: {:?}", get(&fd, GET_SERVICES, &mut b));
    // Parts.
    for n in [0usize, 1, 5, 10, 11, 12, 13, 20, 40] {
        c.flush().unwrap();
        for i in 0..n {
            add(&mut c, ServiceKey::tcp([10, 1, 0, i as u8].into(), 80));
        }
        println!("{n} services, 4096: {:?}", dump_parts(4096));
        if n == 40 {
            println!("{n} services, 65536: {:?}", dump_parts(65536));
        }
    }
    // IPv6 with pe and persistence: the biggest service message.
    c.flush().unwrap();
    for i in 0..20u16 {
        let k = ServiceKey::tcp(
            std::net::Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, i).into(),
            80,
        );
        c.add_service(
            &Service::new(k)
                .with_scheduler(ipvsnl::Scheduler::WeightedLeastConnection)
                .with_persistence(300)
                .with_persistence_engine("sip"),
        )
        .unwrap_or_else(|e| println!("add {k}: {e}"));
    }
    println!("20 v6 sip services, 4096: {:?}", dump_parts(4096));
    // A socket whose namespace is gone.
    let keep = std::thread::spawn(|| {
        common::fresh_netns();
        let mut c = Client::new().unwrap();
        add(&mut c, ServiceKey::tcp([10, 3, 0, 1].into(), 80));
        (udp(), c)
    })
    .join()
    .unwrap();
    println!("namespace gone: info {:?}", info(&keep.0));
    println!("namespace gone: {:?}", services(&keep.0, 2));
}
