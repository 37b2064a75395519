//! Building the request (or listing) a checked command line stands for,
//! with ipvsadm's last checks that need the whole entry.

use ipvsnl::{
    AddressFamily, Destination, Forward, Netmask, Request, Scheduler, Service, ServiceFlags,
    SyncDaemon, Tunnel, TunnelFlags, TunnelKind,
};

use std::net::Ipv4Addr;

use super::checks::check_tunnel;
use super::command::{ArgError, Command, ListWhat};
use super::entry::*;
use super::options::*;
use super::values::parse_sched_flags;

pub(super) fn netmask_of(e: &Entry) -> Netmask {
    match e.af {
        AddressFamily::Inet6 => Netmask::V6(u8::try_from(e.netmask).unwrap_or(u8::MAX)),
        // The grammar only sets Inet or Inet6.
        _ => Netmask::V4(Ipv4Addr::from(e.netmask)),
    }
}

pub(super) fn finish(mut e: Entry<'_>) -> Result<Command, ArgError> {
    match e.cmd {
        Cmd::Add | Cmd::Edit => {
            if e.fwmark == 0 && e.port == 0 && e.flags & ServiceFlags::PERSISTENT.bits() == 0 {
                return Err(ArgError::fail(
                    "Zero port specified for non-persistent service",
                ));
            }
            if e.flags & ServiceFlags::ONE_PACKET.bits() != 0 && e.fwmark == 0 && e.protocol != 17 {
                return Err(ArgError::fail(
                    "One-Packet Scheduling is only for UDP virtual services",
                ));
            }
            if e.sched.is_empty() {
                e.sched = "wlc";
            }
            if let Some(arg) = e.sched_flags {
                e.flags |= parse_sched_flags(e.sched, arg)?;
            }
            let scheduler = scheduler_of(e.sched)?;
            let mut svc = Service::new(e.key());
            svc.scheduler = scheduler;
            svc.flags = ServiceFlags::from_bits_retain(e.flags);
            svc.timeout = e.timeout;
            svc.netmask = netmask_of(&e);
            svc.persistence_engine = if e.pe.is_empty() {
                None
            } else {
                Some(e.pe.to_owned())
            };
            Ok(Command::Apply(if e.cmd == Cmd::Add {
                Request::add_service(svc)
            } else {
                Request::edit_service(svc)
            }))
        }
        Cmd::AddDest | Cmd::EditDest => {
            if e.fwmark == 0 && (e.conn_flags == FWD_TUNNEL || e.conn_flags == FWD_DROUTE) {
                e.dest_port = e.port;
            }
            if e.dest_af != e.af && e.conn_flags != FWD_TUNNEL {
                return Err(ArgError::fail(
                    "Different address family is allowed only for tunneling servers",
                ));
            }
            let tun_opts = [TUN_TYPE, TUN_PORT, TUN_NOCSUM, TUN_CSUM, TUN_REMCSUM];
            if tun_opts.iter().any(|&o| e.has(o)) && e.conn_flags != FWD_TUNNEL {
                return Err(ArgError::fail(
                    "Tunnel options conflict with forward method",
                ));
            }
            check_tunnel(&e)?;
            let forward = match e.conn_flags {
                FWD_MASQ => Forward::Masquerade,
                FWD_TUNNEL => {
                    let mut tunnel = Tunnel::default();
                    tunnel.kind = TunnelKind::from_raw(e.tun_type);
                    tunnel.port = e.tun_port;
                    tunnel.flags = TunnelFlags::from_bits_retain(e.tun_flags);
                    Forward::Tunnel(tunnel)
                }
                _ => Forward::Route,
            };
            let d = Destination::new(e.dest_addr, e.dest_port)
                .with_forward(forward)
                .with_weight(e.weight)
                .with_thresholds(e.u_threshold, e.l_threshold);
            Ok(Command::Apply(if e.cmd == Cmd::AddDest {
                Request::AddDestination(e.key(), d)
            } else {
                Request::EditDestination(e.key(), d)
            }))
        }
        Cmd::DelDest => Ok(Command::Apply(Request::DeleteDestination(
            e.key(),
            e.dest_addr,
            e.dest_port,
        ))),
        Cmd::Del => Ok(Command::Apply(Request::DeleteService(e.key()))),
        Cmd::Flush => Ok(Command::Apply(Request::Flush)),
        Cmd::Zero => Ok(Command::Apply(Request::Zero(
            e.has(SERVICE).then(|| e.key()),
        ))),
        Cmd::Timeout => Ok(Command::Apply(Request::SetTimeouts(e.timeouts))),
        Cmd::StartDaemon => {
            let ifn = if e.mcast_ifn.is_empty() {
                "eth0".to_owned()
            } else {
                e.mcast_ifn.to_owned()
            };
            let mut d = SyncDaemon::new(e.role, ifn).with_sync_id(e.syncid);
            d.max_len = (e.sync_maxlen != 0).then_some(e.sync_maxlen);
            d.group = e.mcast_group;
            d.port = (e.mcast_port != 0).then_some(e.mcast_port);
            d.ttl = (e.mcast_ttl != 0).then_some(e.mcast_ttl);
            Ok(Command::Apply(Request::StartDaemon(d)))
        }
        Cmd::StopDaemon => Ok(Command::Apply(Request::StopDaemon(e.role))),
        Cmd::List => {
            let conflict = (e.has(CONNECTION) || e.has(TIMEOUT) || e.has(DAEMON))
                && (e.has(STATS) || e.has(RATE) || e.has(THRESHOLDS))
                || (e.has(TIMEOUT) || e.has(DAEMON)) && e.has(PERSISTENTCONN);
            if conflict {
                return Err(ArgError::fail("options conflicts in the list command"));
            }
            let what = if e.has(CONNECTION) {
                ListWhat::Connections
            } else if e.has(SERVICE) {
                ListWhat::Service(e.key())
            } else if e.has(TIMEOUT) {
                ListWhat::Timeouts
            } else if e.has(DAEMON) {
                ListWhat::Daemons
            } else {
                ListWhat::All
            };
            Ok(Command::List(what, e.format))
        }
        Cmd::Restore => Ok(Command::Restore),
        Cmd::Save => Ok(Command::Save(e.format)),
    }
}

/// The scheduler named on the command line, for the kernel to judge as
/// ipvsadm leaves it to the kernel. The library's [`Scheduler::new`]
/// refuses white space in a name (which argv can hold, a rules line never)
/// and anything but printable ASCII, where ipvsadm sends it and the kernel
/// answers ENOENT, after its checks that the service does (`-E`) or does
/// not (`-A`) exist. To keep that order and those answers, each such
/// character is sent as `/`: a name no kernel module can have, so the
/// kernel does not know it either. The name is at most 15 bytes and never
/// empty here (and a `/` is no longer than the character it stands for),
/// so nothing else is refused.
fn scheduler_of(name: &str) -> Result<Scheduler, ArgError> {
    if name.bytes().all(|b| b.is_ascii_graphic()) {
        return Scheduler::new(name).map_err(|e| ArgError::fail(format!("{e}")));
    }
    let unknowable: String = name
        .chars()
        .map(|c| if c.is_ascii_graphic() { c } else { '/' })
        .collect();
    Scheduler::new(&unknowable).map_err(|e| ArgError::fail(format!("{e}")))
}
