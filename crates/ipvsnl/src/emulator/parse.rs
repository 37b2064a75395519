//! The request nests as `ip_vs_genl_parse_service`, `..._parse_dest` and
//! the daemon commands read them: which attributes are required, what is
//! `EINVAL` or `EAFNOSUPPORT`, what is ignored.

use ipvsnl_wire::*;

use super::attrs::{self, Table};
use super::table::{SvcId, AF_INET, AF_INET6};

/// What a full service nest (`NEW_SERVICE`, `SET_SERVICE`) adds to the
/// identifying fields.
#[derive(Debug, Clone)]
pub(crate) struct FullService {
    pub(crate) sched: String,
    pub(crate) pe: Option<String>,
    pub(crate) flags: u32,
    pub(crate) mask: u32,
    pub(crate) timeout: u32,
    pub(crate) netmask: [u8; 4],
}

/// A service nest: its identity, and the rest if `full` was asked.
pub(crate) fn service(
    nest: Option<&[u8]>,
    full: bool,
) -> Result<(SvcId, Option<FullService>), i32> {
    let nest = nest.ok_or(libc::EINVAL)?;
    let a = attrs::parse(nest, &attrs::SERVICE).map_err(|_| libc::EINVAL)?;
    let has_key = a.has(IPVS_SVC_ATTR_FWMARK)
        || (a.has(IPVS_SVC_ATTR_PORT)
            && a.has(IPVS_SVC_ATTR_PROTOCOL)
            && a.has(IPVS_SVC_ATTR_ADDR));
    let af = a.u16(IPVS_SVC_ATTR_AF);
    let (Some(af), true) = (af, has_key) else {
        return Err(libc::EINVAL);
    };
    if af != AF_INET && af != AF_INET6 {
        return Err(libc::EAFNOSUPPORT);
    }
    let id = match a.u32(IPVS_SVC_ATTR_FWMARK) {
        // A mark of 0 is a TCP service at address 0, port 0.
        Some(fwmark) => SvcId {
            af,
            protocol: libc::IPPROTO_TCP as u16,
            addr: [0; 16],
            port: 0,
            fwmark,
        },
        None => SvcId {
            af,
            protocol: a.u16(IPVS_SVC_ATTR_PROTOCOL).unwrap_or(0),
            addr: SvcId::normalise(af, a.bytes::<16>(IPVS_SVC_ATTR_ADDR)),
            port: a.be16(IPVS_SVC_ATTR_PORT).unwrap_or(0),
            fwmark: 0,
        },
    };
    if !full {
        return Ok((id, None));
    }
    full_service(&a).map(|f| (id, Some(f)))
}

fn full_service(a: &Table<'_>) -> Result<FullService, i32> {
    let required = [
        IPVS_SVC_ATTR_SCHED_NAME,
        IPVS_SVC_ATTR_FLAGS,
        IPVS_SVC_ATTR_TIMEOUT,
        IPVS_SVC_ATTR_NETMASK,
    ];
    if !required.iter().all(|&k| a.has(k)) {
        return Err(libc::EINVAL);
    }
    let flags = a.bytes::<8>(IPVS_SVC_ATTR_FLAGS);
    Ok(FullService {
        sched: a.string(IPVS_SVC_ATTR_SCHED_NAME).unwrap_or_default(),
        pe: a.string(IPVS_SVC_ATTR_PE_NAME).filter(|s| !s.is_empty()),
        flags: u32::from_ne_bytes(flags[..4].try_into().unwrap_or_default()),
        mask: u32::from_ne_bytes(flags[4..].try_into().unwrap_or_default()),
        timeout: a.u32(IPVS_SVC_ATTR_TIMEOUT).unwrap_or(0),
        netmask: a.bytes::<4>(IPVS_SVC_ATTR_NETMASK),
    })
}

/// A destination nest.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UDest {
    /// 0: absent (the service's family).
    pub(crate) af: u16,
    pub(crate) addr: [u8; 16],
    pub(crate) port: u16,
    pub(crate) full: Option<FullDest>,
}

/// What a full destination nest adds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FullDest {
    pub(crate) fwd: u32,
    pub(crate) weight: i32,
    pub(crate) u_thresh: u32,
    pub(crate) l_thresh: u32,
    pub(crate) tun_type: u8,
    pub(crate) tun_port: u16,
    pub(crate) tun_flags: u16,
}

/// A destination nest, the rest of it if `full`.
pub(crate) fn dest(nest: Option<&[u8]>, full: bool) -> Result<UDest, i32> {
    let nest = nest.ok_or(libc::EINVAL)?;
    let a = attrs::parse(nest, &attrs::DEST).map_err(|_| libc::EINVAL)?;
    if !(a.has(IPVS_DEST_ATTR_ADDR) && a.has(IPVS_DEST_ATTR_PORT)) {
        return Err(libc::EINVAL);
    }
    let mut d = UDest {
        af: a.u16(IPVS_DEST_ATTR_ADDR_FAMILY).unwrap_or(0),
        addr: a.bytes::<16>(IPVS_DEST_ATTR_ADDR),
        port: a.be16(IPVS_DEST_ATTR_PORT).unwrap_or(0),
        full: None,
    };
    if full {
        let required = [
            IPVS_DEST_ATTR_FWD_METHOD,
            IPVS_DEST_ATTR_WEIGHT,
            IPVS_DEST_ATTR_U_THRESH,
            IPVS_DEST_ATTR_L_THRESH,
        ];
        if !required.iter().all(|&k| a.has(k)) {
            return Err(libc::EINVAL);
        }
        d.full = Some(FullDest {
            fwd: a.u32(IPVS_DEST_ATTR_FWD_METHOD).unwrap_or(0) & 0x7,
            weight: a.u32(IPVS_DEST_ATTR_WEIGHT).unwrap_or(0) as i32,
            u_thresh: a.u32(IPVS_DEST_ATTR_U_THRESH).unwrap_or(0),
            l_thresh: a.u32(IPVS_DEST_ATTR_L_THRESH).unwrap_or(0),
            tun_type: a.u8(IPVS_DEST_ATTR_TUN_TYPE).unwrap_or(0),
            tun_port: a.be16(IPVS_DEST_ATTR_TUN_PORT).unwrap_or(0),
            tun_flags: a.u16(IPVS_DEST_ATTR_TUN_FLAGS).unwrap_or(0),
        });
    }
    Ok(d)
}

/// A daemon nest (`NEW_DAEMON`, `DEL_DAEMON`): its attributes, checked.
pub(crate) fn daemon(nest: Option<&[u8]>) -> Result<Table<'_>, i32> {
    let nest = nest.ok_or(libc::EINVAL)?;
    attrs::parse(nest, &attrs::DAEMON).map_err(|_| libc::EINVAL)
}

/// Whether an IPv6 address is multicast (`ff00::/8`).
pub(crate) fn is_multicast6(a: &[u8; 16]) -> bool {
    a[0] == 0xff
}
