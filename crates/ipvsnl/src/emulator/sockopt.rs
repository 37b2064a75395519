//! The older interface, the IPVS socket options (`getsockopt` on an IPv4
//! socket), as `do_ip_vs_get_ctl` answers the calls the library makes:
//! `IP_VS_SO_GET_INFO`, `..._GET_SERVICES` (every IPv4 service, in the
//! dump's order, one snapshot) and `..._GET_DESTS` (an IPv4 service's
//! destinations of its own family, newest first), and `..._GET_TIMEOUT`.
//! The structures are the uapi's, laid out as on x86-64.

use ipvsnl_wire::sockopt::{
    SockoptInfo, SockoptServices, DESTS_HEADER_SIZE, DEST_ENTRY_SIZE, IP_VS_BASE_CTL,
    IP_VS_SO_GET_DESTS, IP_VS_SO_GET_INFO, IP_VS_SO_GET_SERVICES, SERVICE_ENTRY_SIZE,
};

use super::encode::HASHED;
use super::kernel::Kernel;
use super::table::{NsTable, SvcId, AF_INET};
use crate::Stats;

/// `IP_VS_SO_GET_TIMEOUT`.
const GET_TIMEOUT: i32 = IP_VS_BASE_CTL + 6;
/// `IP_VS_CONN_F_NOOUTPUT` and `IP_VS_CONN_F_INACTIVE`, which the kernel
/// keeps in a destination's connection flags beside its forwarding.
const NOOUTPUT: u32 = 0x80;
const INACTIVE: u32 = 0x100;

/// One namespace's socket-option calls.
#[derive(Debug)]
pub(crate) struct SockoptPort {
    kernel: Kernel,
    namespace: String,
}

fn put(buf: &mut [u8], at: usize, v: &[u8]) {
    if let Some(dst) = buf.get_mut(at..at + v.len()) {
        dst.copy_from_slice(v);
    }
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    buf.get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_ne_bytes)
}

/// `struct ip_vs_stats_user` at `at`.
fn stats(buf: &mut [u8], at: usize, s: &Stats) {
    for (i, v) in [s.conns, s.in_packets, s.out_packets].iter().enumerate() {
        put(buf, at + 4 * i, &(*v as u32).to_ne_bytes());
    }
    put(buf, at + 16, &s.in_bytes.to_ne_bytes());
    put(buf, at + 24, &s.out_bytes.to_ne_bytes());
    for (i, v) in [s.cps, s.in_pps, s.out_pps, s.in_bps, s.out_bps]
        .iter()
        .enumerate()
    {
        put(buf, at + 32 + 4 * i, &(*v as u32).to_ne_bytes());
    }
}

impl SockoptPort {
    /// The calls of namespace `namespace` of `kernel`.
    pub(crate) fn new(kernel: &Kernel, namespace: &str) -> Self {
        SockoptPort {
            kernel: kernel.clone(),
            namespace: namespace.to_string(),
        }
    }

    /// One `getsockopt` of `option` with `buf` (argument and reply): the
    /// errno of a refusal.
    pub(crate) fn get(&self, option: i32, buf: &mut [u8]) -> Result<(), i32> {
        let mut s = self.kernel.lock();
        if s.family.is_none() {
            // Not registered while the module is not loaded.
            return Err(libc::ENOPROTOOPT);
        }
        if !s.privileged {
            return Err(libc::EPERM);
        }
        let conn_tab_size = s.conn_tab_size;
        let ns = s.ns(&self.namespace);
        match option {
            IP_VS_SO_GET_INFO => {
                if buf.len() < SockoptInfo::SIZE {
                    return Err(libc::EINVAL);
                }
                put(buf, 0, &0x0001_0201u32.to_ne_bytes());
                put(buf, 4, &conn_tab_size.to_ne_bytes());
                // Every service, IPv6 ones too.
                put(buf, 8, &(ns.iter().count() as u32).to_ne_bytes());
                Ok(())
            }
            IP_VS_SO_GET_SERVICES => services(ns, buf),
            IP_VS_SO_GET_DESTS => dests(ns, buf),
            GET_TIMEOUT => {
                if buf.len() < 12 {
                    return Err(libc::EINVAL);
                }
                let t = ns.times;
                put(buf, 0, &t.tcp.to_ne_bytes());
                put(buf, 4, &t.tcp_fin.to_ne_bytes());
                put(buf, 8, &t.udp.to_ne_bytes());
                Ok(())
            }
            // The version text and the daemons are not emulated; anything
            // outside the range is the kernel's EINVAL.
            _ => Err(libc::EINVAL),
        }
    }
}

/// `IP_VS_SO_GET_SERVICES`: the argument's length must be exactly that of
/// its count of entries.
fn services(ns: &NsTable, buf: &mut [u8]) -> Result<(), i32> {
    let header = SockoptServices::HEADER_SIZE;
    if buf.len() < header {
        return Err(libc::EINVAL);
    }
    let room = u32_at(buf, 0) as usize;
    if buf.len() != header + room * SERVICE_ENTRY_SIZE {
        return Err(libc::EINVAL);
    }
    let ipv4 = ns.iter().filter(|svc| svc.id.af == AF_INET).take(room);
    for (i, svc) in ipv4.enumerate() {
        let at = header + i * SERVICE_ENTRY_SIZE;
        put(buf, at, &svc.id.protocol.to_ne_bytes());
        put(buf, at + 4, &svc.id.addr[..4]);
        put(buf, at + 8, &svc.id.port.to_be_bytes());
        put(buf, at + 12, &svc.id.fwmark.to_ne_bytes());
        let mut name = [0u8; 16];
        let sched = &svc.sched.as_bytes()[..svc.sched.len().min(15)];
        name[..sched.len()].copy_from_slice(sched);
        put(buf, at + 16, &name);
        put(buf, at + 32, &(svc.flags | HASHED).to_ne_bytes());
        put(buf, at + 36, &svc.timeout.to_ne_bytes());
        put(buf, at + 40, &svc.netmask);
        put(buf, at + 44, &(svc.dests.len() as u32).to_ne_bytes());
        stats(buf, at + 48, &svc.stats);
    }
    Ok(())
}

/// `IP_VS_SO_GET_DESTS`: `ESRCH` for a service that is not there.
fn dests(ns: &NsTable, buf: &mut [u8]) -> Result<(), i32> {
    if buf.len() < DESTS_HEADER_SIZE {
        return Err(libc::EINVAL);
    }
    let room = u32_at(buf, 16) as usize;
    if buf.len() != DESTS_HEADER_SIZE + room * DEST_ENTRY_SIZE {
        return Err(libc::EINVAL);
    }
    let fwmark = u32_at(buf, 12);
    let id = if fwmark != 0 {
        SvcId {
            af: AF_INET,
            protocol: libc::IPPROTO_TCP as u16,
            addr: [0; 16],
            port: 0,
            fwmark,
        }
    } else {
        let mut addr = [0u8; 16];
        addr[..4].copy_from_slice(&buf[4..8]);
        SvcId {
            af: AF_INET,
            protocol: u16::from_ne_bytes([buf[0], buf[1]]),
            addr,
            port: u16::from_be_bytes([buf[8], buf[9]]),
            fwmark: 0,
        }
    };
    let svc = ns.get(&id).ok_or(libc::ESRCH)?;
    let own = svc
        .dests
        .iter()
        .rev()
        .filter(|d| d.af == AF_INET)
        .take(room);
    for (i, d) in own.enumerate() {
        let at = DESTS_HEADER_SIZE + i * DEST_ENTRY_SIZE;
        let mut flags = d.fwd | INACTIVE;
        if d.fwd != 0 {
            flags |= NOOUTPUT;
        }
        put(buf, at, &d.addr[..4]);
        put(buf, at + 4, &d.port.to_be_bytes());
        put(buf, at + 8, &flags.to_ne_bytes());
        put(buf, at + 12, &d.weight.to_ne_bytes());
        put(buf, at + 16, &d.u_thresh.to_ne_bytes());
        put(buf, at + 20, &d.l_thresh.to_ne_bytes());
        put(buf, at + 24, &d.active.to_ne_bytes());
        put(buf, at + 28, &d.inactive.to_ne_bytes());
        put(buf, at + 32, &d.persistent.to_ne_bytes());
        stats(buf, at + 40, &d.stats);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::{Request, Service, ServiceKey};

    #[test]
    fn the_calls_answer_as_the_kernel_does() {
        let k = Kernel::new();
        let v4 = ServiceKey::tcp([10, 0, 0, 1].into(), 80);
        let v6 = ServiceKey::tcp("2001:db8::1".parse().unwrap(), 80);
        let requests = [
            Request::add_service(Service::new(v4)),
            Request::add_service(Service::new(v6)),
        ];
        assert_eq!(k.init_netns().apply(&requests), [0, 0]);
        let port = SockoptPort::new(&k, super::super::INIT_NETNS);
        // GET_INFO counts the IPv6 service too.
        let mut info = [0u8; 12];
        port.get(IP_VS_SO_GET_INFO, &mut info).unwrap();
        assert_eq!(u32_at(&info, 8), 2);
        // GET_SERVICES copies the IPv4 one; a length that is not the
        // count's is EINVAL.
        let mut buf = ipvsnl_wire::sockopt::services_request(2).unwrap();
        port.get(IP_VS_SO_GET_SERVICES, &mut buf).unwrap();
        assert_eq!(SockoptServices::new(&buf).count(), 1);
        buf.pop();
        assert_eq!(port.get(IP_VS_SO_GET_SERVICES, &mut buf), Err(libc::EINVAL));
        // GET_DESTS of a service that is not there is ESRCH.
        let mut dests = vec![0u8; DESTS_HEADER_SIZE];
        dests[0] = libc::IPPROTO_TCP as u8;
        dests[4..8].copy_from_slice(&[10, 0, 0, 9]);
        assert_eq!(port.get(IP_VS_SO_GET_DESTS, &mut dests), Err(libc::ESRCH));
        // Without the module the options are not registered.
        k.unload_module();
        assert_eq!(
            port.get(IP_VS_SO_GET_INFO, &mut info),
            Err(libc::ENOPROTOOPT)
        );
    }

    #[test]
    fn the_layouts_are_the_wire_crates() {
        // The offsets above add up to the uapi structures' sizes.
        assert_eq!(SERVICE_ENTRY_SIZE, 48 + 56);
        assert_eq!(DEST_ENTRY_SIZE, 40 + 56);
        assert_eq!(DESTS_HEADER_SIZE, 24);
        assert_eq!(SockoptServices::HEADER_SIZE, 8);
    }
}
