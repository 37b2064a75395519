//! The plain socket-option listing: `IP_VS_SO_GET_INFO` for the count,
//! one `IP_VS_SO_GET_SERVICES` for every IPv4 service, then one
//! `IP_VS_SO_GET_DESTS` per service, each entry copied into a plain struct:
//! what a hand-written C client of the older interface does (libipvs did,
//! before netlink). The floor of that interface, beside the netlink one
//! ([`super::listing`]). Written from the uapi structs alone, with no code
//! of the library.

use std::hint::black_box;
use std::io;
use std::mem::{offset_of, size_of};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const IP_VS_BASE_CTL: libc::c_int = 64 + 1024 + 64;
const IP_VS_SO_GET_INFO: libc::c_int = IP_VS_BASE_CTL + 1;
const IP_VS_SO_GET_SERVICES: libc::c_int = IP_VS_BASE_CTL + 2;
const IP_VS_SO_GET_DESTS: libc::c_int = IP_VS_BASE_CTL + 4;

/// `struct ip_vs_getinfo`.
#[repr(C)]
#[derive(Clone, Copy)]
struct GetInfo {
    version: u32,
    size: u32,
    num_services: u32,
}

/// `struct ip_vs_stats_user`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
#[allow(missing_docs)] // the uapi struct's fields, under its names
pub struct StatsUser {
    pub conns: u32,
    pub inpkts: u32,
    pub outpkts: u32,
    pub inbytes: u64,
    pub outbytes: u64,
    pub cps: u32,
    pub inpps: u32,
    pub outpps: u32,
    pub inbps: u32,
    pub outbps: u32,
}

/// `struct ip_vs_service_entry`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
#[allow(missing_docs)] // the uapi struct's fields, under its names
pub struct ServiceEntry {
    pub protocol: u16,
    pub addr: u32,
    pub port: u16,
    pub fwmark: u32,
    pub sched_name: [u8; 16],
    pub flags: u32,
    pub timeout: u32,
    pub netmask: u32,
    pub num_dests: u32,
    pub stats: StatsUser,
}

/// `struct ip_vs_dest_entry`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
#[allow(missing_docs)] // the uapi struct's fields, under its names
pub struct DestEntry {
    pub addr: u32,
    pub port: u16,
    pub conn_flags: u32,
    pub weight: i32,
    pub u_threshold: u32,
    pub l_threshold: u32,
    pub activeconns: u32,
    pub inactconns: u32,
    pub persistconns: u32,
    pub stats: StatsUser,
}

/// `struct ip_vs_get_services`.
#[repr(C)]
struct GetServices {
    num_services: u32,
    entrytable: [ServiceEntry; 0],
}

/// `struct ip_vs_get_dests`.
#[repr(C)]
struct GetDests {
    protocol: u16,
    addr: u32,
    port: u16,
    fwmark: u32,
    num_dests: u32,
    entrytable: [DestEntry; 0],
}

/// A listed table: the services, and every destination in one list.
pub struct SockoptTable {
    /// Every IPv4 service, as `GET_SERVICES` copied them.
    pub services: Vec<ServiceEntry>,
    /// The destinations of every service, one `GET_DESTS` after another.
    pub dests: Vec<DestEntry>,
}

/// An IPv4 datagram socket of the caller's namespace.
pub fn open() -> io::Result<OwnedFd> {
    // SAFETY: socket(2) takes only integers; the result is checked.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// One `getsockopt(IPPROTO_IP, option)` with `buf` as argument and reply.
fn get(fd: &OwnedFd, option: libc::c_int, buf: &mut [u8]) -> io::Result<()> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` is live and writable for `len` bytes during the call.
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

/// Reads a `T` at `at` of `buf` (in bounds: the callers size `buf`).
fn read<T: Copy>(buf: &[u8], at: usize) -> T {
    assert!(at + size_of::<T>() <= buf.len());
    // SAFETY: in bounds (checked above); `T` is a plain C struct of
    // integers, valid for any bytes; read unaligned.
    unsafe { buf.as_ptr().add(at).cast::<T>().read_unaligned() }
}

/// Every IPv4 service, as one `IP_VS_SO_GET_INFO` (for the count) and one
/// `IP_VS_SO_GET_SERVICES` copy them, in the kernel's order.
pub fn services(fd: &OwnedFd) -> io::Result<Vec<ServiceEntry>> {
    let mut info = [0u8; size_of::<GetInfo>()];
    get(fd, IP_VS_SO_GET_INFO, &mut info)?;
    let count = read::<GetInfo>(&info, 0).num_services as usize;
    let head = offset_of!(GetServices, entrytable);
    let mut buf = vec![0u8; head + count * size_of::<ServiceEntry>()];
    buf[..4].copy_from_slice(&(count as u32).to_ne_bytes());
    get(fd, IP_VS_SO_GET_SERVICES, &mut buf)?;
    Ok((0..count)
        .map(|i| read::<ServiceEntry>(&buf, head + i * size_of::<ServiceEntry>()))
        .collect())
}

/// Appends the destinations of service `s` (its `num_dests` of them: the
/// plain client's tables do not change while it lists) to `dests`, with one `IP_VS_SO_GET_DESTS` (`buf`: a buffer kept
/// from one call to the next).
pub fn dests(
    fd: &OwnedFd,
    s: &ServiceEntry,
    buf: &mut Vec<u8>,
    dests: &mut Vec<DestEntry>,
) -> io::Result<()> {
    let n = s.num_dests as usize;
    let head = offset_of!(GetDests, entrytable);
    buf.clear();
    buf.resize(head + n * size_of::<DestEntry>(), 0);
    let mut put = |at: usize, b: &[u8]| buf[at..at + b.len()].copy_from_slice(b);
    put(offset_of!(GetDests, protocol), &s.protocol.to_ne_bytes());
    put(offset_of!(GetDests, addr), &s.addr.to_ne_bytes());
    put(offset_of!(GetDests, port), &s.port.to_ne_bytes());
    put(offset_of!(GetDests, fwmark), &s.fwmark.to_ne_bytes());
    put(offset_of!(GetDests, num_dests), &(n as u32).to_ne_bytes());
    get(fd, IP_VS_SO_GET_DESTS, buf)?;
    dests.extend((0..n).map(|i| read::<DestEntry>(buf, head + i * size_of::<DestEntry>())));
    Ok(())
}

/// Lists every IPv4 service and its destinations.
pub fn list(fd: &OwnedFd) -> io::Result<SockoptTable> {
    let services = services(fd)?;
    let mut all = Vec::with_capacity(services.iter().map(|s| s.num_dests as usize).sum());
    let mut buf = Vec::new();
    for s in &services {
        dests(fd, s, &mut buf, &mut all)?;
    }
    Ok(black_box(SockoptTable {
        services,
        dests: all,
    }))
}
