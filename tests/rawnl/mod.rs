//! A bare generic-netlink socket for the kernel tests: sends hand-built IPVS
//! messages (bypassing the library's validation) and returns the raw reply
//! datagrams, so tests can hit kernel error paths and capture kernel bytes.

#![allow(dead_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use ipvsnl_wire::netlink_packet_core::{
    NetlinkBuffer, NetlinkMessage, NetlinkPayload, NLMSG_DONE, NLMSG_ERROR, NLM_F_ACK, NLM_F_DUMP,
    NLM_F_REQUEST,
};
use ipvsnl_wire::netlink_packet_generic::ctrl::nlas::GenlCtrlAttrs;
use ipvsnl_wire::netlink_packet_generic::ctrl::{GenlCtrl, GenlCtrlCmd};
use ipvsnl_wire::netlink_packet_generic::GenlMessage;
use ipvsnl_wire::IpvsMessage;

/// A raw NETLINK_GENERIC socket in the calling thread's namespace.
pub struct RawNl {
    fd: OwnedFd,
    seq: u32,
    /// The IPVS family id.
    pub family: u16,
}

/// What came back for one request.
pub struct Exchange {
    /// Every datagram received, as is.
    pub datagrams: Vec<Vec<u8>>,
    /// The errno of an NLMSG_ERROR, 0 for an ACK or a finished dump.
    pub errno: i32,
}

impl RawNl {
    pub fn open() -> io::Result<Self> {
        // SAFETY: plain socket(2); the result is checked.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                libc::NETLINK_GENERIC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd was just created and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let tv = libc::timeval {
            tv_sec: 10,
            tv_usec: 0,
        };
        // SAFETY: tv lives for the call; the kernel reads size_of::<timeval>() bytes.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                &tv as *const libc::timeval as *const libc::c_void,
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let mut nl = RawNl {
            fd,
            seq: 0,
            family: 0,
        };
        nl.family = nl.resolve()?;
        Ok(nl)
    }

    fn resolve(&mut self) -> io::Result<u16> {
        let mut genl = GenlMessage::from_payload(GenlCtrl {
            cmd: GenlCtrlCmd::GetFamily,
            nlas: vec![GenlCtrlAttrs::FamilyName("IPVS".into())],
        });
        genl.finalize();
        let mut msg = NetlinkMessage::from(genl);
        msg.header.flags = NLM_F_REQUEST;
        self.seq += 1;
        msg.header.sequence_number = self.seq;
        msg.finalize();
        let mut buf = vec![0; msg.buffer_len()];
        msg.serialize(&mut buf);
        self.send(&buf)?;
        let dgram = self.recv()?;
        let reply = NetlinkMessage::<GenlMessage<GenlCtrl>>::deserialize(&dgram)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        match reply.payload {
            NetlinkPayload::InnerMessage(m) => m
                .payload
                .nlas
                .iter()
                .find_map(|a| match a {
                    GenlCtrlAttrs::FamilyId(id) => Some(*id),
                    _ => None,
                })
                .ok_or_else(|| io::Error::other("no family id")),
            other => Err(io::Error::other(format!("unexpected {other:?}"))),
        }
    }

    /// The bytes of one request for `msg` (with our family id and next seq).
    pub fn request_bytes(&mut self, msg: IpvsMessage, dump: bool) -> Vec<u8> {
        let mut genl = GenlMessage::from_payload(msg);
        genl.set_resolved_family_id(self.family);
        let mut nl = NetlinkMessage::from(genl);
        nl.header.flags = if dump {
            NLM_F_REQUEST | NLM_F_DUMP
        } else {
            NLM_F_REQUEST | NLM_F_ACK
        };
        self.seq += 1;
        nl.header.sequence_number = self.seq;
        nl.finalize();
        let mut buf = vec![0; nl.buffer_len()];
        nl.serialize(&mut buf);
        buf
    }

    /// Sends `msg` (as a dump if `dump`) and collects every reply datagram
    /// up to the ACK, the error or NLMSG_DONE.
    pub fn exchange(&mut self, msg: IpvsMessage, dump: bool) -> io::Result<Exchange> {
        let req = self.request_bytes(msg, dump);
        self.send(&req)?;
        let mut datagrams = Vec::new();
        loop {
            let d = self.recv()?;
            let mut off = 0;
            let mut end = None;
            while off + 16 <= d.len() {
                let buf = NetlinkBuffer::new_checked(&d[off..])
                    .map_err(|e| io::Error::other(format!("{e:?}")))?;
                let len = buf.length() as usize;
                match buf.message_type() {
                    NLMSG_ERROR => {
                        let code = i32::from_ne_bytes(d[off + 16..off + 20].try_into().unwrap());
                        // A dump never ends with an ACK; a doit reply does.
                        end = Some(-code);
                    }
                    NLMSG_DONE => end = Some(0),
                    _ => {}
                }
                off += (len + 3) & !3;
            }
            datagrams.push(d);
            if let Some(errno) = end {
                return Ok(Exchange { datagrams, errno });
            }
        }
    }

    pub fn send(&self, buf: &[u8]) -> io::Result<()> {
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        // SAFETY: buf and addr are valid for the call.
        let rc = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                buf.as_ptr() as *const libc::c_void,
                buf.len(),
                0,
                &addr as *const libc::sockaddr_nl as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn recv(&self) -> io::Result<Vec<u8>> {
        let mut buf = vec![0u8; 65536];
        // SAFETY: buf is valid for writes of its length.
        let n = unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
                0,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        buf.truncate(n as usize);
        Ok(buf)
    }
}

/// Lower-case hex of `bytes`, 32 bytes per line.
pub fn hex_lines(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(32) {
        for b in chunk {
            out.push_str(&format!("{b:02x}"));
        }
        out.push('\n');
    }
    out
}
