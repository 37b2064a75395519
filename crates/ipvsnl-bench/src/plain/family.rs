//! The IPVS family id, looked up by hand (`CTRL_CMD_GETFAMILY`), as a
//! process of its own must do before its first request.

use std::io;

use super::attrs::{
    begin_message, each_attr, end_message, get_u16, get_u32, put_attr, GENL_HDRLEN, NLMSG_HDRLEN,
};
use ipvsnl::wire::netlink_packet_core::{NLMSG_ERROR, NLM_F_ACK, NLM_F_REQUEST};

/// `GENL_ID_CTRL`: the generic-netlink controller.
const GENL_ID_CTRL: u16 = 0x10;
/// `CTRL_CMD_GETFAMILY`.
const CTRL_CMD_GETFAMILY: u8 = 3;
/// `CTRL_ATTR_FAMILY_ID`.
const CTRL_ATTR_FAMILY_ID: u16 = 1;
/// `CTRL_ATTR_FAMILY_NAME`.
const CTRL_ATTR_FAMILY_NAME: u16 = 2;

/// Asks the controller for the id of the "IPVS" family on `sock`.
pub fn resolve(sock: &netlink_sys::Socket) -> io::Result<u16> {
    let mut req = Vec::with_capacity(64);
    let m = begin_message(
        &mut req,
        GENL_ID_CTRL,
        NLM_F_REQUEST | NLM_F_ACK,
        1,
        CTRL_CMD_GETFAMILY,
        1,
    );
    put_attr(&mut req, CTRL_ATTR_FAMILY_NAME, b"IPVS\0");
    end_message(&mut req, m);
    sock.send(&req, 0)?;
    // The listing's 4 KiB: the kernel sizes a socket's dump datagrams by
    // the largest read it saw, so a bigger buffer here would make later
    // dump parts too big for the listing's buffer.
    let mut buf = vec![0u8; 4096];
    let mut family = None;
    loop {
        let n = sock.recv(&mut &mut buf[..], 0)?;
        let mut at = 0;
        while at + NLMSG_HDRLEN <= n {
            let len = get_u32(&buf[at..]) as usize;
            if len < NLMSG_HDRLEN || at + len > n {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "truncated message",
                ));
            }
            let msg = &buf[at..at + len];
            at += (len + 3) & !3;
            if get_u16(&msg[4..]) == NLMSG_ERROR {
                let code = get_u32(&msg[NLMSG_HDRLEN..]) as i32;
                if code < 0 {
                    return Err(io::Error::from_raw_os_error(-code));
                }
                return family.ok_or_else(|| io::Error::other("no family id in the reply"));
            }
            if get_u16(&msg[4..]) == GENL_ID_CTRL && len >= NLMSG_HDRLEN + GENL_HDRLEN {
                each_attr(&msg[NLMSG_HDRLEN + GENL_HDRLEN..], |t, p| {
                    if t == CTRL_ATTR_FAMILY_ID {
                        family = Some(get_u16(p));
                    }
                });
            }
        }
    }
}
