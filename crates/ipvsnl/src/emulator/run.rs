//! One IPVS message run as the kernel runs it: generic netlink's checks
//! (family, command, permission, dump or not), then the command; and
//! another program's changes ([`Fault::Foreign`], [`Netns::apply`]) run
//! so, on a socket of their own, neither recorded nor struck by a fault.
//!
//! [`Fault::Foreign`]: super::Fault::Foreign
//! [`Netns::apply`]: super::Netns::apply

use ipvsnl_wire::netlink_packet_core::{NLM_F_ACK, NLM_F_REQUEST};
use ipvsnl_wire::IpvsCommand;

use super::attrs;
use super::commands::{self, Addr};
use super::kernel::State;
use super::messages::{Message, Messages};
use crate::Request;

/// The generic-netlink checks of an IPVS message (family, command,
/// permission, dump or not): its family id and command.
pub(crate) fn check(s: &State, m: &Message<'_>) -> Result<(u16, IpvsCommand), i32> {
    let family = s.family.filter(|&f| f == m.kind).ok_or(libc::ENOENT)?;
    let command = IpvsCommand::from(m.command());
    if !matches!(u8::from(command), 1..=13 | 15..=17) {
        return Err(libc::EOPNOTSUPP);
    }
    if !s.privileged {
        return Err(libc::EPERM);
    }
    let dump_only = matches!(command, IpvsCommand::GetDest | IpvsCommand::GetDaemon);
    let dumpable = dump_only || command == IpvsCommand::GetService;
    if m.is_dump() && !dumpable || !m.is_dump() && dump_only {
        return Err(libc::EOPNOTSUPP);
    }
    Ok((family, command))
}

/// Runs an IPVS command that is not a dump; its errno, its reply (if
/// any) into `replies`.
pub(crate) fn doit(
    s: &mut State,
    namespace: &str,
    pid: u32,
    m: &Message<'_>,
    family: u16,
    command: IpvsCommand,
    replies: &mut Vec<Vec<u8>>,
) -> i32 {
    let top = match attrs::parse(m.attrs(), &attrs::CMD) {
        Ok(t) => t,
        Err(e) => return e,
    };
    let to = Addr {
        family,
        seq: m.seq,
        pid,
    };
    let conn_tab_size = s.conn_tab_size;
    let mut reply = Vec::new();
    match commands::run(
        s.ns(namespace),
        command,
        &top,
        to,
        conn_tab_size,
        &mut reply,
    ) {
        Ok(()) => {
            if !reply.is_empty() {
                replies.push(reply);
            }
            0
        }
        Err(e) => e,
    }
}

/// Runs `requests` in namespace `namespace` as another program would,
/// on a socket of its own: their errnos (0: done).
pub(crate) fn foreign(s: &mut State, namespace: &str, requests: &[Request]) -> Vec<i32> {
    let Some(family) = s.family else {
        return vec![libc::ENOENT; requests.len()];
    };
    let mut out = Vec::new();
    let mut replies = Vec::new();
    let mut errnos = Vec::with_capacity(requests.len());
    for r in requests {
        out.clear();
        crate::request::encode(&mut out, family, 0, NLM_F_REQUEST | NLM_F_ACK, r);
        let errno = match Messages(&out).next() {
            Some(m) => match check(s, &m) {
                Ok((family, command)) => doit(s, namespace, 0, &m, family, command, &mut replies),
                Err(e) => e,
            },
            None => libc::EINVAL,
        };
        errnos.push(errno);
    }
    errnos
}
