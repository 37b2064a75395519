//! The older IPVS interface's socket: a plain IPv4 datagram socket, on
//! which `getsockopt(IPPROTO_IP, IP_VS_SO_GET_*)` reads the table of the
//! socket's namespace (the structs are read by
//! [`ipvsnl_wire::sockopt`]). It needs no `CAP_NET_RAW`: the kernel checks
//! `CAP_NET_ADMIN` over the namespace, less than netlink's IPVS commands
//! ask.
//!
//! A client opens it beside its netlink socket, in the same namespace, and
//! keeps it for its whole life: a socket keeps its namespace, so a client
//! whose namespace was deleted still reads that namespace's table through
//! both.
//!
//! Its calls: `IP_VS_SO_GET_INFO`, `IP_VS_SO_GET_SERVICES` (the IPv4
//! snapshot that makes listings whole) and `IP_VS_SO_GET_DESTS` (one IPv4
//! service's destinations, for settings listings: [`dests`]).
//!
//! A `getsockopt` never waits on the network: the kernel answers it within
//! the call, holding its IPVS mutex, as it answers a netlink request
//! within the `sendmsg` that carried it. So the async client makes these
//! calls inline, as it makes its netlink sends.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use ipvsnl_wire::sockopt::{
    services_request, SockoptEntry, SockoptInfo, SockoptServices, IP_VS_SO_GET_INFO,
    IP_VS_SO_GET_SERVICES, SERVICE_ENTRY_SIZE,
};

use crate::{DecodeError, Error, Object, RequestKind, Target};

mod dests;

/// How often a snapshot is asked for again when its room was used up
/// (services added between the count and the copy).
const SNAPSHOT_TRIES: u32 = 3;

/// An IPv4 datagram socket for the IPVS socket options.
#[derive(Debug)]
pub(crate) struct SockoptSocket {
    fd: Endpoint,
}

/// What answers the calls: the kernel through a socket, or (feature
/// `emulator`) an emulated kernel. Without the feature this enum has one
/// variant and its match is no code.
#[derive(Debug)]
enum Endpoint {
    Socket(OwnedFd),
    #[cfg(feature = "emulator")]
    Emulated(crate::emulator::SockoptPort),
}

/// Every IPv4 service of the namespace, copied by the kernel in one call
/// under its IPVS mutex: read them with [`ServiceSnapshot::services`].
#[derive(Debug)]
pub(crate) struct ServiceSnapshot {
    buf: Vec<u8>,
}

impl ServiceSnapshot {
    /// A snapshot of these bytes (an `IP_VS_SO_GET_SERVICES` argument as
    /// the kernel filled it), for tests.
    #[cfg(test)]
    pub(crate) fn from_bytes(buf: Vec<u8>) -> Self {
        ServiceSnapshot { buf }
    }

    /// The services, in the kernel's order.
    pub(crate) fn services(&self) -> SockoptServices<'_> {
        SockoptServices::new(&self.buf)
    }
}

impl SockoptSocket {
    /// Opens one in the calling thread's network namespace.
    pub(crate) fn open() -> io::Result<Self> {
        // SAFETY: socket(2) takes only integers; the result is checked
        // before it is used.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and nothing else owns it.
        Ok(SockoptSocket {
            fd: Endpoint::Socket(unsafe { OwnedFd::from_raw_fd(fd) }),
        })
    }

    /// The socket-option calls of an emulated kernel's namespace.
    #[cfg(feature = "emulator")]
    pub(crate) fn emulated(port: crate::emulator::SockoptPort) -> Self {
        SockoptSocket {
            fd: Endpoint::Emulated(port),
        }
    }

    /// `IP_VS_SO_GET_INFO`: the version, the connection table's size and
    /// the count of IPv4 services.
    pub(crate) fn info(&self) -> Result<SockoptInfo, Error> {
        let kind = RequestKind::CountServices;
        let mut buf = [0u8; SockoptInfo::SIZE];
        self.get(kind, IP_VS_SO_GET_INFO, &mut buf)?;
        SockoptInfo::decode(&buf).map_err(|why| {
            let detail = DecodeError::Sockopt {
                option: "IP_VS_SO_GET_INFO",
                why: why.into(),
            };
            Error::decode(target(kind), detail)
        })
    }

    /// `IP_VS_SO_GET_SERVICES`: every IPv4 service, one snapshot. The
    /// count comes first ([`SockoptSocket::info`]), then the copy, with
    /// room for some more (added between the two calls); a copy that used
    /// all of its room may have left some out, and is asked for again with
    /// twice the room (a few times at most, then it is an error).
    pub(crate) fn services(&self) -> Result<ServiceSnapshot, Error> {
        let kind = RequestKind::SnapshotServices;
        let count = self.info()?.ipv4_services;
        let mut slots = count.saturating_add(count / 256).saturating_add(16);
        for _ in 0..SNAPSHOT_TRIES {
            let Some(mut buf) = services_request(slots) else {
                break;
            };
            self.get(kind, IP_VS_SO_GET_SERVICES, &mut buf)?;
            // Filled from the first entry: room was left if the last one
            // is empty.
            let last = buf.len().saturating_sub(SERVICE_ENTRY_SIZE);
            let room_left = slots == 0 || SockoptEntry::new(&buf[last..]).is_none();
            if room_left {
                return Ok(ServiceSnapshot { buf });
            }
            slots = slots.saturating_mul(2);
        }
        let detail = DecodeError::Sockopt {
            option: "IP_VS_SO_GET_SERVICES",
            why: format!("the IPv4 services outgrew every copy (last room: {slots} services)")
                .into(),
        };
        Err(Error::decode(target(kind), detail))
    }

    /// One `getsockopt` of `option` with `buf` (argument and reply); the
    /// kernel's refusal keeps its errno and names the call (`kind`).
    fn get(&self, kind: RequestKind, option: i32, buf: &mut [u8]) -> Result<(), Error> {
        self.get_for(|| target(kind), option, buf)
    }

    /// One `getsockopt` of `option` with `buf`; the kernel's refusal keeps
    /// its errno and names the request (`target`).
    fn get_for(
        &self,
        target: impl Fn() -> Target,
        option: i32,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        let mut len = libc::socklen_t::try_from(buf.len()).map_err(|_| {
            Error::invalid(
                "socket option argument",
                format!("{} bytes do not fit a socklen_t", buf.len()),
            )
        })?;
        // One variant without the emulator: then the match is no code.
        #[allow(clippy::infallible_destructuring_match)]
        let fd = match &self.fd {
            Endpoint::Socket(fd) => fd,
            #[cfg(feature = "emulator")]
            Endpoint::Emulated(port) => {
                return port
                    .get(option, buf)
                    .map_err(|errno| Error::refused(target(), errno));
            }
        };
        // SAFETY: `buf` is live, writable and `len` bytes long for the whole
        // call; the kernel writes at most `len` bytes into it and `len`
        // back into the live `len`. The descriptor is owned by `self.fd`.
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
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(errno) => Error::refused(target(), errno),
                None => Error::io(target(), e),
            });
        }
        Ok(())
    }
}

fn target(kind: RequestKind) -> Target {
    Target::new(kind, Object::Table)
}
