//! The kernel's behaviour that whole listings rest on (see
//! `crates/ipvsnl/src/listing/parts.rs` and `whole.rs`), checked on each
//! kernel: how a service dump comes in parts, and what the older
//! socket-option interface counts and copies.

use crate::common;
use crate::rawnl;

use std::io;
use std::net::IpAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use common::*;
use ipvsnl::{AddressFamily, Client, Service, ServiceKey};
use ipvsnl_wire::sockopt::{
    services_request, SockoptInfo, SockoptServices, IP_VS_SO_GET_INFO, IP_VS_SO_GET_SERVICES,
};
use ipvsnl_wire::{IpvsCommand, IpvsMessage};

/// A plain IPv4 datagram socket in the calling thread's namespace.
fn udp() -> OwnedFd {
    // SAFETY: socket(2) takes only integers; the result is checked.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    assert!(fd >= 0, "socket: {}", io::Error::last_os_error());
    // SAFETY: `fd` was just created and nothing else owns it.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// One `getsockopt(IPPROTO_IP, option)` with `buf` as argument and reply.
fn get(fd: &OwnedFd, option: i32, buf: &mut [u8]) -> io::Result<()> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` is live and writable for `len` bytes during the call;
    // `len` is a live socklen_t; the descriptor is owned by `fd`.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_IP,
            option,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn count(fd: &OwnedFd) -> u32 {
    let mut buf = [0u8; SockoptInfo::SIZE];
    get(fd, IP_VS_SO_GET_INFO, &mut buf).unwrap();
    SockoptInfo::decode(&buf).unwrap().ipv4_services
}

/// The keys of an `IP_VS_SO_GET_SERVICES` copy with room for `slots`.
fn copied(fd: &OwnedFd, slots: u32) -> io::Result<Vec<ServiceKey>> {
    let mut buf = services_request(slots).unwrap();
    get(fd, IP_VS_SO_GET_SERVICES, &mut buf)?;
    Ok(SockoptServices::new(&buf)
        .map(|s| match s.fwmark() {
            0 => ServiceKey::tcp(IpAddr::V4(s.addr()), s.port()),
            mark => ServiceKey::fwmark(mark, AddressFamily::Inet),
        })
        .collect())
}

fn add(c: &mut Client, k: ServiceKey) {
    c.add_service(&Service::new(k)).unwrap();
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn the_socket_options_count_and_copy_the_ipv4_services_alone_in_dump_order() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let fd = udp();
    assert_eq!(count(&fd), 0);
    let v4: Vec<ServiceKey> = (1..=4u8)
        .map(|i| ServiceKey::tcp(IpAddr::from([10, 0, 0, i]), 80))
        .chain([1, 2].map(|m| ServiceKey::fwmark(m, AddressFamily::Inet)))
        .collect();
    for k in &v4 {
        add(&mut c, *k);
    }
    add(&mut c, ServiceKey::tcp("fd00::1".parse().unwrap(), 80));
    add(&mut c, ServiceKey::fwmark(7, AddressFamily::Inet6));
    // IPv6 services are neither counted nor copied (the reference said
    // GET_INFO counted them: the kernel does not).
    assert_eq!(count(&fd), 6, "IPv4 address and mark services only");
    let got = copied(&fd, 10).unwrap();
    // In the order of a netlink dump: the same tables walked the same way.
    let dumped: Vec<ServiceKey> = c
        .services()
        .unwrap()
        .iter()
        .map(|e| *e.key())
        .filter(|k| k.family() == AddressFamily::Inet)
        .collect();
    assert_eq!(got, dumped);
    // Less room: the first ones, silently.
    assert_eq!(copied(&fd, 3).unwrap(), dumped[..3]);
    // The length must be exactly the room's.
    let mut buf = services_request(3).unwrap();
    buf.pop();
    let e = get(&fd, IP_VS_SO_GET_SERVICES, &mut buf).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn a_socket_reads_the_namespace_it_was_made_in_after_every_thread_left_it() {
    let fd = std::thread::spawn(|| {
        fresh_netns();
        let mut c = Client::new().unwrap();
        add(&mut c, ServiceKey::tcp(IpAddr::from([10, 3, 0, 1]), 80));
        udp()
    })
    .join()
    .unwrap();
    assert_eq!(count(&fd), 1);
    assert_eq!(
        copied(&fd, 2).unwrap(),
        [ServiceKey::tcp(IpAddr::from([10, 3, 0, 1]), 80)]
    );
}

/// A new generic-netlink socket of the calling thread's namespace.
fn nl_socket() -> OwnedFd {
    // SAFETY: socket(2) takes only integers; the result is checked.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_GENERIC,
        )
    };
    assert!(fd >= 0);
    // SAFETY: `fd` was just created and nothing else owns it.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// The datagrams of a service dump read 4 KiB at a time on a new socket:
/// (length, service messages, whether it holds the `NLMSG_DONE`).
fn dump_parts() -> Vec<(usize, usize, bool)> {
    // A socket of its own: RawNl reads 64 KiB at a time, and the kernel
    // sizes the parts by the largest read a socket made.
    dump_parts_on(&nl_socket(), 4096)
}

/// The datagrams of a service dump on `fd`, each read into `read` bytes:
/// (its whole length, even when longer than `read`; the service messages
/// of what was read; whether it holds the `NLMSG_DONE`).
fn dump_parts_on(fd: &OwnedFd, read: usize) -> Vec<(usize, usize, bool)> {
    let mut raw = rawnl::RawNl::open().unwrap();
    let req = raw.request_bytes(IpvsMessage::new(IpvsCommand::GetService, vec![]), true);
    // SAFETY: an all-zero sockaddr_nl is valid (the kernel's address).
    let mut to: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    to.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    // SAFETY: `req` and `to` are live for the call, with their lengths.
    let rc = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            req.as_ptr().cast(),
            req.len(),
            0,
            (&to as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    assert!(rc >= 0, "sendto: {}", io::Error::last_os_error());
    let mut parts = Vec::new();
    let mut buf = vec![0u8; read];
    loop {
        // SAFETY: `buf` is live and writable for its length. MSG_TRUNC:
        // the datagram's own length, even when it did not fit.
        let n = unsafe {
            libc::recv(
                fd.as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_TRUNC,
            )
        };
        assert!(n >= 0, "recv: {}", io::Error::last_os_error());
        let d = &buf[..(n as usize).min(read)];
        let (mut at, mut services, mut done) = (0, 0, false);
        while at + 16 <= d.len() {
            let len = u32::from_ne_bytes(d[at..at + 4].try_into().unwrap()) as usize;
            let kind = u16::from_ne_bytes(d[at + 4..at + 6].try_into().unwrap());
            match kind as i32 {
                libc::NLMSG_DONE | libc::NLMSG_ERROR => done = true,
                _ => services += 1,
            }
            at += (len.max(16) + 3) & !3;
        }
        parts.push((n as usize, services, done));
        // A truncated part's rest is lost: its dump's end is not awaited.
        if done || n as usize > read {
            return parts;
        }
    }
}

/// `exclusive_`: run alone, in a boot of its own (.ci/kernel-tests). A
/// dump's resume count runs over every namespace's services, so a test
/// adding services in another namespace between two parts makes this
/// dump repeat some (seen in CI: 402 of 400 in 35 parts); the emulator
/// does the same (`emulator::walk_tests`).
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn exclusive_a_service_dump_ends_with_a_done_of_its_own_and_fills_its_parts() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    assert_eq!(dump_parts(), [(20, 0, true)], "an empty table");
    for i in 0..5u8 {
        add(&mut c, ServiceKey::tcp(IpAddr::from([10, 1, 0, i]), 80));
    }
    let five = dump_parts();
    assert_eq!(five.len(), 2, "{five:?}");
    assert_eq!((five[0].1, five[0].2), (5, false), "{five:?}");
    assert!(five[0].0 <= 2048, "five services in 2 KiB: {five:?}");
    assert_eq!(five[1], (20, 0, true), "{five:?}");
    for i in 5..40u8 {
        add(&mut c, ServiceKey::tcp(IpAddr::from([10, 1, 0, i]), 80));
    }
    // Every part but the last is full: less than a service's message
    // (under 400 bytes) left of a page less the kernel's overhead.
    let forty = dump_parts();
    let (done, full) = forty.split_last().unwrap();
    assert_eq!(*done, (20, 0, true), "{forty:?}");
    assert_eq!(full.iter().map(|p| p.1).sum::<usize>(), 40, "{forty:?}");
    for p in &full[..full.len() - 1] {
        assert!(p.0 > 3328 - 400 && !p.2, "a full part: {forty:?}");
    }
}

/// `SKB_WITH_OVERHEAD(32768)` on x86-64: 32 KiB less the kernel's
/// `skb_shared_info` (320 bytes).
const LARGEST_PART: usize = 32768 - 320;

/// `exclusive_`: run alone, in a boot of its own (.ci/kernel-tests). A
/// dump's resume count runs over every namespace's services, so a test
/// adding services in another namespace between two parts makes this
/// dump repeat some (seen in CI: 402 of 400 in 35 parts); the emulator
/// does the same (`emulator::walk_tests`).
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn exclusive_dump_parts_are_sized_by_the_largest_read_a_socket_made_at_most_32_kib() {
    // What the client's socket of service dumps rests on
    // (crates/ipvsnl/src/service_dumps.rs): the kernel remembers the
    // largest receive a socket made, caps it at 32 KiB, and sizes every
    // later dump part of that socket by it.
    fresh_netns();
    let mut c = Client::new().unwrap();
    for i in 0..400u16 {
        let [a, b] = i.to_be_bytes();
        add(&mut c, ServiceKey::tcp(IpAddr::from([10, 4, a, b]), 80));
    }
    // Read with 64 KiB: the first part is made before any read (when the
    // request is sent), so a new socket's is a page at most (measured:
    // 3,520 bytes, 11 services); every later one of at most 32 KiB less
    // the overhead, each full (less than a service's message left;
    // measured: 32,320 bytes, 101 services).
    let fd = nl_socket();
    let big = dump_parts_on(&fd, 64 << 10);
    let (done, parts) = big.split_last().unwrap();
    assert_eq!(*done, (20, 0, true), "{big:?}");
    assert_eq!(parts.iter().map(|p| p.1).sum::<usize>(), 400, "{big:?}");
    let (first, full) = parts.split_first().unwrap();
    assert!(first.0 <= 4096, "a new socket's first part: {big:?}");
    for p in &full[..full.len() - 1] {
        assert!(
            p.0 <= LARGEST_PART && p.0 > LARGEST_PART - 400,
            "a full part of at most 32 KiB: {big:?}"
        );
    }
    // The same socket read with 4 KiB: its parts are still 32 KiB ones
    // (the first does not fit, MSG_TRUNC says how long it was).
    let after = dump_parts_on(&fd, 4096);
    assert!(
        after[0].0 > LARGEST_PART - 400 && after[0].0 <= LARGEST_PART,
        "the size sticks to the socket: {after:?}"
    );
    // A new socket read with 4 KiB gets page-sized parts.
    let small = dump_parts();
    assert!(small.iter().all(|p| p.0 <= 4096), "{small:?}");
    assert_eq!(small.iter().map(|p| p.1).sum::<usize>(), 400, "{small:?}");
}
