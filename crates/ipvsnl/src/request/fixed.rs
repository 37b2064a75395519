//! The fixed-size attributes of a request, written into a
//! [`FixedAttrs`]: the one list of attributes both encoders (the owned
//! message and the direct bytes) are made of.

use std::net::IpAddr;

use ipvsnl_wire::{
    FlagsMask, IPVS_CMD_ATTR_SERVICE, IPVS_DEST_ATTR_ADDR, IPVS_DEST_ATTR_ADDR_FAMILY,
    IPVS_DEST_ATTR_FWD_METHOD, IPVS_DEST_ATTR_L_THRESH, IPVS_DEST_ATTR_PORT,
    IPVS_DEST_ATTR_TUN_FLAGS, IPVS_DEST_ATTR_TUN_PORT, IPVS_DEST_ATTR_TUN_TYPE,
    IPVS_DEST_ATTR_U_THRESH, IPVS_DEST_ATTR_WEIGHT, IPVS_SVC_ATTR_ADDR, IPVS_SVC_ATTR_AF,
    IPVS_SVC_ATTR_FLAGS, IPVS_SVC_ATTR_FWMARK, IPVS_SVC_ATTR_NETMASK, IPVS_SVC_ATTR_PORT,
    IPVS_SVC_ATTR_PROTOCOL, IPVS_SVC_ATTR_TIMEOUT,
};

use crate::fixed_attrs::FixedAttrs;
use crate::{AddressFamily, Destination, Service, ServiceFlags, ServiceKey};

/// The 16-byte address union.
pub(crate) fn addr_bytes(addr: &IpAddr) -> [u8; 16] {
    let mut out = [0u8; 16];
    match addr {
        IpAddr::V4(a) => out[..4].copy_from_slice(&a.octets()),
        IpAddr::V6(a) => out = a.octets(),
    }
    out
}

/// The flags of a service as sent: all of them replaced, "hashed" never
/// set (the kernel's own mark).
pub(super) fn service_flags(s: &Service) -> FlagsMask {
    FlagsMask::replace((s.flags - ServiceFlags::HASHED).bits())
}

/// The most bytes of a service key nest: its header, the family, the
/// protocol, a 16-byte address and the port.
pub(super) const KEY_NEST_MAX: usize = 4 + 8 + 8 + 20 + 8;
/// The most bytes of a destination nest: its header, a 16-byte address and
/// nine attributes of at most 4 bytes.
pub(super) const DEST_NEST_MAX: usize = 4 + 20 + 9 * 8;
/// A service's flags (8 bytes), timeout and netmask.
pub(super) const SETTINGS_MAX: usize = 12 + 8 + 8;

/// Writes the key nest of a service.
#[inline(always)]
pub(super) fn fixed_key_nest<const N: usize>(k: &ServiceKey, f: &mut FixedAttrs<N>) {
    let nest = f.begin_nest(IPVS_CMD_ATTR_SERVICE);
    fixed_key(k, f);
    f.end_nest(nest);
}

/// Writes the identifying attributes of a service.
#[inline(always)]
pub(super) fn fixed_key<const N: usize>(k: &ServiceKey, f: &mut FixedAttrs<N>) {
    match *k {
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => {
            f.put(
                IPVS_SVC_ATTR_AF,
                AddressFamily::of(&addr).to_raw().to_ne_bytes(),
            );
            f.put(IPVS_SVC_ATTR_PROTOCOL, protocol.to_raw().to_ne_bytes());
            f.put(IPVS_SVC_ATTR_ADDR, addr_bytes(&addr));
            f.put(IPVS_SVC_ATTR_PORT, port.to_be_bytes());
        }
        ServiceKey::Fwmark { mark, family } => {
            f.put(IPVS_SVC_ATTR_AF, family.to_raw().to_ne_bytes());
            f.put(IPVS_SVC_ATTR_FWMARK, mark.to_ne_bytes());
        }
    }
}

/// Writes a service's settings after its names: flags, timeout, netmask.
#[inline(always)]
pub(super) fn fixed_settings<const N: usize>(s: &Service, f: &mut FixedAttrs<N>) {
    let flags = service_flags(s);
    let mut both = [0u8; 8];
    both[..4].copy_from_slice(&flags.flags.to_ne_bytes());
    both[4..].copy_from_slice(&flags.mask.to_ne_bytes());
    f.put(IPVS_SVC_ATTR_FLAGS, both);
    f.put(IPVS_SVC_ATTR_TIMEOUT, s.timeout.to_ne_bytes());
    f.put(IPVS_SVC_ATTR_NETMASK, s.netmask.to_wire());
}

/// Writes every attribute of a destination.
#[inline(always)]
pub(super) fn fixed_dest<const N: usize>(d: &Destination, f: &mut FixedAttrs<N>) {
    let tunnel = d.forward.tunnel().copied().unwrap_or_default();
    f.put(
        IPVS_DEST_ATTR_ADDR_FAMILY,
        d.family().to_raw().to_ne_bytes(),
    );
    f.put(IPVS_DEST_ATTR_ADDR, addr_bytes(&d.addr));
    f.put(IPVS_DEST_ATTR_PORT, d.port.to_be_bytes());
    f.put(IPVS_DEST_ATTR_FWD_METHOD, d.forward.to_raw().to_ne_bytes());
    f.put(IPVS_DEST_ATTR_WEIGHT, d.weight.to_ne_bytes());
    f.put(IPVS_DEST_ATTR_TUN_TYPE, [tunnel.kind.to_raw()]);
    f.put(IPVS_DEST_ATTR_TUN_PORT, tunnel.port.to_be_bytes());
    f.put(IPVS_DEST_ATTR_TUN_FLAGS, tunnel.flags.bits().to_ne_bytes());
    f.put(IPVS_DEST_ATTR_U_THRESH, d.upper_threshold.to_ne_bytes());
    f.put(IPVS_DEST_ATTR_L_THRESH, d.lower_threshold.to_ne_bytes());
}

/// Writes the attributes that identify a destination of a service.
#[inline(always)]
pub(super) fn fixed_dest_id<const N: usize>(addr: &IpAddr, port: u16, f: &mut FixedAttrs<N>) {
    f.put(
        IPVS_DEST_ATTR_ADDR_FAMILY,
        AddressFamily::of(addr).to_raw().to_ne_bytes(),
    );
    f.put(IPVS_DEST_ATTR_ADDR, addr_bytes(addr));
    f.put(IPVS_DEST_ATTR_PORT, port.to_be_bytes());
}
