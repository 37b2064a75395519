//! The commands that do something at once (`doit`), as
//! `ip_vs_genl_set_cmd`, `ip_vs_genl_set_daemon` and `ip_vs_genl_get_cmd`
//! do them: the same checks in the same order, the same errnos, the same
//! effect on the table. A get writes its reply into `out`.

use ipvsnl_wire::*;

use super::attrs::Table;
use super::encode;
use super::parse::{self, UDest};
use super::table::{zero, Daemon, Dest, NsTable, Svc, SvcId, AF_INET, AF_INET6};
use crate::Stats;

/// The schedulers the emulated kernel can load (Debian's, all modules).
pub(crate) const SCHEDULERS: [&str; 14] = [
    "rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq", "fo", "ovf", "mh", "twos",
];
/// The persistence engines it can load.
pub(crate) const ENGINES: [&str; 1] = ["sip"];

/// What a reply is addressed with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Addr {
    pub(crate) family: u16,
    pub(crate) seq: u32,
    pub(crate) pid: u32,
}

/// Runs command `cmd` (a `doit`) with its top-level attributes `top`.
pub(crate) fn run(
    ns: &mut NsTable,
    cmd: IpvsCommand,
    top: &Table<'_>,
    to: Addr,
    conn_tab_size: u32,
    out: &mut Vec<u8>,
) -> Result<(), i32> {
    use IpvsCommand::*;
    match cmd {
        Flush => {
            ns.flush();
            Ok(())
        }
        SetConfig => set_config(ns, top),
        Zero if !top.has(IPVS_CMD_ATTR_SERVICE) => {
            ns.zero_all();
            Ok(())
        }
        NewService | SetService | DelService | NewDest | SetDest | DelDest | Zero => {
            set_cmd(ns, cmd, top)
        }
        NewDaemon => new_daemon(ns, top),
        DelDaemon => del_daemon(ns, top),
        GetService => {
            let (id, _) = parse::service(top.get(IPVS_CMD_ATTR_SERVICE), false)?;
            let svc = ns.get(&id).ok_or(libc::ESRCH)?;
            encode::service(out, to.family, 0, to.seq, to.pid, svc);
            Ok(())
        }
        GetInfo => {
            encode::info(out, to.family, to.seq, to.pid, conn_tab_size);
            Ok(())
        }
        GetConfig => {
            encode::config(out, to.family, to.seq, to.pid, &ns.times);
            Ok(())
        }
        _ => Err(libc::EOPNOTSUPP),
    }
}

fn set_config(ns: &mut NsTable, top: &Table<'_>) -> Result<(), i32> {
    let mut t = ns.times;
    let given = |k, v: &mut u32| {
        if let Some(x) = top.u32(k) {
            *v = x;
        }
    };
    let (mut tcp, mut fin, mut udp) = (t.tcp, t.tcp_fin, t.udp);
    given(IPVS_CMD_ATTR_TIMEOUT_TCP, &mut tcp);
    given(IPVS_CMD_ATTR_TIMEOUT_TCP_FIN, &mut fin);
    given(IPVS_CMD_ATTR_TIMEOUT_UDP, &mut udp);
    // Read as ints, at most INT_MAX / HZ (Debian's HZ is 250).
    const MAX: u32 = i32::MAX as u32 / 250;
    if [tcp, fin, udp].iter().any(|&v| v > MAX) {
        return Err(libc::EINVAL);
    }
    for (new, old) in [(tcp, &mut t.tcp), (fin, &mut t.tcp_fin), (udp, &mut t.udp)] {
        if new != 0 {
            *old = new;
        }
    }
    ns.times = t;
    Ok(())
}

fn set_cmd(ns: &mut NsTable, cmd: IpvsCommand, top: &Table<'_>) -> Result<(), i32> {
    use IpvsCommand::*;
    let full = matches!(cmd, NewService | SetService);
    let (id, usvc) = parse::service(top.get(IPVS_CMD_ATTR_SERVICE), full)?;
    let exists = ns.get(&id).is_some();
    if cmd != NewService && !exists {
        return Err(libc::ESRCH);
    }
    let mut udest = None;
    if matches!(cmd, NewDest | SetDest | DelDest) {
        let mut d = parse::dest(top.get(IPVS_CMD_ATTR_DEST), cmd != DelDest)?;
        if d.af == 0 {
            d.af = id.af;
        }
        if d.af != AF_INET && d.af != AF_INET6 {
            return Err(libc::EAFNOSUPPORT);
        }
        if d.af != id.af && cmd != DelDest {
            let tunnel = d.full.map(|f| f.fwd) == Some(2);
            if ns.daemons.iter().any(Option::is_some) || !tunnel {
                return Err(libc::EINVAL);
            }
        }
        d.addr = SvcId::normalise(d.af, d.addr);
        udest = Some(d);
    }
    match (cmd, usvc, udest) {
        (NewService, _, _) if exists => Err(libc::EEXIST),
        (NewService, Some(u), _) => {
            let flags = u.flags & u.mask & !encode::HASHED;
            check_service(&id, &u)?;
            ns.insert(Svc {
                id,
                sched: u.sched,
                flags,
                timeout: u.timeout,
                netmask: u.netmask,
                pe: u.pe,
                stats: Stats::default(),
                dests: Vec::new(),
            });
            Ok(())
        }
        (SetService, Some(u), _) => {
            check_service(&id, &u)?;
            let svc = ns.get_mut(&id).ok_or(libc::ESRCH)?;
            svc.flags = ((svc.flags & !u.mask) | (u.flags & u.mask)) & !encode::HASHED;
            svc.sched = u.sched;
            svc.timeout = u.timeout;
            svc.netmask = u.netmask;
            svc.pe = u.pe;
            Ok(())
        }
        (DelService, _, _) => ns.remove(&id).map(drop).ok_or(libc::ESRCH),
        (Zero, _, _) => ns.get_mut(&id).map(zero).ok_or(libc::ESRCH),
        (NewDest, _, Some(d)) => add_dest(ns, &id, d),
        (SetDest, _, Some(d)) => edit_dest(ns, &id, d),
        (DelDest, _, Some(d)) => {
            let svc = ns.get_mut(&id).ok_or(libc::ESRCH)?;
            let at = find(svc, &d).ok_or(libc::ENOENT)?;
            let gone = svc.dests.remove(at);
            if gone.af != id.af {
                ns.mixed_dests -= 1;
            }
            Ok(())
        }
        _ => Err(libc::EINVAL),
    }
}

/// The checks of `ip_vs_add_service` / `ip_vs_edit_service`.
fn check_service(id: &SvcId, u: &parse::FullService) -> Result<(), i32> {
    if u.sched != "none" && !SCHEDULERS.contains(&u.sched.as_str()) {
        return Err(libc::ENOENT);
    }
    if let Some(pe) = &u.pe {
        if !ENGINES.contains(&pe.as_str()) {
            return Err(libc::ENOENT);
        }
    }
    if id.af == AF_INET6 {
        let plen = u32::from_ne_bytes(u.netmask);
        if !(1..=128).contains(&plen) {
            return Err(libc::EINVAL);
        }
    }
    Ok(())
}

fn find(svc: &Svc, d: &UDest) -> Option<usize> {
    svc.dests
        .iter()
        .position(|x| x.af == d.af && x.addr == d.addr && x.port == d.port)
}

/// The checks every add and edit of a destination makes first.
fn check_dest(f: &parse::FullDest) -> Result<(), i32> {
    if f.weight < 0 || f.l_thresh > f.u_thresh {
        return Err(libc::ERANGE);
    }
    // Thresholds above INT_MAX (the lower one can be so only with the
    // upper): EINVAL, after the ERANGE checks (measured on 6.1 and 6.12,
    // tests/emulator/bad_input.rs).
    if f.u_thresh > i32::MAX as u32 {
        return Err(libc::EINVAL);
    }
    if f.tun_type == 1 && f.tun_port == 0 {
        return Err(libc::EINVAL);
    }
    Ok(())
}

fn add_dest(ns: &mut NsTable, id: &SvcId, d: UDest) -> Result<(), i32> {
    let f = d.full.ok_or(libc::EINVAL)?;
    check_dest(&f)?;
    let routable = address_ok(ns, &d);
    let svc = ns.get_mut(id).ok_or(libc::ESRCH)?;
    if find(svc, &d).is_some() {
        return Err(libc::EEXIST);
    }
    if !routable {
        return Err(libc::EINVAL);
    }
    svc.dests.push(Dest {
        af: d.af,
        addr: d.addr,
        port: d.port,
        fwd: f.fwd,
        weight: f.weight,
        u_thresh: f.u_thresh,
        l_thresh: f.l_thresh,
        tun_type: f.tun_type,
        tun_port: f.tun_port,
        tun_flags: f.tun_flags,
        active: 0,
        inactive: 0,
        persistent: 0,
        stats: Stats::default(),
    });
    if d.af != id.af {
        ns.mixed_dests += 1;
    }
    Ok(())
}

/// `ip_vs_new_dest`'s address check: IPv4 unicast or local (none at all
/// while the namespace has no local routes), IPv6 unicast and not
/// link-local (this model has no local link-local addresses).
fn address_ok(ns: &NsTable, d: &UDest) -> bool {
    if d.af == AF_INET {
        let a = [d.addr[0], d.addr[1], d.addr[2], d.addr[3]];
        let ip = std::net::Ipv4Addr::from(a);
        let zeronet = a[0] == 0;
        let loopback_broadcast = ip == std::net::Ipv4Addr::new(127, 255, 255, 255);
        ns.loopback_up
            && !zeronet
            && !ip.is_broadcast()
            && !ip.is_multicast()
            && !loopback_broadcast
    } else {
        let ip = std::net::Ipv6Addr::from(d.addr);
        let link_local = (ip.segments()[0] & 0xffc0) == 0xfe80;
        !ip.is_unspecified() && !ip.is_multicast() && !link_local
    }
}

fn edit_dest(ns: &mut NsTable, id: &SvcId, d: UDest) -> Result<(), i32> {
    let f = d.full.ok_or(libc::EINVAL)?;
    check_dest(&f)?;
    let svc = ns.get_mut(id).ok_or(libc::ESRCH)?;
    let at = find(svc, &d).ok_or(libc::ENOENT)?;
    let x = &mut svc.dests[at];
    x.fwd = f.fwd;
    x.weight = f.weight;
    x.u_thresh = f.u_thresh;
    x.l_thresh = f.l_thresh;
    x.tun_type = f.tun_type;
    x.tun_port = f.tun_port;
    x.tun_flags = f.tun_flags;
    Ok(())
}

fn new_daemon(ns: &mut NsTable, top: &Table<'_>) -> Result<(), i32> {
    let a = parse::daemon(top.get(IPVS_CMD_ATTR_DAEMON))?;
    let (Some(state), Some(ifname), Some(sync_id)) = (
        a.u32(IPVS_DAEMON_ATTR_STATE),
        a.string(IPVS_DAEMON_ATTR_MCAST_IFN),
        a.u32(IPVS_DAEMON_ATTR_SYNC_ID),
    ) else {
        return Err(libc::EINVAL);
    };
    let mut group_af = 0;
    let mut group = [0u8; 16];
    if a.has(IPVS_DAEMON_ATTR_MCAST_GROUP) {
        group_af = AF_INET;
        group[..4].copy_from_slice(&a.bytes::<4>(IPVS_DAEMON_ATTR_MCAST_GROUP));
        if !std::net::Ipv4Addr::from(a.bytes::<4>(IPVS_DAEMON_ATTR_MCAST_GROUP)).is_multicast() {
            return Err(libc::EINVAL);
        }
    } else if a.has(IPVS_DAEMON_ATTR_MCAST_GROUP6) {
        group_af = AF_INET6;
        group = a.bytes::<16>(IPVS_DAEMON_ATTR_MCAST_GROUP6);
        if !parse::is_multicast6(&group) {
            return Err(libc::EINVAL);
        }
    }
    if ns.mixed_dests > 0 {
        return Err(libc::EINVAL);
    }
    let slot = match state {
        1 => 0,
        2 => 1,
        _ => return Err(libc::EINVAL),
    };
    if ns.daemons[slot].is_some() {
        return Err(libc::EEXIST);
    }
    let mtu = *ns.links.get(&ifname).ok_or(libc::ENODEV)?;
    if group_af == 0 {
        group_af = AF_INET;
        group[..4].copy_from_slice(&[224, 0, 0, 81]);
    }
    let headers = if group_af == AF_INET6 { 48 } else { 28 };
    let most = mtu.saturating_sub(headers).min(u32::from(u16::MAX)) as u16;
    let max_len = match a.u16(IPVS_DAEMON_ATTR_SYNC_MAXLEN).unwrap_or(0) {
        0 => most,
        n => n.clamp(1536u16.saturating_sub(headers as u16).min(most), most),
    };
    ns.daemons[slot] = Some(Daemon {
        state,
        ifname,
        sync_id,
        max_len,
        group_af,
        group,
        port: a
            .u16(IPVS_DAEMON_ATTR_MCAST_PORT)
            .filter(|&p| p != 0)
            .unwrap_or(8848),
        ttl: a
            .u8(IPVS_DAEMON_ATTR_MCAST_TTL)
            .filter(|&t| t != 0)
            .unwrap_or(1),
    });
    ns.generation += 1;
    Ok(())
}

fn del_daemon(ns: &mut NsTable, top: &Table<'_>) -> Result<(), i32> {
    let a = parse::daemon(top.get(IPVS_CMD_ATTR_DAEMON))?;
    let slot = match a.u32(IPVS_DAEMON_ATTR_STATE).ok_or(libc::EINVAL)? {
        1 => 0,
        2 => 1,
        _ => return Err(libc::EINVAL),
    };
    ns.daemons[slot].take().map(drop).ok_or(libc::ESRCH)?;
    ns.generation += 1;
    Ok(())
}
