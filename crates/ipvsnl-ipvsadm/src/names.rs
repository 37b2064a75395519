//! Host and service names through the C library, as ipvsadm resolves them:
//! `gethostbyname` (IPv4 only) and `getservbyname` when parsing,
//! `gethostbyaddr` and `getservbyport` when printing without `-n`.

use std::ffi::{CStr, CString};
use std::net::{IpAddr, Ipv4Addr};

use ipvsnl::rules::Names;

extern "C" {
    fn gethostbyname(name: *const libc::c_char) -> *mut libc::hostent;
    fn gethostbyaddr(
        addr: *const libc::c_void,
        len: libc::socklen_t,
        family: libc::c_int,
    ) -> *mut libc::hostent;
}

/// The C library's resolver (files, DNS... as nsswitch.conf says).
pub(crate) struct LibcNames;

impl Names for LibcNames {
    fn host_v4(&self, name: &str) -> Option<Ipv4Addr> {
        let c = CString::new(name).ok()?;
        // SAFETY: c is a valid NUL-terminated string; the result points to
        // static storage of the C library, read before any other call.
        unsafe {
            let h = gethostbyname(c.as_ptr());
            if h.is_null() || (*h).h_addrtype != libc::AF_INET || (*h).h_length != 4 {
                return None;
            }
            let list = (*h).h_addr_list;
            if list.is_null() || (*list).is_null() {
                return None;
            }
            let p = *list as *const u8;
            let b = std::slice::from_raw_parts(p, 4);
            Some(Ipv4Addr::new(b[0], b[1], b[2], b[3]))
        }
    }

    fn port(&self, name: &str, protocol: &str) -> Option<u16> {
        let n = CString::new(name).ok()?;
        let p = CString::new(protocol).ok()?;
        // SAFETY: both strings are valid and NUL-terminated; the result is
        // static storage of the C library, read right away.
        unsafe {
            let s = libc::getservbyname(n.as_ptr(), p.as_ptr());
            if s.is_null() {
                return None;
            }
            Some(u16::from_be((*s).s_port as u16))
        }
    }

    fn host_name(&self, addr: &IpAddr) -> Option<String> {
        let (bytes, family): (Vec<u8>, libc::c_int) = match addr {
            IpAddr::V4(a) => (a.octets().to_vec(), libc::AF_INET),
            IpAddr::V6(a) => (a.octets().to_vec(), libc::AF_INET6),
        };
        // SAFETY: bytes holds the address of the given family and length;
        // the result is static storage of the C library, copied right away.
        unsafe {
            let h = gethostbyaddr(
                bytes.as_ptr() as *const libc::c_void,
                bytes.len() as libc::socklen_t,
                family,
            );
            if h.is_null() || (*h).h_name.is_null() {
                return None;
            }
            Some(CStr::from_ptr((*h).h_name).to_string_lossy().into_owned())
        }
    }

    fn port_name(&self, port: u16, protocol: &str) -> Option<String> {
        let p = CString::new(protocol).ok()?;
        // SAFETY: p is a valid NUL-terminated string; the result is static
        // storage of the C library, copied right away.
        unsafe {
            let s = libc::getservbyport(i32::from(port.to_be()), p.as_ptr());
            if s.is_null() || (*s).s_name.is_null() {
                return None;
            }
            Some(CStr::from_ptr((*s).s_name).to_string_lossy().into_owned())
        }
    }
}
