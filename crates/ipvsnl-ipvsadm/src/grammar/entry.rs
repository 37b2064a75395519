//! ipvsadm's command entry: everything the options of one command line
//! set, with ipvsadm's defaults, before the request is built from it.

use std::net::{IpAddr, Ipv4Addr};

use ipvsnl::{AddressFamily, DaemonRole, Protocol, ServiceKey, Timeouts};

use super::command::{ArgError, ListFormat};
use super::options::{Cmd, OPT_NAMES};

/// ipvsadm's command entry while options are read, field for field.
pub(super) struct Entry<'a> {
    pub(super) cmd: Cmd,
    pub(super) options: u64,
    // service
    pub(super) af: AddressFamily,
    pub(super) protocol: u16,
    pub(super) addr: IpAddr,
    pub(super) port: u16,
    pub(super) fwmark: u32,
    pub(super) sched: &'a str,
    pub(super) flags: u32,
    pub(super) timeout: u32,
    /// The netmask as ipvsadm keeps it: the IPv4 mask, or an IPv6 prefix
    /// length stored in the same 32 bits.
    pub(super) netmask: u32,
    pub(super) pe: &'a str,
    pub(super) sched_flags: Option<&'a str>,
    // destination
    pub(super) dest_af: AddressFamily,
    pub(super) dest_addr: IpAddr,
    pub(super) dest_port: u16,
    pub(super) conn_flags: u32,
    pub(super) weight: u32,
    pub(super) u_threshold: u32,
    pub(super) l_threshold: u32,
    pub(super) tun_type: u8,
    pub(super) tun_port: u16,
    pub(super) tun_flags: u16,
    // daemon
    pub(super) role: DaemonRole,
    pub(super) mcast_ifn: &'a str,
    pub(super) syncid: u32,
    pub(super) mcast_group: Option<IpAddr>,
    pub(super) mcast_port: u16,
    pub(super) mcast_ttl: u8,
    pub(super) sync_maxlen: u16,
    pub(super) format: ListFormat,
    pub(super) timeouts: Timeouts,
}

pub(super) const FWD_MASQ: u32 = 0;
pub(super) const FWD_TUNNEL: u32 = 2;
pub(super) const FWD_DROUTE: u32 = 3;

impl Entry<'_> {
    pub(super) fn new(cmd: Cmd) -> Self {
        Entry {
            cmd,
            options: 0,
            af: AddressFamily::Inet,
            protocol: 0,
            addr: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port: 0,
            fwmark: 0,
            sched: "",
            flags: 0,
            timeout: 0,
            netmask: 0xffff_ffff,
            pe: "",
            sched_flags: None,
            dest_af: AddressFamily::Inet,
            dest_addr: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            dest_port: 0,
            conn_flags: FWD_DROUTE,
            weight: 1,
            u_threshold: 0,
            l_threshold: 0,
            tun_type: 0,
            tun_port: 0,
            tun_flags: 0,
            role: DaemonRole::Master,
            mcast_ifn: "",
            syncid: 0,
            mcast_group: None,
            mcast_port: 0,
            mcast_ttl: 0,
            sync_maxlen: 0,
            format: ListFormat::default(),
            timeouts: Timeouts::default(),
        }
    }

    pub(super) fn set_option(&mut self, opt: usize) -> Result<(), ArgError> {
        if self.options & (1 << opt) != 0 {
            return Err(ArgError::fail(format!(
                "multiple '{}' options specified",
                OPT_NAMES[opt]
            )));
        }
        self.options |= 1 << opt;
        Ok(())
    }

    pub(super) fn has(&self, opt: usize) -> bool {
        self.options & (1 << opt) != 0
    }

    pub(super) fn key(&self) -> ServiceKey {
        if self.fwmark != 0 {
            ServiceKey::Fwmark {
                mark: self.fwmark,
                family: self.af,
            }
        } else {
            ServiceKey::Inet {
                protocol: Protocol::from_raw(self.protocol),
                addr: self.addr,
                port: self.port,
            }
        }
    }
}
